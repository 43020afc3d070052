"""What the gateway tells: ``GET /key/info`` (a virtual key reads its own budget, in
LiteLLM's shape, which Client.key_budget reads through the same call) and the three
X-Corrallm-*-Ms timing headers on every answer, streamed ones included, with the
upstream's own ``timings`` on the final chunk. Tested with the official openai and
anthropic SDKs on uvicorn; the llama.cpp upstream serves a copy of modelplug-openai-compat's recording
``llamacpp_draft_timings.sse`` (its first line says where its shape comes from)."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from modelplug import Client, NoKeyBudgetError
from modelplug_gateway.key_gate import VirtualKeyGate
from modelplug_gateway.keys import Hasher, KeyRecord, new_key
from modelplug_gateway.keys.sqlite_store import SqliteKeys
from modelplug_kit import MemoryCounters
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
HELLO = [{"role": "user", "content": "hello"}]
TIMING_HEADERS = ("x-corrallm-queued-ms", "x-corrallm-load-ms", "x-corrallm-upstream-ttfb-ms")


@pytest.fixture
def keys(tmp_path: Path) -> Any:
    hasher = Hasher(b"a test secret of sixteen bytes or more")
    store = SqliteKeys(tmp_path / "keys.sqlite3")
    gate = VirtualKeyGate(store, hasher, MemoryCounters())

    def make(name: str, **fields: Any) -> str:
        key = new_key(hasher)
        asyncio.run(store.add(KeyRecord(name=name, hash=hasher.digest(key), **fields)))
        return key

    return gate, make


def through(url: str, key: str | None, tmp_path: Path, *plugins: str) -> Client:
    """A modelplug Client whose provider ``gw`` is the gateway at ``url``."""
    entry: dict[str, Any] = {"type": "openai-compatible", "base_url": url + "/v1"}
    environ = {"MODELPLUG_DATA_DIR": str(tmp_path / "data")}
    if key is not None:
        entry["api_key_env"] = "GW_KEY"
        environ["GW_KEY"] = key
    return Client(
        enable=["modelplug-openai-compat", *plugins],
        config={"providers": {"gw": entry}},
        user_config=tmp_path / "none.toml",
        project_dir="/",
        environ=environ,
    )


def test_a_virtual_key_reads_its_own_budget(
    keys: Any, make_gateway: Any, serve: Any, tmp_path: Path
) -> None:
    gate, make = keys
    key = make("alice", budget=Decimal("5"), period="month")
    with serve(make_gateway(gate=gate)) as url:
        sdk = openai.OpenAI(base_url=url, api_key=key, max_retries=0)
        raw = sdk.get("/key/info", cast_to=object)
        with through(url, key, tmp_path) as client:
            budget = client.key_budget("gw/echo")
    assert isinstance(raw, dict)
    assert raw["served_by"] == "modelplug-gateway" and raw["key"] == "alice"
    assert key not in str(raw)
    assert (budget.source, budget.currency) == ("modelplug-gateway", "USD")
    assert (budget.spend, budget.limit, budget.remaining) == (0, 5, 5)
    assert budget.interval == "month" and budget.reset_at is not None
    assert budget.reset_at.day == 1


def test_a_key_without_a_budget_says_so(
    keys: Any, make_gateway: Any, serve: Any, tmp_path: Path
) -> None:
    gate, make = keys
    key = make("bob")
    with serve(make_gateway(gate=gate)) as url:
        with through(url, key, tmp_path) as client:
            budget = client.key_budget("gw/echo")
        refused = openai.OpenAI(base_url=url, api_key=new_key(gate.hasher), max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            refused.get("/key/info", cast_to=object)
    assert (budget.spend, budget.limit, budget.remaining) == (None, None, None)


def test_an_open_gateway_exposes_no_key_budget(
    make_gateway: Any, serve: Any, tmp_path: Path
) -> None:
    with (
        serve(make_gateway()) as url,
        through(url, None, tmp_path) as client,
        pytest.raises(NoKeyBudgetError),
    ):
        client.key_budget("gw/echo")


def _ms(headers: Any, name: str) -> float:
    value = float(headers[name])
    assert value >= 0
    return value


def test_every_answer_carries_the_three_timing_headers(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway()) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = sdk.chat.completions.with_raw_response.create(model="echo", messages=HELLO)
        streamed = sdk.chat.completions.with_raw_response.create(
            model="echo", messages=HELLO, stream=True
        )
        # The headers are there before the first byte of the stream is read.
        stream_headers = dict(streamed.headers)
        chunks = list(streamed.parse())
    for headers in (plain.headers, stream_headers):
        assert all(name in headers for name in TIMING_HEADERS)
        assert _ms(headers, "x-corrallm-load-ms") == 0
        _ms(headers, "x-corrallm-queued-ms")
        _ms(headers, "x-corrallm-upstream-ttfb-ms")
    body = plain.parse()
    assert body.choices[0].message.content == "hello"
    assert body.model_extra is not None
    assert set(body.model_extra["timings"]) == {"queued_ms", "load_ms", "upstream_ttfb_ms"}
    final = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(final) == 1 and final[0].model_extra is not None
    assert final[0].model_extra["timings"]["load_ms"] == 0


def test_a_llamacpp_upstreams_timings_reach_the_final_chunk_and_a_modelplug_client(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    upstream = Client(
        enable=["modelplug-openai-compat"],
        config={
            "providers": {
                "lab": {
                    "type": "openai-compatible",
                    "base_url": wire_server.url + "/v1",
                    "server": "llamacpp",
                }
            }
        },
        user_config=tmp_path / "none.toml",
        project_dir="/",
        environ={"MODELPLUG_DATA_DIR": str(tmp_path / "up")},
    )
    wire_server.add_file(RECORDINGS / "llamacpp_draft_timings.sse")
    wire_server.add_file(RECORDINGS / "llamacpp_draft_timings.sse")
    with serve(make_gateway(client=upstream)) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        chunks = list(sdk.chat.completions.create(model="lab/qwen3", messages=HELLO, stream=True))
        with through(url, None, tmp_path) as client:
            response = client.complete("gw/lab/qwen3", "hello")
    final = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert final[0].model_extra is not None
    timings = final[0].model_extra["timings"]
    assert (timings["prompt_n"], timings["cache_n"], timings["draft_n_accepted"]) == (18, 12, 365)
    assert response.timings is not None
    assert (response.timings.draft_n, response.timings.predicted_ms) == (514, 1000.0)
    assert response.timings.load_ms == 0 and response.timings.queued_ms is not None
    assert response.timings.upstream_ttfb_ms is not None


def test_the_messages_and_responses_shapes_carry_the_headers_too(
    make_gateway: Any, serve: Any
) -> None:
    """The headers are the app's, whatever the shape (the official SDKs of each)."""
    with serve(make_gateway()) as url:
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        message = claude.messages.with_raw_response.create(
            model="echo", max_tokens=16, messages=HELLO
        )
        with claude.messages.with_streaming_response.create(
            model="echo", max_tokens=16, messages=HELLO, stream=True
        ) as streamed:
            stream_headers = dict(streamed.headers)
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        responses = sdk.responses.with_raw_response.create(model="echo", input="hello")
    for headers in (message.headers, stream_headers, responses.headers):
        assert all(name in headers for name in TIMING_HEADERS)
        assert _ms(headers, "x-corrallm-load-ms") == 0


def _llamacpp_upstream(wire_server: WireServer, tmp_path: Path, answers: int) -> Client:
    """A Client whose ``lab`` is a llama.cpp server answering ``answers`` recorded streams."""
    for _ in range(answers):
        wire_server.add_file(RECORDINGS / "llamacpp_draft_timings.sse")
    return Client(
        enable=["modelplug-openai-compat"],
        config={
            "providers": {
                "lab": {
                    "type": "openai-compatible",
                    "base_url": wire_server.url + "/v1",
                    "server": "llamacpp",
                }
            }
        },
        user_config=tmp_path / "none.toml",
        project_dir="/",
        environ={"MODELPLUG_DATA_DIR": str(tmp_path / "up")},
    )


def _said(timings: Any) -> None:
    """llama.cpp's figures from the recording, and the gateway's three facts."""
    assert (timings["prompt_n"], timings["cache_n"], timings["draft_n_accepted"]) == (18, 12, 365)
    assert timings["load_ms"] == 0 and timings["queued_ms"] >= 0
    assert timings["upstream_ttfb_ms"] >= 0


def test_the_messages_shape_carries_the_timings_in_its_body_and_final_message_delta(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    upstream = _llamacpp_upstream(wire_server, tmp_path, answers=2)
    with serve(make_gateway(client=upstream)) as url:
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        message = claude.messages.create(model="lab/qwen3", max_tokens=64, messages=HELLO)
        events = list(
            claude.messages.create(model="lab/qwen3", max_tokens=64, messages=HELLO, stream=True)
        )
    assert message.model_extra is not None
    _said(message.model_extra["timings"])
    deltas = [e for e in events if e.type == "message_delta"]
    assert len(deltas) == 1 and deltas[0].model_extra is not None
    _said(deltas[0].model_extra["timings"])


def test_the_responses_shape_carries_the_timings_in_its_response_object(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    upstream = _llamacpp_upstream(wire_server, tmp_path, answers=2)
    with serve(make_gateway(client=upstream)) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = sdk.responses.create(model="lab/qwen3", input="hello")
        events = list(sdk.responses.create(model="lab/qwen3", input="hello", stream=True))
    assert plain.model_extra is not None
    _said(plain.model_extra["timings"])
    completed = [e for e in events if e.type == "response.completed"]
    assert len(completed) == 1
    final = completed[0].response  # type: ignore[union-attr]
    assert final.model_extra is not None
    _said(final.model_extra["timings"])


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_error_answer_carries_the_timing_headers(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path, stream: bool
) -> None:
    """Admitted, dispatched, refused upstream: the time held and loading are known (no
    upstream event came, so no ttfb)."""
    upstream = _llamacpp_upstream(wire_server, tmp_path, answers=0)
    # Invented answer in llama.cpp's error body shape (its server's format_error_response).
    refused = {"error": {"code": 429, "message": "busy", "type": "rate_limit_error"}}
    wire_server.add_json(refused, status=429)
    with serve(make_gateway(client=upstream)) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        with pytest.raises(openai.RateLimitError) as raised:
            sdk.chat.completions.create(model="lab/qwen3", messages=HELLO, stream=stream)
    headers = raised.value.response.headers
    assert _ms(headers, "x-corrallm-load-ms") == 0
    _ms(headers, "x-corrallm-queued-ms")
    assert "x-corrallm-upstream-ttfb-ms" not in headers
