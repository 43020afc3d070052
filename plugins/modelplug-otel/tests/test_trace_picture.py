"""The README's trace picture comes from a real run: docs/make_trace_picture.py's
scenario (a 429, a retry, a 503, a fallback, over a loopback socket) makes the spans
it draws, and the drawing has a row for each of them."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

SCRIPT = Path(__file__).parent.parent / "docs" / "make_trace_picture.py"


@pytest.fixture(scope="module")
def picture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_trace_picture", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_scenario_is_one_trace_of_a_call_and_its_three_attempts(
    picture: Any, spans: Any
) -> None:
    run = picture.scenario(spans)

    assert run.text == "Sockets wait in silence — café ☕"
    assert run.paths == [
        "/primary/v1/chat/completions",
        "/primary/v1/chat/completions",
        "/backup/v1/chat/completions",
    ]
    assert len({s.context.trace_id for s in run.spans}) == 1
    (call,) = [s for s in run.spans if s.kind is SpanKind.CLIENT]
    assert call.parent is None and call.name == "chat gpt-4o"
    attempts = sorted((s for s in run.spans if s is not call), key=lambda s: s.start_time)
    assert [s.name for s in attempts] == [
        "attempt 1 primary/gpt-4o",
        "attempt 2 primary/gpt-4o",
        "attempt 3 backup/gpt-4o-mini",
    ]
    for attempt in attempts:
        assert attempt.parent.span_id == call.context.span_id
        assert call.start_time <= attempt.start_time <= attempt.end_time <= call.end_time
    limited, overloaded, answered = attempts
    assert limited.attributes["error.type"] == "rate_limit"
    assert limited.attributes["modelplug.error.status"] == 429
    assert overloaded.attributes["modelplug.error.status"] == 503
    assert limited.status.status_code is overloaded.status.status_code is StatusCode.ERROR
    assert "error.type" not in answered.attributes
    # The model the recorded answer names, and the route that gave it.
    assert answered.attributes["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert call.attributes["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert call.attributes["modelplug.route"] == "backup/gpt-4o-mini"
    assert call.attributes["modelplug.attempt"] == 3
    (wait,) = [e for e in call.events if e.name == "retry wait"]
    assert wait.attributes["modelplug.wait.seconds"] == picture.WAIT_MS / 1000
    assert limited.end_time <= wait.timestamp <= overloaded.start_time
    (fallback,) = [e for e in call.events if e.name == "fallback"]
    assert fallback.attributes["modelplug.to"] == "backup/gpt-4o-mini"
    assert overloaded.end_time <= fallback.timestamp <= answered.start_time
    assert any("rate limited (429)" in said for said in run.notices)


def test_the_rows_put_each_span_on_one_timeline(picture: Any, spans: Any) -> None:
    run = picture.scenario(spans)

    rows = picture.rows(run.spans)

    assert [(r.name, r.kind, r.depth) for r in rows] == [
        ("chat gpt-4o", "CLIENT", 0),
        ("attempt 1 primary/gpt-4o", "INTERNAL", 1),
        ("attempt 2 primary/gpt-4o", "INTERNAL", 1),
        ("attempt 3 backup/gpt-4o-mini", "INTERNAL", 1),
    ]
    call, limited, overloaded, answered = rows
    assert call.start_ms == 0.0 and call.end_ms == max(r.end_ms for r in rows)
    assert limited.end_ms <= overloaded.start_ms <= overloaded.end_ms <= answered.start_ms
    assert [r.failed for r in rows] == [False, True, True, False]
    assert limited.facts == ("error.type=rate_limit", "HTTP 429")
    assert answered.facts == ("gen_ai.response.model=gpt-4o-mini-2024-07-18",)
    assert "modelplug.route=backup/gpt-4o-mini" in call.facts
    wait, fallback = call.marks
    assert wait.label == f"retry wait {picture.WAIT_MS} ms"
    assert wait.length_ms == picture.WAIT_MS
    assert limited.end_ms <= wait.start_ms <= overloaded.start_ms
    assert fallback.label == "fallback to backup/gpt-4o-mini" and fallback.length_ms == 0
    assert overloaded.end_ms <= fallback.start_ms <= answered.start_ms


def test_the_svg_has_a_row_for_each_span_placed_by_its_start(picture: Any, spans: Any) -> None:
    rows = picture.rows(picture.scenario(spans).spans)

    drawn = picture.svg(rows, "A title & more", "a note")

    root = ET.fromstring(drawn)  # well-formed: the title's "&" is escaped
    ns = {"svg": "http://www.w3.org/2000/svg"}
    groups = root.findall("svg:g[@class='row']", ns)
    assert [g.get("data-span") for g in groups] == [r.name for r in rows]
    bars = [float(g.findall("svg:rect", ns)[0].get("x", "nan")) for g in groups]
    assert bars[0] == bars[1] == picture.LEFT  # the call and attempt 1 start together
    assert bars[1] < bars[2] < bars[3] < picture.RIGHT
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "A title & more" in texts
    assert any("error.type=rate_limit" in t and "HTTP 429" in t for t in texts)
    assert f"retry wait {picture.WAIT_MS} ms" in texts
    assert "fallback to backup/gpt-4o-mini" in texts
