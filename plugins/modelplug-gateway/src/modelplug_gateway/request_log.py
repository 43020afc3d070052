"""One JSON line per request, at INFO on the ``modelplug.gateway.requests`` logger: when,
which key (its name), the method and path, which route, the status, tokens, cost,
latency and the gateway's own overhead. Every path has its line, those the gateway does
not serve too (a 404 or 405), and ``GET /v1/models``; the probes' ``/health``,
``/ready`` and ``/metrics`` have none. Never the prompt, never the key, never the query
string: only what is passed here, and the path is cut at its ``?``.

A line is written for every request, a refused one too, so it must cost little: under
a flood of made-up keys a log record per line was about a quarter of the gateway's
time per refusal (profiled; a record, its formatting, a flush per line). The server's
own handler (:func:`log_on`) takes the lines as they are, with no log record, and writes
those of one turn of the event loop at once; a logging setup of the operator's (another
handler, a filter, propagation) gets a record per line as ever."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug import Cost, Usage

__all__ = ["LOGGER", "LineHandler", "log_on", "log_request", "request_line"]

LOGGER = logging.getLogger("modelplug.gateway.requests")

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps makes one per call
_SECOND: list[tuple[int, str]] = [(-1, "")]  # the last second stamped, and its text


def _stamp(moment: float) -> str:
    second = int(moment)
    last = _SECOND[0]
    if last[0] != second:
        last = _SECOND[0] = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return f"{last[1]}.{int(moment % 1 * 1000):03d}Z"


def request_line(
    *,
    method: str = "POST",
    path: str,
    status: int,
    key_name: str | None,
    route: str | None,
    usage: Usage | None,
    cost: Cost | None,
    latency_ms: float,
    overhead_ms: float | None,
    when: float | None = None,
) -> str:
    """The line for one request (``route``: the provider/model that answered, or that
    failed when the call reached it)."""
    record = {
        "time": _stamp(time.time() if when is None else when),
        "key": key_name,
        "method": method,
        "path": path.partition("?")[0],
        "route": route,
        "status": status,
        "input_tokens": None if usage is None else usage.total_input,
        "output_tokens": None if usage is None else usage.output,
        "cost_usd": None
        if cost is None or cost.currency != "USD"
        else f"{cost.amount.normalize():f}",
        "latency_ms": round(latency_ms, 3),
        "overhead_ms": None if overhead_ms is None else round(overhead_ms, 3),
    }
    return _ENCODE(record)


class LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """:func:`log_on`'s handler: each message on a line of its own, those written in one
    turn of the event loop flushed together at its end (at once outside a loop, and
    before any record that comes through logging, so the order holds)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))
        self._held: list[str] = []

    def line(self, text: str) -> None:
        """Write ``text`` and a newline, flushed at the end of this turn of the loop."""
        with self.lock:  # type: ignore[union-attr]
            held = self._held
            held.append(text)
            if len(held) > 1:
                return  # a flush is already coming
        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:  # no loop in this thread: now
            self.flush()

    def flush(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            held = self._held
            if held:
                self._held = []
                self.stream.write("\n".join(held) + "\n")
            super().flush()

    def emit(self, record: logging.LogRecord) -> None:
        self.flush()
        super().emit(record)


def _direct() -> LineHandler | None:
    # The server's own handler alone, nothing that needs a record: the line goes to it
    # as it is. (Checked on every line: an operator may change the setup at any time.)
    handlers = LOGGER.handlers
    if len(handlers) != 1 or LOGGER.propagate or LOGGER.filters:
        return None
    handler = handlers[0]
    if type(handler) is not LineHandler or handler.filters or handler.level > logging.INFO:
        return None
    return handler


def log_request(**fields: object) -> None:
    """Log :func:`request_line` at INFO (the line is built only when INFO is on)."""
    if not LOGGER.isEnabledFor(logging.INFO):
        return
    line = request_line(**fields)  # type: ignore[arg-type]
    handler = _direct()
    if handler is not None:
        handler.line(line)
        return
    # A record made here, not by LOGGER.info: that one walks the stack for the caller's
    # file and line on every request, which no line of this log shows.
    record = LOGGER.makeRecord(
        LOGGER.name, logging.INFO, __file__, 0, line, (), None, "log_request"
    )
    LOGGER.handle(record)


def log_on() -> None:
    """The server's default: the lines on stderr at INFO, unless the operator's logging
    setup has already given this logger a handler (or a level of its own)."""
    if LOGGER.handlers or LOGGER.level != logging.NOTSET:
        return
    LOGGER.addHandler(LineHandler())
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False
