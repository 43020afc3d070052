"""A call read to its end gives its connection back to the pool, and the next call on
the same event loop goes out on it; a consumer that stops early closes its connection
at once, so the server sees the abort."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from modelplug.client.client import Client
from modelplug.contract.types import TextDelta
from modelplug_kit.testing import WireServer

SPEC = "gemini/gemini-2.5-flash"


def test_the_next_call_reuses_the_pooled_connection(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    client = gemini_client()

    async def three_calls() -> list[str]:
        texts = []
        for _ in range(3):
            wire_server.add_file(recorded("text.sse"))
            texts.append((await client.acomplete(SPEC, "hi")).text)
        await client.aclose()
        return texts

    texts = asyncio.run(three_calls())
    assert all(text.endswith("**Italian:** Ciao") for text in texts)
    # Three requests, one connection.
    assert len({r.connection for r in wire_server.requests}) == 1
    assert len(wire_server.requests) == 3


def test_a_consumer_that_stops_early_closes_the_connection(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    client = gemini_client()
    sent = wire_server.add_file(recorded("text.sse"))
    sent.chunks[1] = (30.0, sent.chunks[1])  # the rest would come much later

    async def first_delta_then_stop() -> str:
        stream = client.astream(SPEC, "hi")
        async for event in stream:
            if isinstance(event, TextDelta):
                await stream.aclose()  # type: ignore[attr-defined]
                return event.text
        raise AssertionError("no text came")

    text = asyncio.run(first_delta_then_stop())
    assert text.startswith("Here you go!")
    # The server sees the connection closed while it waits to send the rest.
    assert wire_server.wait_closed_by_client(wire_server.requests[0].connection)
    wire_server.stopping.set()
