"""The Messages shape's stream: modelplug events out as the API's server-sent events,
read back by the official SDK's own accumulator (anthropic.lib.streaming), so the
message an SDK client builds from the stream is the non-streamed answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from modelplug import Client, ErrorClass, ModelError
from modelplug.contract.types import (
    Done,
    Event,
    Message,
    Notice,
    OpaqueBlock,
    Response,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply, thinking, tool_use
from modelplug_gateway.shapes.anthropic_messages import SHAPE
from modelplug_gateway.shapes.base import Parsed

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2Cx2CTbGwsZ3cYg3kZ7Lq4B="


def frames(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk:
            continue
        name, data = chunk.split("\n")
        assert name.startswith("event: ") and data.startswith("data: ")
        out.append((name[7:], json.loads(data[6:])))
    return out


async def collect(events: AsyncIterator[Event], model: str = "m") -> list[bytes]:
    parsed = Parsed(model=model, request=SHAPE.parse(_body()).request, stream=True)
    return [piece async for piece in SHAPE.stream(events, model, parsed)]


def _body() -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


async def through_client(step: Response, request: Any = "hi") -> tuple[list[bytes], Response]:
    fake = FakeModel([step])
    async with Client(plugins=[fake]) as client:
        pieces = await collect(client.astream("fake/model", request))
    return pieces, step


def accumulated(raw: bytes) -> dict[str, Any]:
    snapshot = None
    for name, data in frames(raw):
        assert data["type"] == name
        if name == "ping":
            continue
        snapshot = accumulate_event(event=data, current_snapshot=snapshot, json_bufs={})  # type: ignore[arg-type]
    assert snapshot is not None
    dumped: dict[str, Any] = snapshot.model_dump(exclude_none=True)
    return dumped


def expected(response: Response, model: str = "m") -> dict[str, Any]:
    return SHAPE.response(response, model)


def comparable(message: dict[str, Any]) -> dict[str, Any]:
    return {k: message[k] for k in ("content", "stop_reason", "usage", "role", "model")}


def strip_nones(message: dict[str, Any]) -> dict[str, Any]:
    return json.loads(
        json.dumps(message), object_hook=lambda d: {k: v for k, v in d.items() if v is not None}
    )


@pytest.mark.parametrize(
    "step",
    [
        reply("Hello there, friend.", usage=Usage(input=5, output=4)),
        thinking("Let me add these. 2 + 2 = 4.", "The answer is 4.", signature=SIGNATURE),
        tool_use("weather", {"city": "Paris", "days": [1, 2]}, id="toolu_01"),
        reply(
            TextBlock(text="Checking."),
            ToolUseBlock(id="toolu_a", name="a", input={}),
            ToolUseBlock(id="toolu_b", name="b", input={"x": "é"}),
            usage=Usage(input=1, output=2, cache_read=30, cache_write=4),
        ),
    ],
    ids=["text", "thinking", "tool", "two-tools"],
)
def test_the_sdk_builds_the_non_streamed_message_from_the_stream(step: Response) -> None:
    pieces, _ = asyncio.run(through_client(step))
    built = accumulated(b"".join(pieces))
    fake_answer = step.model_copy(deep=True)
    done = next(f for f in frames(b"".join(pieces)) if f[0] == "message_delta")[1]
    # The fake estimates usage when the step has none: read it from the stream's end.
    want = strip_nones(expected(fake_answer))
    want["usage"] = {k: done["usage"][k] for k in want["usage"]}
    assert comparable(strip_nones(built)) == comparable(want)


def test_frames_follow_the_api_s_order_and_names() -> None:
    step = thinking("Deep thought.", "42", signature=SIGNATURE)
    pieces, _ = asyncio.run(through_client(step))
    names = [name for name, _ in frames(b"".join(pieces))]
    assert names == [
        "message_start",
        "content_block_start",  # thinking, index 0
        "content_block_delta",  # thinking_delta
        "content_block_start",  # text, index 1 (the thinking block awaits its signature)
        "content_block_delta",  # text_delta
        "content_block_delta",  # signature_delta, index 0, known at the end
        "content_block_stop",  # thinking
        "content_block_stop",  # text: blocks close in index order
        "message_delta",
        "message_stop",
    ]
    parsed = frames(b"".join(pieces))
    assert parsed[5][1] == {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "signature_delta", "signature": SIGNATURE},
    }
    assert parsed[8][1]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}


class Gate:
    """An upstream that waits for the test to let each event out."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.go = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[Event]:
        for event in self.events:
            yield event
            await self.go.wait()
            self.go.clear()


def test_each_event_goes_out_before_the_next_one_arrives() -> None:
    async def run() -> list[str]:
        gate = Gate([TextDelta(text="one"), TextDelta(text="two"), Done(response=reply("onetwo"))])
        parsed = Parsed(model="m", request=SHAPE.parse(_body()).request, stream=True)
        stream = SHAPE.stream(gate.__aiter__(), "m", parsed)
        seen = [await anext(stream)]  # message_start, sent with the first event
        seen.append(await anext(stream))  # the text block starts with "one"
        gate.go.set()
        seen.append(await anext(stream))
        return [piece.decode() for piece in seen]

    start, first, second = asyncio.run(run())
    assert "message_start" in start
    assert '"text_delta","text":"one"' in first
    assert '"text":"two"' in second


def test_message_start_goes_out_while_thinking_goes_on() -> None:
    async def run() -> list[bytes]:
        gate = Gate([ThinkingBlockEvent("Hmm"), Done(response=reply("x"))])
        parsed = Parsed(model="m", request=SHAPE.parse(_body()).request, stream=True)
        stream = SHAPE.stream(gate.__aiter__(), "m", parsed)
        return [await anext(stream), await anext(stream)]

    start, delta = asyncio.run(run())
    assert frames(start)[0][0] == "message_start"
    assert frames(delta)[-1][1]["delta"] == {"type": "thinking_delta", "thinking": "Hmm"}


def ThinkingBlockEvent(text: str) -> Event:
    from modelplug.contract.types import ThinkingDelta

    return ThinkingDelta(text=text)


def test_a_model_error_after_the_stream_began_is_an_error_event() -> None:
    async def events() -> AsyncIterator[Event]:
        yield TextDelta(text="partial")
        raise ModelError("overloaded, try later", error_class=ErrorClass(kind="overloaded"))

    raw = b"".join(asyncio.run(collect(events())))
    last = frames(raw)[-1]
    assert last == (
        "error",
        {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "overloaded, try later"},
        },
    )
    assert "message_stop" not in raw.decode()


def test_a_model_error_before_any_frame_is_left_to_the_app() -> None:
    async def events() -> AsyncIterator[Event]:
        raise ModelError("slow down", error_class=ErrorClass(kind="rate_limit", retry_after=3))
        yield  # pragma: no cover

    with pytest.raises(ModelError):
        asyncio.run(collect(events()))


def test_a_notice_keeps_the_stream_alive_with_a_ping() -> None:
    async def events() -> AsyncIterator[Event]:
        yield Notice(kind="retry", message="waiting 2 s", delay=2)
        yield Done(response=reply("ok"))

    names = [n for n, _ in frames(b"".join(asyncio.run(collect(events()))))]
    assert names[:2] == ["message_start", "ping"] and names[-1] == "message_stop"


def test_blocks_only_the_final_answer_holds_are_written_at_its_end() -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"}
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    final = Response(
        message=Message(
            role="assistant",
            content=[
                ThinkingBlock(redacted=True, wire=redacted),
                OpaqueBlock(kind="server_tool_use", wire=search),
                TextBlock(text="Found it."),
            ],
        ),
        metadata={"stop_sequence": "END"},
    )

    async def events() -> AsyncIterator[Event]:
        yield TextDelta(text="Found")
        yield Done(response=final)

    raw = b"".join(asyncio.run(collect(events())))
    built = accumulated(raw)
    assert [b["type"] for b in built["content"]] == ["text", "redacted_thinking", "server_tool_use"]
    assert built["content"][0]["text"] == "Found it."  # the held-back rest came at the end
    assert built["content"][1] == redacted
    assert built["stop_reason"] == "stop_sequence" and built["stop_sequence"] == "END"


def test_a_stream_without_its_final_answer_ends_in_an_error_event() -> None:
    async def events() -> AsyncIterator[Event]:
        yield TextDelta(text="cut")

    last = frames(b"".join(asyncio.run(collect(events()))))[-1]
    assert last[0] == "error" and last[1]["error"]["type"] == "api_error"


def test_cost_in_usd_rides_in_the_final_usage() -> None:
    from decimal import Decimal

    from modelplug.contract.types import Cost

    priced = reply("x", usage=Usage(input=1, output=1))
    priced.cost = Cost(amount=Decimal("0.000123"), source="t")

    async def events() -> AsyncIterator[Event]:
        yield Done(response=priced)

    delta = [d for n, d in frames(b"".join(asyncio.run(collect(events())))) if n == "message_delta"]
    assert delta[0]["usage"]["modelplug_cost_usd"] == "0.000123"
