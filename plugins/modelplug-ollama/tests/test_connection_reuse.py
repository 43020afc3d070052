"""A call read to its final line (done: true) leaves its connection in the pool, so the
next call sends on it; a call abandoned mid-stream closes its connection."""

from __future__ import annotations

import asyncio

import pytest
from modelplug import ModelError
from modelplug.contract.types import TextDelta

NOT_FOUND = {"error": 'model "llama3" not found, try pulling it first'}


def test_back_to_back_calls_use_one_connection(ollama, wire):
    client = ollama()
    before = wire.server.connections
    wire.chat("text.jsonl")
    wire.chat("text.jsonl")
    first = client.complete("ollama/gemma2:2b", "hi")
    second = client.complete("ollama/gemma2:2b", "again")
    assert first.text == second.text and first.text.startswith("Hello!")
    assert len(wire.requests) == 2
    assert wire.server.connections - before == 1


def test_lines_after_the_final_one_are_read_off_and_the_connection_kept(ollama, wire):
    client = ollama()
    before = wire.server.connections
    for _ in range(2):
        wire.lines(
            [
                {"message": {"role": "assistant", "content": "a"}, "done": False},
                {"message": {"role": "assistant", "content": ""}, "done": True},
                {"message": {"role": "assistant", "content": "late"}, "done": False},
            ]
        )
        assert client.complete("ollama/m", "hi").text == "a"
    assert wire.server.connections - before == 1


def test_an_error_status_leaves_the_connection_for_the_next_call(ollama, wire):
    client = ollama()
    before = wire.server.connections
    wire.server.add_json(NOT_FOUND, status=404, path="/api/chat")
    wire.chat("text.jsonl")
    with pytest.raises(ModelError, match="ollama pull llama3"):
        client.complete("ollama/llama3", "hi")
    assert client.complete("ollama/gemma2:2b", "hi").text.startswith("Hello!")
    assert len(wire.requests) == 2
    assert wire.server.connections - before == 1


def test_a_call_abandoned_mid_stream_closes_its_connection(ollama, wire):
    first = b'{"message":{"role":"assistant","content":"par"},"done":false}\n'
    final = b'{"message":{"role":"assistant","content":""},"done":true}\n'
    # The rest of the first answer would come 30 s later; the caller stops before.
    wire.server.add([first, (30.0, final)], path="/api/chat", content_type="application/x-ndjson")
    wire.chat("text.jsonl")
    client = ollama()
    before = wire.server.connections

    async def run() -> str:
        stream = client.astream("ollama/m", "hi")
        async for event in stream:
            if isinstance(event, TextDelta):
                break
        await stream.aclose()  # type: ignore[attr-defined]
        response = await client.acomplete("ollama/gemma2:2b", "again")
        await client.aclose()
        return response.text

    assert asyncio.run(run()).startswith("Hello!")
    assert len(wire.requests) == 2
    assert wire.server.connections - before == 2
    wire.server.stopping.set()  # release the server thread waiting out its delay
