"""The request log: one JSON line per request at INFO, with no prompt, key or query."""

from __future__ import annotations

import json
import logging
from decimal import Decimal

import pytest
from modelplug.types import Cost, Usage
from modelplug_gateway.request_log import log_request, request_line


def test_the_line_has_the_fields_and_cuts_the_query(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="modelplug.gateway.requests")
    log_request(
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
