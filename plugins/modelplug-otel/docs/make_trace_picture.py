"""Draw the plugin's picture of a trace with a retry and a fallback from a real run:
``docs/plugins/otel-trace.svg`` of the repository (the plugin's docs page shows it, and
its README links to it there), or the file named on the command line.

One modelplug call goes to ``primary/gpt-4o`` on a loopback HTTP server (127.0.0.1, a
real socket: the test kit's WireServer). The server answers 429 with a short
``retry-after-ms``, modelplug-fallback waits it out and retries, the server answers 503,
and the policy falls back to ``backup/gpt-4o-mini``, which streams a recorded OpenAI
Chat Completions answer. modelplug-otel's spans go to the SDK's InMemorySpanExporter;
:func:`rows` turns them into one row per span and :func:`svg` draws the rows as a
waterfall, in plain SVG text.

    python plugins/modelplug-otel/docs/make_trace_picture.py [out.svg]

Needs the plugin's test extra (opentelemetry-sdk, modelplug-fallback,
modelplug-openai-compat). tests/test_trace_picture.py runs the same scenario.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

HERE = Path(__file__).resolve().parent
RECORDING = HERE.parent / "tests" / "recordings" / "openai_text.sse"
PRIMARY = "primary/gpt-4o"
BACKUP = "backup/gpt-4o-mini"
WAIT_MS = 60  # the 429's retry-after-ms: long enough to see, short enough for a test
# OpenAI's error object (API reference, "Error codes"); the messages are invented.
RATE_LIMITED = {
    "error": {
        "message": "Rate limit reached for gpt-4o on requests per min (RPM)",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
OVERLOADED = {
    "error": {
        "message": "The server is overloaded, please try again later",
        "type": "server_error",
        "param": None,
        "code": None,
    }
}


@dataclass
class Run:
    """What one run of the scenario left: the call's finished spans (one trace), the
    answer's text, the policy's notices and the paths the server was asked, in order."""

    spans: list[ReadableSpan]
    text: str
    notices: list[str]
    paths: list[str]


def scenario(finished: Callable[[], Sequence[ReadableSpan]]) -> Run:
    """Make the call (see the module) and return its spans.

    :param finished: the spans finished so far (an InMemorySpanExporter's
        ``get_finished_spans``): the SDK is the caller's, set up before, as a program
        sets up its own. The call is made twice, and only the second one's spans are
        returned: the first pays for what a process does once (imports, the HTTP
        clients, the connections), which the picture is not about.
    """
    import modelplug_openai_compat
    import modelplug_otel
    from modelplug import Client
    from modelplug.contract.types import Event, Notice
    from modelplug_fallback.policy import FallbackPolicy
    from modelplug_kit import MemoryCooldowns
    from modelplug_kit.testing import WireServer

    def chat(model: str) -> str:
        return f"/{model.split('/')[0]}/v1/chat/completions"

    said: list[str] = []

    def on_event(event: Event) -> None:
        if isinstance(event, Notice):
            said.append(event.message)

    def call(client: Client, server: WireServer) -> str:
        server.add_json(
            RATE_LIMITED, status=429, headers={"retry-after-ms": str(WAIT_MS)}, path=chat(PRIMARY)
        )
        server.add_json(OVERLOADED, status=503, path=chat(PRIMARY))
        server.add_file(RECORDING, path=chat(BACKUP))
        return client.complete(PRIMARY, "Say something about sockets", on_event=on_event).text

    with WireServer() as server, tempfile.TemporaryDirectory() as home:
        settings = Path(home) / "config.toml"
        settings.touch()  # no user settings: the run depends on nothing outside it
        config = {
            "providers": {
                name: {"type": "openai-compatible", "base_url": f"{server.url}/{name}/v1"}
                for name in ("primary", "backup")
            },
            "fallbacks": {PRIMARY: [BACKUP]},
        }
        cooldowns = MemoryCooldowns()
        policy = FallbackPolicy({"retries": 1}, store=cooldowns)
        # The policy registers first: otel's wrapper, registered after, is the outer one.
        client = Client(
            plugins=[policy, modelplug_otel, modelplug_openai_compat],
            entry_points=False,
            config=config,
            user_config=settings,
            project_dir=home,
            environ={},
        )
        try:
            call(client, server)
            # The warm-up left primary/gpt-4o cooling down: the second call would not
            # try it at all.
            cooldowns.reset()
            before, warm_up = len(finished()), len(said)
            text = call(client, server)
        finally:
            client.close()
        paths = [r.path for r in server.requests[3:]]
    return Run(list(finished())[before:], text, said[warm_up:], paths)


# -- spans to rows ---------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """An event on a span's row: a stretch (a retry's wait) or a point (a fallback)."""

    label: str
    start_ms: float
    length_ms: float = 0.0


@dataclass(frozen=True)
class Row:
    """One span, placed on the run's timeline (milliseconds from the first start)."""

    name: str
    kind: str
    depth: int
    start_ms: float
    end_ms: float
    failed: bool
    facts: tuple[str, ...]
    marks: tuple[Mark, ...] = ()

    @property
    def duration_ms(self) -> float:
        return self.end_ms - self.start_ms


# The attributes a row shows, in this order; the others are in the exporter's output.
FACTS = (
    "error.type",
    "modelplug.error.status",
    "gen_ai.response.model",
    "modelplug.route",
    "modelplug.attempt",
)


def _facts(span: ReadableSpan) -> tuple[str, ...]:
    attributes = span.attributes or {}
    shown = []
    for key in FACTS:
        if key not in attributes:
            continue
        if key in ("modelplug.route", "modelplug.attempt") and span.kind.name != "CLIENT":
            continue  # an attempt's name already says its number and route
        value = str(attributes[key])
        shown.append(f"HTTP {value}" if key == "modelplug.error.status" else f"{key}={value}")
    return tuple(shown)


def _marks(span: ReadableSpan, ms: Callable[[int], float]) -> tuple[Mark, ...]:
    marks = []
    for event in span.events:
        attributes = event.attributes or {}
        at = ms(event.timestamp)
        if event.name == "retry wait":
            seconds = float(attributes.get("modelplug.wait.seconds", 0.0))  # type: ignore[arg-type]
            marks.append(Mark(f"retry wait {seconds * 1000:.0f} ms", at, seconds * 1000))
        elif event.name == "fallback":
            marks.append(Mark(f"fallback to {attributes.get('modelplug.to')}", at))
        else:
            marks.append(Mark(event.name, at))
    return tuple(marks)


def rows(spans: Sequence[ReadableSpan]) -> list[Row]:
    """One row per span: parents before their children, siblings by start time, times
    in milliseconds from the earliest start."""
    if not spans:
        return []
    origin = min(s.start_time or 0 for s in spans)

    def ms(ns: int | None) -> float:
        return ((ns or origin) - origin) / 1e6

    ids = {s.context.span_id for s in spans if s.context is not None}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in ids else None, []).append(span)
    out: list[Row] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: s.start_time or 0):
            out.append(
                Row(
                    name=span.name,
                    kind=span.kind.name,
                    depth=depth,
                    start_ms=ms(span.start_time),
                    end_ms=ms(span.end_time),
                    failed=span.status.status_code.name == "ERROR",
                    facts=_facts(span),
                    marks=_marks(span, ms),
                )
            )
            if span.context is not None:
                walk(span.context.span_id, depth + 1)

    walk(None, 0)
    return out


# -- rows to SVG -----------------------------------------------------------------------

WIDTH = 1000
LABELS = 24  # x of the span names
LEFT, RIGHT = 330, 930  # the timeline
TOP = 78  # y of the first row
ROW = 52
LINE = 18  # the extra height of a row for each further line of facts, and each mark
CHARS = 96  # about what a line of 12 px text holds from the timeline's left edge
COLOURS = {"CLIENT": "#3b6fb6", "ok": "#3f9142", "failed": "#c8402f", "wait": "#9aa3ad"}
LEGEND = (
    ("CLIENT", "the call (CLIENT span)"),
    ("ok", "attempt answered"),
    ("failed", "attempt failed"),
    ("wait", "retry wait (an event on the call)"),
)
HATCH = (
    '<defs><pattern id="wait" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="6" height="6" fill="#eef0f2"/>'
    f'<rect width="3" height="6" fill="{COLOURS["wait"]}"/></pattern></defs>'
)


def _step(total: float) -> float:
    """A round tick step giving at most eight ticks over ``total`` milliseconds."""
    step = 1.0
    while total / step > 8:
        for factor in (2, 2.5, 2):
            step *= factor
            if total / step <= 8:
                break
    return step


def _lines(items: Sequence[str], chars: int = CHARS) -> list[str]:
    """``items`` joined with dots, a new line before one that would pass ``chars``."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 5 + len(item) <= chars:
            lines[-1] += "  ·  " + item
        else:
            lines.append(item)
    return lines


def _text(x: float, y: float, text: str, **attributes: Any) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attributes.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(text)}</text>'


@dataclass(frozen=True)
class _Axis:
    """Milliseconds to x, and how far down the rows reach (for the grid and the
    fallback's line)."""

    total: float
    bottom: float

    def x(self, ms: float) -> float:
        return LEFT + ms * (RIGHT - LEFT) / self.total

    def width(self, ms: float) -> float:
        return max(self.x(ms) - LEFT, 2.0)  # a span too short to see is still a sliver


def _grid(axis: _Axis) -> list[str]:
    parts = []
    step = _step(axis.total)
    tick = 0.0
    while tick <= axis.total + 1e-9:
        at = axis.x(tick)
        parts.append(
            f'<line x1="{at:.1f}" y1="{TOP - 14}" x2="{at:.1f}" y2="{axis.bottom}" '
            'stroke="#e3e6ea"/>'
        )
        parts.append(
            _text(at, TOP - 20, f"{tick:g} ms", text_anchor="middle", fill="#667", font_size="11")
        )
        tick += step
    return parts


def _mark(mark: Mark, y: float, label_y: float, axis: _Axis) -> list[str]:
    """A wait as a hatched stretch over the bar, a point as a dashed line down the rows;
    the label on its own line."""
    at = axis.x(mark.start_ms)
    if mark.length_ms:
        return [
            f'<rect x="{at:.1f}" y="{y + 6}" width="{axis.width(mark.length_ms):.1f}" '
            f'height="16" fill="url(#wait)" stroke="{COLOURS["wait"]}"/>',
            _text(
                axis.x(mark.start_ms + mark.length_ms / 2), label_y, mark.label,
                text_anchor="middle", fill="#444", font_size="12", font_style="italic",
            ),
        ]  # fmt: skip
    late = at > (LEFT + RIGHT) / 2
    return [
        f'<line x1="{at:.1f}" y1="{y + 2}" x2="{at:.1f}" y2="{axis.bottom}" stroke="#444" '
        'stroke-dasharray="4 3"/>',
        _text(
            at - 4 if late else at + 4, label_y, mark.label, text_anchor="end" if late else "start",
            fill="#444", font_size="12", font_style="italic",
        ),
    ]  # fmt: skip


def _row(row: Row, lines: Sequence[str], y: float, axis: _Axis) -> list[str]:
    """One span: its name and kind, its bar, its facts under the bar, its marks."""
    indent = LABELS + 18 * row.depth
    colour = COLOURS["failed"] if row.failed else COLOURS.get(row.kind, COLOURS["ok"])
    start, width = axis.x(row.start_ms), axis.width(row.duration_ms)
    parts = [
        f'<g class="row" data-span="{escape(row.name)}">',
        _text(indent, y + 18, row.name, font_weight="bold", fill="#222"),
        _text(indent, y + 35, f"{row.kind} span", fill="#667", font_size="11"),
        f'<rect x="{start:.1f}" y="{y + 6}" width="{width:.1f}" height="16" rx="2" '
        f'fill="{colour}"><title>{escape(row.name)}: {row.duration_ms:.1f} ms</title></rect>',
    ]
    # Past the middle the facts would run off the right edge: they end at the bar instead.
    late = start > (LEFT + RIGHT) / 2
    anchor, at = ("end", start + width) if late else ("start", start)
    for number, line in enumerate(lines):
        parts.append(
            _text(at, y + 38 + LINE * number, line, text_anchor=anchor, fill="#333", font_size="12")
        )
    for number, mark in enumerate(row.marks):
        parts += _mark(mark, y, y + 56 + LINE * (len(lines) - 1 + number), axis)
    parts.append("</g>")
    return parts


def _legend(y: float) -> list[str]:
    parts = []
    x = LABELS
    for key, label in LEGEND:
        fill = "url(#wait)" if key == "wait" else COLOURS[key]
        parts.append(f'<rect x="{x}" y="{y}" width="14" height="12" fill="{fill}"/>')
        parts.append(_text(x + 20, y + 11, label, fill="#333", font_size="12"))
        x += 30 + 7 * len(label)
    return parts


def svg(rows: Sequence[Row], title: str, note: str) -> str:
    """The rows as a waterfall: a name column, a bar per span on a millisecond axis,
    the shown attributes under each bar, the marks (waits, fallbacks) on their row; the
    ``note`` (its lines) under the legend."""
    facts = [_lines((f"{r.duration_ms:.1f} ms", *r.facts)) for r in rows]
    heights = [ROW + LINE * (len(f) - 1 + len(r.marks)) for r, f in zip(rows, facts, strict=True)]
    bottom = TOP + sum(heights)
    axis = _Axis(max((r.end_ms for r in rows), default=0.0) or 1.0, bottom)
    height = bottom + 41 + 15 * len(note.splitlines())
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif" '
        'font-size="13">',
        HATCH,
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        _text(LABELS, 28, title, font_size="16", font_weight="bold", fill="#222"),
        *_grid(axis),
    ]
    y = TOP
    for row, lines, row_height in zip(rows, facts, heights, strict=True):
        parts += _row(row, lines, y, axis)
        y += row_height
    parts += _legend(bottom + 14)
    for number, line in enumerate(note.splitlines()):
        parts.append(_text(LABELS, bottom + 46 + 15 * number, line, fill="#667", font_size="11"))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv: list[str]) -> int:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    # The picture lives in the site's docs folder, which an sdist of the plugin lacks.
    out = Path(argv[0]) if argv else HERE.parents[2] / "docs" / "plugins" / "otel-trace.svg"
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    run = scenario(exporter.get_finished_spans)
    drawn = rows(run.spans)
    note = (
        "A real run: modelplug-otel and modelplug-fallback, a loopback HTTP server on "
        "127.0.0.1 serving recorded OpenAI-compatible bytes.\nDurations as measured, after "
        "one warm-up run of the same call; the wait is what the 429's retry-after-ms asked."
    )
    out.write_text(svg(drawn, f"One call to {PRIMARY}: a 429, a retry, a fallback", note))
    for message in run.notices:
        print(f"notice: {message}")
    for row in drawn:
        print(f"{row.name:32} {row.start_ms:7.1f} ms +{row.duration_ms:6.1f} ms  {row.facts}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
