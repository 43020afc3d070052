"""Every neutral type survives JSON (a conversation stored as JSONL comes back exactly)."""

from __future__ import annotations

import pickle
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug.contract.types import (
    Cost,
    Done,
    Endpoint,
    Event,
    ImageBlock,
    Message,
    ModelInfo,
    Notice,
    OpaqueBlock,
    ParsedText,
    Price,
    Request,
    Response,
    Route,
    ServerTool,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ThinkingRequest,
    ToolCallStart,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from modelplug.host.known_providers import example_spec
from pydantic import BaseModel, TypeAdapter, ValidationError

THINKING_WIRE = {"type": "thinking", "thinking": "Let me add: 2+2=4.", "signature": "EqQBCkYIARgC"}


def conversation() -> list[Message]:
    return [
        Message(
            role="user",
            content=[
                TextBlock(text="What is 2+2? See image."),
                ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
            ],
        ),
        Message(
            role="assistant",
            model=example_spec("anthropic"),
            content=[
                ThinkingBlock(
                    text="Let me add: 2+2=4.", signature="EqQBCkYIARgC", wire=THINKING_WIRE
                ),
                ThinkingBlock(
                    redacted=True, wire={"type": "redacted_thinking", "data": "EmwKAhgB"}
                ),
                TextBlock(
                    text="I'll check.",
                    citations=[{"type": "web_search_result_location", "url": "https://e.x"}],
                ),
                ToolUseBlock(
                    id="toolu_1",
                    name="calc",
                    input={"expr": "2+2", "nested": {"a": [1, 2.5, None]}},
                ),
                ToolUseBlock(id="toolu_2", name="calc", input='{"expr": "2+'),
                OpaqueBlock(
                    kind="server_tool_use",
                    wire={"type": "server_tool_use", "id": "srvtoolu_1", "input": {"query": "x"}},
                ),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="toolu_1",
                    content=[TextBlock(text="4"), ImageBlock(url="https://e.x/a.png")],
                ),
                ToolResultBlock(tool_use_id="toolu_2", content="bad JSON", is_error=True),
            ],
        ),
    ]


SAMPLES: list[BaseModel] = [
    *conversation(),
    ToolSpec(
        name="calc",
        description="Evaluate",
        input_schema={"type": "object", "properties": {"expr": {"type": "string"}}},
    ),
    Request(
        system="Be brief.",
        messages=conversation(),
        tools=[ToolSpec(name="calc")],
        server_tools=[ServerTool(max_uses=3, allowed_domains=["e.x"])],
        max_tokens=1024,
        thinking=ThinkingRequest(effort="high", display="summarized", hide=True),
        stop=["END"],
        tool_choice="calc",
        temperature=0.2,
        top_p=0.9,
        top_k=40,
        seed=7,
        cache=False,
        extra={"metadata": {"user_id": "u1"}},
    ),
    Response(
        message=conversation()[1],
        stop_reason="pause_turn",
        usage=Usage(
            input=10,
            output=20,
            cache_read=3,
            cache_write=4,
            reasoning=5,
            web_searches=1,
            reported=False,
        ),
        model=example_spec("anthropic"),
        cost=Cost(
            amount=Decimal("0.010035"),
            source="genai-prices 0.2.3",
            breakdown={"input": Decimal("0.003")},
        ),
        server_cost=Cost(amount=Decimal("0.5"), currency="credits", source="openrouter usage.cost"),
        price_factor=0.5,
        metadata={"timings": {"predicted_ms": 12.5}},
    ),
    ParsedText(
        text="prose",
        calls=[ToolUseBlock(id="call_1", name="calc", input={})],
        hold_from=3,
        problems=["x"],
    ),
]


ROUTE = Route(
    provider="ollama",
    model="qwen3:8b",
    endpoint=Endpoint(type="openai-compatible", base_url="http://localhost:11434/v1", local=True),
    info=ModelInfo(
        context_window=32768,
        text_tool_calls="lines",
        price=Price(input=Decimal(0), output=Decimal(0)),
    ),
    spec="worker",
    role="worker",
)


def test_a_route_round_trips_through_json_by_a_type_adapter() -> None:
    # Route is a plain dataclass (resolving must not import pydantic); pydantic still
    # stores and restores it exactly.
    adapter: TypeAdapter[Route] = TypeAdapter(Route)
    restored = adapter.validate_json(adapter.dump_json(ROUTE))
    assert restored == ROUTE
    assert type(restored.info.price) is Price
    assert restored.info.price is not None and restored.info.price.input == Decimal(0)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: type(s).__name__)
def test_every_type_round_trips_through_json(sample: BaseModel) -> None:
    restored = type(sample).model_validate_json(sample.model_dump_json())
    assert restored == sample
    assert restored.model_dump_json() == sample.model_dump_json()


EVENTS = [
    TextDelta(text="hi"),
    ThinkingDelta(text="hmm"),
    ToolCallStart(id="t1", name="calc", index=2),
    Notice(
        kind="retry",
        message="rate limited; retry 1 of 2 in 2.0 s",
        delay=2.0,
        details={"attempt": 1},
    ),
    Done(response=SAMPLES[-2]),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_events_round_trip_as_a_discriminated_union(event: BaseModel) -> None:
    adapter: TypeAdapter[Event] = TypeAdapter(Event)
    restored = adapter.validate_json(adapter.dump_json(event))  # type: ignore[arg-type]
    assert type(restored) is type(event)
    assert restored == event


def test_conversation_survives_jsonl() -> None:
    lines = "\n".join(m.model_dump_json() for m in conversation())
    restored = [Message.model_validate_json(line) for line in lines.splitlines()]
    assert restored == conversation()
    assert restored[1].content[0].wire == THINKING_WIRE  # type: ignore[union-attr]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(text=st.text(), args=st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_any_text_and_tool_input_round_trip(text: str, args: dict) -> None:
    message = Message(
        role="assistant", content=[TextBlock(text=text), ToolUseBlock(id="x", name="t", input=args)]
    )
    assert Message.model_validate_json(message.model_dump_json()) == message


def test_unknown_fields_are_rejected_not_dropped() -> None:
    with pytest.raises(ValueError, match=r"tpye|Extra inputs"):
        Message.model_validate({"role": "user", "content": "hi", "tpye": "x"})


def test_image_needs_exactly_one_source() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ImageBlock(media_type="image/png")
    with pytest.raises(ValueError, match="media_type"):
        ImageBlock(data="AAAA")


@pytest.mark.parametrize("text", ["", "a", "naïve ☕ \n"])
def test_text_delta_of_equals_a_validated_one(text: str) -> None:
    fast = TextDelta.of(text)
    assert fast == TextDelta(text=text)
    assert fast.model_dump() == TextDelta(text=text).model_dump()
    assert fast.model_fields_set == {"text"}
    assert repr(fast) == repr(TextDelta(text=text))
    assert TypeAdapter(Event).validate_json(fast.model_dump_json()) == fast


def test_changing_one_delta_of_text_leaves_the_others_as_they_were() -> None:
    changed, other = TextDelta.of("a"), TextDelta.of("b")
    changed.text = "c"
    changed.type = "text_delta"
    copied = other.model_copy(update={"type": "text_delta"})

    assert changed.text == "c" and changed.model_fields_set == {"text", "type"}
    assert copied.model_fields_set == {"text", "type"}
    assert other.model_fields_set == {"text"} and TextDelta.of("d").model_fields_set == {"text"}
    assert other.model_dump(exclude_unset=True) == {"text": "b"}
    assert pickle.loads(pickle.dumps(other)) == other


def test_text_delta_of_refuses_what_is_not_text() -> None:
    # An adapter that hands over a parsed number or None gets the error here, at the
    # event, not later when a caller serialises a delta that was never a TextDelta.
    with pytest.raises(ValidationError, match="text"):
        TextDelta.of(42)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="text"):
        TextDelta.of(None)  # type: ignore[arg-type]
