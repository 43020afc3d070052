"""Structured output on every provider plugin, on the loopback wire server: the request
body each API gets for a schema, a structured answer parsed and validated into a
pydantic model, an invalid answer asked again once, and an answer cut at max_tokens.

Each wire's answer is built in the shape of that plugin's recorded streams (the
plugins' tests/recorded and tests/recordings files say where those come from); the JSON
texts inside them are invented for these tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from modelplug import OutputTruncatedError
from modelplug.host.known_providers import KNOWN_PROVIDERS
from modelplug_kit.testing import WireServer
from pydantic import BaseModel


class City(BaseModel):
    name: str
    population: int


GOOD = '{"name": "Paris", "population": 2100000}'
BAD = '{"name": "Paris", "population": "about two million"}'
CUT = '{"name": "Paris", "popul'


def _sse(events: list[dict[str, Any]], *, named: bool = False, done: bool = False) -> bytes:
    out = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def _halves(text: str) -> list[str]:
    return [text[: len(text) // 2], text[len(text) // 2 :]]


def chat_completions(text: str, cut: bool) -> bytes:
    chunks = [
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        for piece in _halves(text)
    ]
    chunks.append(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "length" if cut else "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
        }
    )
    return _sse(chunks, done=True)


def gemini(text: str, cut: bool) -> bytes:
    events: list[dict[str, Any]] = [
        {"candidates": [{"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}]}
        for piece in _halves(text)
    ]
    events[-1]["candidates"][0]["finishReason"] = "MAX_TOKENS" if cut else "STOP"
    events[-1]["usageMetadata"] = {
        "promptTokenCount": 20,
        "candidatesTokenCount": 9,
        "totalTokenCount": 29,
    }
    return _sse(events)


def ollama(text: str, cut: bool) -> bytes:
    lines = [
        {
            "model": "qwen3:8b",
            "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": piece},
            "done": False,
        }
        for piece in _halves(text)
    ]
    lines.append(
        {
            "model": "qwen3:8b",
            "created_at": "2026-01-01T00:00:01Z",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "length" if cut else "stop",
            "prompt_eval_count": 20,
            "eval_count": 9,
        }
    )
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def anthropic(text: str, cut: bool) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": KNOWN_PROVIDERS["anthropic"].example,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 20, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        for piece in _halves(text)
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens" if cut else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return _sse(events, named=True)


def responses(text: str, cut: bool) -> bytes:
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "incomplete" if cut else "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    final: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5",
        "status": "incomplete" if cut else "completed",
        "output": [item],
        "usage": {
            "input_tokens": 20,
            "output_tokens": 9,
            "total_tokens": 29,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    if cut:
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {**final, "status": "in_progress", "output": [], "usage": None},
        },
        {
            "type": "response.output_item.added",
            "sequence_number": 1,
            "output_index": 0,
            "item": {**item, "status": "in_progress", "content": []},
        },
    ]
    events += [
        {
            "type": "response.output_text.delta",
            "sequence_number": 2 + i,
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
        }
        for i, piece in enumerate(_halves(text))
    ]
    events += [
        {
            "type": "response.output_item.done",
            "sequence_number": 4,
            "output_index": 0,
            "item": item,
        },
        {
            "type": "response.incomplete" if cut else "response.completed",
            "sequence_number": 5,
            "response": final,
        },
    ]
    return _sse(events, named=True)


@dataclass
class Wire:
    plugin: str
    provider: dict[str, Any]
    spec: str
    answer: Callable[[str, bool], bytes]
    schema_of: Callable[[dict[str, Any]], Any]  # where the request body carries the schema
    environ: dict[str, str]
    # What the plugin asks before its first call (Ollama's /api/show), and the answer.
    before: tuple[str, dict[str, Any]] | None = None


WIRES = {
    "openai-compat": Wire(
        "modelplug-openai-compat",
        {"type": "openai-compatible", "server": "vllm"},
        "lab/Qwen/Qwen3-8B",
        chat_completions,
        lambda body: body["response_format"]["json_schema"]["schema"],
        {},
    ),
    "gemini": Wire(
        "modelplug-gemini",
        {"type": "gemini", "api_key_env": "LAB_KEY"},
        "lab/gemini-2.5-flash",
        gemini,
        lambda body: body["generationConfig"]["responseSchema"],
        {"LAB_KEY": "AIzaSy-Qx7Lp2Wm9Zt4Rv8Kd3Nb5"},
    ),
    "ollama": Wire(
        "modelplug-ollama",
        {"type": "ollama"},
        "lab/qwen3:8b",
        ollama,
        lambda body: body["format"],
        {},
        (
            "/api/show",
            {"capabilities": ["completion"], "model_info": {"qwen3.context_length": 40960}},
        ),
    ),
    "anthropic": Wire(
        "modelplug-anthropic",
        {"type": "anthropic", "api_key_env": "LAB_KEY"},
        f"lab/{KNOWN_PROVIDERS['anthropic'].example}",
        anthropic,
        lambda body: body["output_config"]["format"]["schema"],
        {"LAB_KEY": "sk-ant-Qx7Lp2Wm9Zt4Rv8Kd3Nb6"},
    ),
    "openai": Wire(
        "modelplug-openai",
        {"type": "openai-responses", "api_key_env": "LAB_KEY"},
        "lab/gpt-5",
        responses,
        lambda body: body["text"]["format"]["schema"],
        {"LAB_KEY": "sk-Qx7Lp2Wm9Zt4Rv8Kd3Nb7"},
    ),
}


@pytest.fixture(params=sorted(WIRES))
def wire(request: pytest.FixtureRequest) -> Wire:
    chosen = WIRES[request.param]
    pytest.importorskip(chosen.plugin.replace("-", "_"))
    return chosen


def calls(server: WireServer, wire: Wire) -> list[Any]:
    """The model calls the server saw (not what the plugin asked before them)."""
    skip = wire.before[0] if wire.before is not None else None
    return [r for r in server.requests if r.path != skip]


def client_for(make_client: Any, wire: Wire, server: WireServer) -> Any:
    if wire.before is not None:
        path, answer = wire.before
        server.add_json(answer, path=path)
    provider = {
        **wire.provider,
        "base_url": server.url + ("/v1" if "openai" in wire.plugin else ""),
    }
    return make_client(wire.plugin, config={"providers": {"lab": provider}}, environ=wire.environ)


def test_the_request_carries_the_schema_natively(
    make_client: Any, wire_server: WireServer, wire: Wire
) -> None:
    client = client_for(make_client, wire, wire_server)
    wire_server.add(wire.answer(GOOD, False))

    response = client.complete(wire.spec, "Largest city of France?", output_schema=City)

    sent = wire.schema_of(calls(wire_server, wire)[0].json())
    assert set(sent["properties"]) == {"name", "population"}
    assert response.metadata["structured_output"]["mode"] == "native"
    assert response.parsed == City(name="Paris", population=2_100_000)


def test_an_invalid_answer_is_asked_again_once(
    make_client: Any, wire_server: WireServer, wire: Wire
) -> None:
    client = client_for(make_client, wire, wire_server)
    wire_server.add(wire.answer(BAD, False))
    wire_server.add(wire.answer(GOOD, False))

    response = client.complete(
        wire.spec, "Largest city of France?", output_schema=City, output_retries=1
    )

    assert response.parsed.population == 2_100_000
    assert len(calls(wire_server, wire)) == 2
    assert "population" in json.dumps(calls(wire_server, wire)[1].json())
    assert response.usage.output == 18  # both attempts counted


def test_an_answer_cut_at_max_tokens_is_a_truncation(
    make_client: Any, wire_server: WireServer, wire: Wire
) -> None:
    client = client_for(make_client, wire, wire_server)
    wire_server.add(wire.answer(CUT, True))

    with pytest.raises(OutputTruncatedError) as caught:
        client.complete(wire.spec, "Largest city of France?", output_schema=City, output_retries=1)

    assert caught.value.raw == CUT
    assert len(calls(wire_server, wire)) == 1
