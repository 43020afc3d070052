"""One JSON line per request, at INFO on the ``modelplug.gateway.requests`` logger: when,
which key (its name), which route, the status, tokens, cost, latency and the gateway's
own overhead. Never the prompt, never the key, never the query string: only what is
passed here, and the path is cut at its ``?``."""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug.types import Cost, Usage

__all__ = ["LOGGER", "log_on", "log_request", "request_line"]

LOGGER = logging.getLogger("modelplug.gateway.requests")


def request_line(
    *,
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
    """The line for one request (``route``: the provider/model that answered)."""
    moment = time.time() if when is None else when
    stamp = (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}Z"
    )
    record = {
        "time": stamp,
        "key": key_name,
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
    return json.dumps(record, separators=(",", ":"))


def log_request(**fields: object) -> None:
    """Log :func:`request_line` at INFO (the line is built only when INFO is on)."""
    if LOGGER.isEnabledFor(logging.INFO):
        # A record made here, not by LOGGER.info: that one walks the stack for the
        # caller's file and line on every request, which no line of this log shows.
        record = LOGGER.makeRecord(
            LOGGER.name,
            logging.INFO,
            __file__,
            0,
            request_line(**fields),  # type: ignore[arg-type]
            (),
            None,
            "log_request",
        )
        LOGGER.handle(record)


def log_on() -> None:
    """The server's default: the lines on stderr at INFO, unless the operator's logging
    setup has already given this logger a handler (or a level of its own)."""
    if LOGGER.handlers or LOGGER.level != logging.NOTSET:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False
