"""Recorded streams from each server family, played through the real loopback socket."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from modelplug.contract.types import (
    Done,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    ToolUseBlock,
)
from modelplug_kit.testing import load_recording

RECORDINGS = Path(__file__).parent / "recordings"


def run(client, spec="wire/m", request="hi", **fields):
    events = list(client.stream(spec, request, **fields))
    done = [e for e in events if isinstance(e, Done)]
    assert len(done) == 1 and events[-1] is done[0]
    return events, done[0].response


def hosted(compat):
    """The wire provider as a hosted one (with a key): not free, so costs stay unknown."""
    return compat(api_key_env="WIRE_KEY", environ={"WIRE_KEY": "wire-test-key-1234"})


def deltas(events, kind=TextDelta):
    return "".join(e.text for e in events if isinstance(e, kind))


def test_modelplug_stream_openai_text_and_usage_chunk(compat, wire_server):
    wire_server.add_file(RECORDINGS / "openai_text.sse")
    events, response = run(hosted(compat), "wire/gpt-4o-mini")
    assert deltas(events) == "Sockets wait in silence — café ☕"
    assert response.text == "Sockets wait in silence — café ☕"
    assert response.stop_reason == "end_turn"
    assert response.model == "wire/gpt-4o-mini" and response.message.model == "wire/gpt-4o-mini"
    usage = response.usage
    assert (usage.input, usage.cache_read, usage.output, usage.reported) == (226, 1024, 9, True)
    assert response.metadata["served_model"] == "gpt-4o-mini-2024-07-18"
    assert response.cost is None and response.server_cost is None


def test_modelplug_stream_openai_parallel_tool_calls(compat, wire_server):
    wire_server.add_file(RECORDINGS / "openai_parallel_tools.sse")
    events, response = run(compat(), "wire/gpt-4o")
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name, s.index) for s in starts] == [
        ("call_Wx1", "get_weather", 0),
        ("call_Wx2", "get_weather", 1),
    ]
    assert response.tool_calls == [
        ToolUseBlock(id="call_Wx1", name="get_weather", input={"city": "Paris"}),
        ToolUseBlock(id="call_Wx2", name="get_weather", input={"city": "Oslo"}),
    ]
    assert response.text == ""
    assert response.stop_reason == "tool_use"
    assert (response.usage.input, response.usage.output) == (82, 44)


def test_modelplug_stream_llamacpp_reasoning_timings_and_first_fragment_arguments(
    compat, wire_server
):
    wire_server.add_file(RECORDINGS / "llamacpp_reasoning_tools.sse")
    events, response = run(compat(), "wire/qwen3-8b")
    assert deltas(events, ThinkingDelta) == "The user wants the file read."
    thinking = response.message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.text == "The user wants the file read."
    assert thinking.wire == {"reasoning_content": "The user wants the file read."}
    assert response.text == "Reading it."
    assert response.tool_calls == [
        ToolUseBlock(id="bZ9kR2xQ", name="read_file", input={"path": "src/main.py"})
    ]
    assert response.stop_reason == "tool_use"
    assert response.metadata["timings"]["predicted_n"] == 31
    assert (response.usage.input, response.usage.output, response.usage.reported) == (412, 31, True)


def test_modelplug_stream_vllm_reasoning_field_and_null_choices(compat, wire_server):
    wire_server.add_file(RECORDINGS / "vllm_reasoning.sse")
    events, response = run(compat(), "wire/Qwen/Qwen3-8B")
    assert deltas(events, ThinkingDelta) == "Two plus two is four."
    assert response.message.content[0] == ThinkingBlock(
        text="Two plus two is four.", wire={"reasoning": "Two plus two is four."}
    )
    assert response.text == "4"
    assert (response.usage.input, response.usage.output) == (14, 16)
    assert "served_model" not in response.metadata


def test_modelplug_stream_ollama_whole_call_without_index(compat, wire_server):
    wire_server.add_file(RECORDINGS / "ollama_tool.sse")
    events, response = run(compat(), "wire/qwen2.5-coder")
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["list_dir"]
    assert response.tool_calls == [
        ToolUseBlock(id="call_k2lm1p0a", name="list_dir", input={"path": "."})
    ]
    assert response.stop_reason == "tool_use"  # Ollama says "stop" after a call


def test_modelplug_stream_openrouter_cost_in_us_dollars(compat, wire_server):
    wire_server.add_file(RECORDINGS / "openrouter_cost.sse")
    events, response = run(hosted(compat), "wire/qwen/qwen3-coder")
    assert deltas(events) == "Hi there"
    assert response.server_cost is not None
    assert response.server_cost.amount == Decimal("0.0000186")
    assert response.server_cost.currency == "USD"  # OpenRouter documents credits as USD
    assert response.server_cost.source == "openrouter usage.cost"
    assert response.cost == response.server_cost  # no price table knows the model
    assert response.metadata["provider"] == "Together"


def test_modelplug_stream_litellm_cost_header_and_rate_limits(compat, wire_server):
    wire_server.add_file(
        RECORDINGS / "litellm_proxy.sse",
        headers={
            "x-litellm-response-cost": "0.000153",
            "x-ratelimit-remaining-requests": "99",
            "x-litellm-key-spend": "1.25",
            "x-request-id": "abc",
        },
    )
    _, response = run(compat(), "wire/claude-haiku")
    assert response.server_cost is not None
    assert (response.server_cost.amount, response.server_cost.currency) == (
        Decimal("0.000153"),
        "USD",
    )
    assert response.metadata["rate_limits"] == {
        "x-ratelimit-remaining-requests": "99",
        "x-litellm-key-spend": "1.25",
    }
    assert response.text == "Done."


def test_modelplug_stream_every_byte_its_own_chunk(compat, wire_server):
    for name in ("llamacpp_reasoning_tools.sse", "openrouter_cost.sse"):
        wire_server.add_file(RECORDINGS / name)
        _, whole = run(compat(), "wire/m")
        wire_server.add_file(RECORDINGS / name, chunk_size=1)
        _, split = run(compat(), "wire/m")
        assert split == whole


def test_modelplug_stream_crlf_line_endings(compat, wire_server):
    data = load_recording(RECORDINGS / "vllm_reasoning.sse")
    wire_server.add(data.replace(b"\n", b"\r\n"))
    _, response = run(compat(), "wire/m")
    assert response.text == "4" and response.usage.output == 16
