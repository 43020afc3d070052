"""modelplug_probe: the models endpoint's token limits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import modelplug_gemini
import pytest
from modelplug import ModelError
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer


def test_modelplug_probe_reads_the_token_limits(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded_json: Callable[[str], Any],
    test_key: str,
) -> None:
    wire_server.add_json(recorded_json("model_gemini-2.5-flash.json"))
    client = gemini_client()
    info = asyncio.run(client.aprobe("gemini/gemini-2.5-flash"))
    assert (info.context_window, info.max_output_tokens) == (1_048_576, 65_536)
    sent = wire_server.requests[0]
    assert (sent.method, sent.path) == ("GET", "/v1beta/models/gemini-2.5-flash")
    assert sent.headers["x-goog-api-key"] == test_key


def test_modelplug_probe_of_an_unknown_model_is_not_found(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    body = {
        "error": {"code": 404, "message": "models/gemini-9 is not found", "status": "NOT_FOUND"}
    }
    wire_server.add(json.dumps(body), status=404, content_type="application/json")
    with pytest.raises(ModelError) as caught:
        asyncio.run(gemini_client().aprobe("gemini/gemini-9"))
    assert caught.value.kind == "not_found"


def test_modelplug_probe_declines_other_types(gemini_client: Callable[..., Client]) -> None:
    client = gemini_client()
    route = client.resolve("gemini/gemini-2.5-flash")
    route.endpoint.type = "vertex"
    assert modelplug_gemini.modelplug_probe(route, client) is None
    route.endpoint.type = "anthropic"
    assert modelplug_gemini.modelplug_probe(route, client) is None
