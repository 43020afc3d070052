"""modelplug_stream against recorded /api/chat streams on the loopback wire server."""

from __future__ import annotations

import base64

from modelplug.contract.types import (
    Done,
    ImageBlock,
    Message,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    ToolSpec,
)

WEATHER = [ToolSpec(name="get_weather", input_schema={"type": "object"})]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def test_modelplug_stream_text(ollama, wire):
    wire.chat("text.jsonl")
    events = list(ollama().stream("ollama/gemma2:2b", "hi"))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "Hello! 👋\n\nWhat can I do for you today? 🙂"
    assert len(deltas) == 13
    response = events[-1].response
    assert isinstance(events[-1], Done)
    assert response.text == "Hello! 👋\n\nWhat can I do for you today? 🙂"
    assert response.stop_reason == "end_turn"
    assert (response.usage.input, response.usage.output, response.usage.reported) == (10, 17, True)
    assert response.metadata["durations_ns"] == {
        "total": 4353619900,
        "load": 63915300,
        "prompt_eval": 246847000,
        "eval": 4032296000,
    }
    assert response.model == "ollama/gemma2:2b"
    assert response.message.model == "ollama/gemma2:2b"
    request = wire.requests[0]
    assert request.path == "/api/chat"
    body = request.json()
    assert body["stream"] is True
    assert body["model"] == "gemma2:2b"
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_modelplug_stream_is_free_when_local(ollama, wire):
    wire.chat("text.jsonl")
    response = ollama().complete("ollama/gemma2:2b", "hi")
    assert response.cost is not None
    assert response.cost.amount == 0


def test_modelplug_stream_thinking(ollama, wire):
    wire.chat("thinking.jsonl")
    events = list(ollama().stream("ollama/qwen3", "What is 17 × 23?", thinking={"effort": "high"}))
    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thought == "Okay, 17 × 20 is 340 and 17 × 3 is 51, so 391."
    response = events[-1].response
    block = response.message.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.text == thought
    assert block.wire == {"thinking": thought}
    assert response.text == "17 × 23 = **391**"
    assert wire.requests[0].json()["think"] == "high"


def test_hidden_thinking_is_kept_but_not_shown(ollama, wire):
    wire.chat("thinking.jsonl")
    events = list(ollama().stream("ollama/qwen3", "q", thinking={"hide": True}))
    assert not [e for e in events if isinstance(e, ThinkingDelta)]
    block = events[-1].response.message.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.text == ""
    assert block.wire["thinking"].startswith("Okay")
    assert wire.requests[0].json()["think"] is True


def test_thinking_goes_back_to_the_model_that_wrote_it(ollama, wire):
    wire.chat("text.jsonl")
    wire.chat("text.jsonl")
    thought = ThinkingBlock(text="t", wire={"thinking": "t"})
    mine = Message(role="assistant", content=[thought, TextBlock(text="a")], model="ollama/qwen3")
    client = ollama()
    client.complete(
        "ollama/qwen3", [Message(role="user", content="q"), mine, Message(role="user", content="r")]
    )
    client.complete(
        "ollama/other", [Message(role="user", content="q"), mine, Message(role="user", content="r")]
    )
    same, other = (r.json()["messages"][1] for r in wire.requests)
    assert same == {"role": "assistant", "content": "a", "thinking": "t"}
    assert other == {"role": "assistant", "content": "a"}


def test_modelplug_stream_one_tool_call(ollama, wire):
    wire.chat("tool_call.jsonl")
    events = list(
        ollama().stream("ollama/llama3.2", "what is the weather in tokyo?", tools=WEATHER)
    )
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.name, s.index) for s in starts] == [("get_weather", 0)]
    response = events[-1].response
    assert response.stop_reason == "tool_use"
    (call,) = response.tool_calls
    assert (call.name, call.input) == ("get_weather", {"city": "Tokyo"})
    assert call.id == starts[0].id and call.id  # generated: Ollama sent none
    assert (response.usage.input, response.usage.output) == (169, 15)
    tools = wire.requests[0].json()["tools"]
    assert tools == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "",
                "parameters": {"type": "object"},
            },
        }
    ]


def test_modelplug_stream_parallel_tool_calls(ollama, wire):
    wire.chat("parallel_tools.jsonl")
    tools = [ToolSpec(name="get_temperature"), ToolSpec(name="get_conditions")]
    events = list(ollama().stream("ollama/qwen3", "weather in New York and London?", tools=tools))
    starts = [(e.id, e.name, e.index) for e in events if isinstance(e, ToolCallStart)]
    assert starts == [
        ("call_n8x2k4qa", "get_temperature", 0),
        ("call_p3v7m1zd", "get_conditions", 1),
        ("call_k5r9t2wb", "get_temperature", 2),
        ("call_h4j6c8ye", "get_conditions", 3),
    ]
    response = events[-1].response
    assert response.stop_reason == "tool_use"
    assert [(c.id, c.input["city"]) for c in response.tool_calls] == [
        ("call_n8x2k4qa", "New York"),
        ("call_p3v7m1zd", "New York"),
        ("call_k5r9t2wb", "London"),
        ("call_h4j6c8ye", "London"),
    ]


def test_modelplug_stream_images(ollama, wire):
    wire.chat("images.jsonl")
    image = ImageBlock(data=PNG, media_type="image/png")
    message = Message(role="user", content=[TextBlock(text="what is in this image?"), image])
    events = list(ollama().stream("ollama/llava", [message]))
    response = events[-1].response
    assert response.text.startswith(" The image features a cute, little pig")
    # The text came in the final line itself: shown, and counted once.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == response.text
    assert (response.usage.input, response.usage.output) == (26, 83)
    (sent,) = wire.requests[0].json()["messages"]
    assert sent == {"role": "user", "content": "what is in this image?", "images": [PNG]}


def test_modelplug_stream_done_reason_length(ollama, wire):
    wire.chat("length.jsonl")
    response = ollama().complete("ollama/llama3.2", "why is the sky blue?", max_tokens=5)
    assert response.stop_reason == "max_tokens"
    assert response.text == "The sky is blue because"
    assert wire.requests[0].json()["options"]["num_predict"] == 5


def test_a_served_model_other_than_the_one_asked_is_recorded(ollama, wire):
    wire.chat("text.jsonl")
    response = ollama().complete("ollama/gemma2", "hi")
    assert response.metadata["served_model"] == "gemma2:2b"


def test_a_whole_answer_in_one_unterminated_line_is_read(ollama, wire):
    body = (
        b'{"model":"m","message":{"role":"assistant","content":"whole"},"done":true,"eval_count":1}'
    )
    wire.server.add(body, path="/api/chat", content_type="application/json")
    response = ollama().complete("ollama/m", "hi")
    assert response.text == "whole"
    assert response.stop_reason == "end_turn"  # an Ollama that sends no done_reason


def test_reading_stops_at_the_final_line_and_leaves_nothing_open(ollama, wire, caplog):
    # Lines after done: true are not read; the body iterator is closed then, not left
    # for the event loop to find when the client closes.
    wire.lines(
        [
            {"message": {"role": "assistant", "content": "a"}, "done": False},
            {"message": {"role": "assistant", "content": ""}, "done": True, "eval_count": 1},
            {"message": {"role": "assistant", "content": "late"}, "done": False},
        ]
    )
    client = ollama()
    assert client.complete("ollama/m", "hi").text == "a"
    client.close()
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
