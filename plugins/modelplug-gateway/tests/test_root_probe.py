"""``GET /`` and ``HEAD /``: the connectivity probe a client sends before its first call
(Claude Code sends ``HEAD /``, issue 46) answers 200 with the gateway's name, asks no
key, and is not logged or counted as a refused or unserved call."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from modelplug_gateway.auth import OperatorKeyGate


@pytest.fixture(params=["uvicorn", "granian"])
def server(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_head_and_get_of_the_root_answer_200_without_a_key(
    make_gateway: Callable[..., Any], serve: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    app = make_gateway(gate=OperatorKeyGate("sk-operator-key"))
    with caplog.at_level(logging.DEBUG, logger="modelplug.gateway"), serve(app) as url:
        head = httpx2.head(url + "/")
        got = httpx2.get(url + "/")
        probed_with_query = httpx2.head(url + "/?beta=true")
        metrics = httpx2.get(url + "/metrics").text
    assert head.status_code == 200 and head.content == b""
    assert probed_with_query.status_code == 200
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/json"
    assert got.json() == {"name": "modelplug-gateway", "status": "ok"}
    # Not a refused call (401), not an unserved path (404): not logged, not counted.
    assert [r.getMessage() for r in caplog.records] == []
    assert "modelplug_gateway_requests_total{" not in metrics
    assert "modelplug_gateway_unserved_requests_total{" not in metrics
