"""``delta.content`` as a list of parts (Mistral's reasoning models), mixed with strings."""

from __future__ import annotations

from pathlib import Path

from modelplug.contract.types import Done, TextDelta, ThinkingBlock, ThinkingDelta

RECORDINGS = Path(__file__).parent / "recordings"


def test_thinking_and_text_parts_are_assembled_in_order(compat, wire_server):
    wire_server.add_file(RECORDINGS / "mistral_content_parts.sse")
    events = list(compat().stream("wire/magistral-medium-latest", "2+2 / 2?"))
    response = events[-1].response
    assert isinstance(events[-1], Done)
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == (
        "2 + 2 is 4, divided by 2 is 2."
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer is **2**."
    assert response.text == "The answer is **2**."
    thinking = response.message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.text == "2 + 2 is 4, divided by 2 is 2."
    assert (response.usage.input, response.usage.output) == (14, 47)


def test_parts_of_unknown_types_and_shapes_are_skipped_not_fatal(compat, wire_server):
    wire_server.add_sse(
        [
            {"choices": [{"delta": {"content": [{"type": "image_url", "image_url": {}}]}}]},
            {"choices": [{"delta": {"content": [7, None, {"type": "text", "text": 3}]}}]},
            {"choices": [{"delta": {"content": ["plain ", {"type": "text", "text": "part"}]}}]},
            {"choices": [{"delta": {"content": [{"type": "thinking", "thinking": "hm"}]}}]},
            {"choices": [{"delta": {}, "finish_reason": "stop"}]},
        ],
        done=True,
    )
    response = compat().complete("wire/m", "hi")
    assert response.text == "plain part"
    assert response.message.content[0] == ThinkingBlock(text="hm", wire={"thinking": "hm"})
