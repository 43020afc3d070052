"""The request log: one JSON line per request at INFO, with no prompt, key or query."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from modelplug.contract.types import Cost, Usage
from modelplug_gateway.request_log import log_request, request_line


def test_the_line_has_the_fields_and_cuts_the_query(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="modelplug.gateway.requests")
    log_request(
        method="POST",
        path="/v1/chat/completions?key=mpk-secret",
        status=200,
        key_name="alice",
        route="anthropic/claude-sonnet-4-6",
        usage=Usage(input=12, output=34, cache_read=5),
        cost=Cost(amount=Decimal("0.0123"), source="test"),
        latency_ms=812.34567,
        overhead_ms=0.41234,
        when=1_800_000_000.25,
    )
    (record,) = caplog.records
    assert record.levelno == logging.INFO and "\n" not in record.getMessage()
    line = json.loads(record.getMessage())
    assert line == {
        "time": "2027-01-15T08:00:00.250Z",
        "key": "alice",
        "method": "POST",
        "path": "/v1/chat/completions",
        "route": "anthropic/claude-sonnet-4-6",
        "status": 200,
        "input_tokens": 17,
        "output_tokens": 34,
        "cost_usd": "0.0123",
        "latency_ms": 812.346,
        "overhead_ms": 0.412,
    }
    assert "mpk-" not in caplog.text


def test_a_refused_request_has_no_tokens_or_cost() -> None:
    line = json.loads(
        request_line(
            path="/v1/messages",
            status=401,
            key_name=None,
            route=None,
            usage=None,
            cost=None,
            latency_ms=0.2,
            overhead_ms=None,
        )
    )
    assert (line["status"], line["key"], line["input_tokens"], line["cost_usd"]) == (
        401,
        None,
        None,
        None,
    )


# -- the server's own handler ------------------------------------------------------

FIELDS: dict[str, object] = {
    "path": "/v1/chat/completions",
    "status": 401,
    "key_name": None,
    "route": None,
    "usage": None,
    "cost": None,
    "latency_ms": 0.1,
    "overhead_ms": None,
}


def alone() -> None:
    """Only the server's handler on the logger: pytest attaches its capture handlers to
    a logger that does not propagate, when each test phase starts."""
    from modelplug_gateway.request_log import LOGGER, LineHandler

    LOGGER.handlers[:] = [h for h in LOGGER.handlers if type(h) is LineHandler]


@pytest.fixture
def server_log() -> Iterator[io.StringIO]:
    """log_on()'s setup, its handler writing to a string; the logger as it was after."""
    from modelplug_gateway.request_log import LOGGER, LineHandler, log_on

    saved = (LOGGER.handlers[:], LOGGER.level, LOGGER.propagate)
    LOGGER.handlers.clear()
    LOGGER.setLevel(logging.NOTSET)
    try:
        log_on()
        (handler,) = LOGGER.handlers
        assert type(handler) is LineHandler
        out = io.StringIO()
        handler.setStream(out)
        yield out
    finally:
        LOGGER.handlers[:], LOGGER.propagate = saved[0], saved[2]
        LOGGER.setLevel(saved[1])


def test_the_servers_handler_writes_a_turns_lines_at_once_in_order(
    server_log: io.StringIO,
) -> None:
    from modelplug_gateway.request_log import LOGGER

    alone()

    async def turn() -> list[str]:
        log_request(**{**FIELDS, "status": 401})
        log_request(**{**FIELDS, "status": 429})
        held = server_log.getvalue()
        await asyncio.sleep(0)  # the end of this turn of the loop
        after_turn = server_log.getvalue()
        log_request(**{**FIELDS, "status": 404})
        LOGGER.warning("a record through logging comes after the lines before it")
        return [held, after_turn, server_log.getvalue()]

    held, after_turn, last = asyncio.run(turn())
    assert held == ""  # one write for the turn, not one per line
    assert [json.loads(line)["status"] for line in after_turn.splitlines()] == [401, 429]
    lines = last.splitlines()
    assert [json.loads(line)["status"] for line in lines[:3]] == [401, 429, 404]
    assert lines[3] == "a record through logging comes after the lines before it"


def test_outside_an_event_loop_the_line_is_written_at_once(server_log: io.StringIO) -> None:
    alone()
    log_request(**FIELDS)
    assert json.loads(server_log.getvalue())["status"] == 401


def test_an_operators_handler_still_gets_a_record_per_line(
    server_log: io.StringIO, caplog: pytest.LogCaptureFixture
) -> None:
    from modelplug_gateway.request_log import LOGGER

    alone()
    LOGGER.addHandler(caplog.handler)
    try:
        log_request(**FIELDS)
    finally:
        LOGGER.removeHandler(caplog.handler)
    (record,) = caplog.records
    assert json.loads(record.getMessage())["status"] == 401
    assert json.loads(server_log.getvalue())["status"] == 401


# -- what the running gateway logs ---------------------------------------------------


def test_every_request_has_its_line_unserved_paths_and_the_model_list_too(
    make_gateway: Any, serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import httpx2
    from modelplug import ErrorClass, ModelError
    from modelplug.testing import FakeModel

    caplog.set_level(logging.INFO, logger="modelplug.gateway.requests")
    upstream_failed = ModelError(
        "server error 500", error_class=ErrorClass.transient("server error 500", status=500)
    )
    hello = [{"role": "user", "content": "hi"}]
    with serve(make_gateway(FakeModel([upstream_failed]))) as url:
        statuses = [
            httpx2.post(url + "/v1/completions?trace=1", json={"model": "echo", "prompt": "hi"}),
            httpx2.head(url + "/api/tags"),
            httpx2.get(url + "/v1/models"),
            httpx2.get(url + "/v1/chat/completions"),
            httpx2.post(url + "/v1/chat/completions", json={"model": "fake/m", "messages": hello}),
            httpx2.post(url + "/v1/chat/completions", json={"model": "echo", "messages": hello}),
            httpx2.get(url + "/health"),
        ]
    assert [r.status_code for r in statuses] == [404, 404, 200, 405, 502, 200, 200]
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name.endswith("requests")]
    assert [(x["method"], x["path"], x["status"], x["route"]) for x in lines] == [
        ("POST", "/v1/completions", 404, None),
        ("HEAD", "/api/tags", 404, None),
        ("GET", "/v1/models", 200, None),
        ("GET", "/v1/chat/completions", 405, None),
        ("POST", "/v1/chat/completions", 502, "fake/m"),  # reached the upstream: named
        ("POST", "/v1/chat/completions", 200, "echo/echo"),
    ]  # and none for the probes' /health
    assert all(x["latency_ms"] >= 0 for x in lines)
