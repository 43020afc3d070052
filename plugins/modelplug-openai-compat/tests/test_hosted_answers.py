"""Each hosted service's recorded answers, served from 127.0.0.1 to its preset: text,
reasoning, tool calls, usage, the cost the service reports and the sources it cites."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from modelplug.contract.types import (
    Message,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from modelplug_kit.testing import load_recording

RECORDINGS = Path(__file__).parent / "recordings"
WEATHER = ToolSpec(
    name="weather",
    description="Weather for a location",
    input_schema={"type": "object", "properties": {"location": {"type": "string"}}},
)


def answer(compat, wire_server, service, model, recording, request="hi"):
    if recording.endswith(".json"):  # a service that answered with the whole completion
        wire_server.add(load_recording(RECORDINGS / recording), content_type="application/json")
    else:
        wire_server.add_file(RECORDINGS / recording)
    return compat(name=service).complete(f"{service}/{model}", request)


def test_mistral_text(compat, wire_server):
    response = answer(compat, wire_server, "mistral", "mistral-small-latest", "mistral_text.sse")
    assert response.text == "Hello, world! This is a test response."
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(input=13, output=8)


def test_mistral_tool_call_without_an_index(compat, wire_server):
    request = Request(messages=[Message(role="user", content="Weather in SF?")], tools=[WEATHER])
    response = answer(
        compat, wire_server, "mistral", "mistral-small-latest", "mistral_tool_call.sse", request
    )
    assert response.stop_reason == "tool_use"
    assert response.message.content == [
        ToolUseBlock(id="gSIMJiOkT", name="weather", input={"location": "San Francisco"})
    ]
    assert response.usage == Usage(input=124, output=22)


def test_groq_tool_call_and_its_usage(compat, wire_server):
    request = Request(messages=[Message(role="user", content="Weather?")], tools=[WEATHER])
    response = answer(
        compat, wire_server, "groq", "llama-3.3-70b-versatile", "groq_tool_call.sse", request
    )
    assert response.message.content == [ToolUseBlock(id="tk85n1k4m", name="weather", input={})]
    assert response.usage == Usage(input=210, output=15)
    assert response.metadata["x_groq"]["id"] == "req_01kh52nj5yfcat8hrmvrk2j2hj"


def test_xai_reasoning_usage_and_its_cost_in_ticks(compat, wire_server):
    response = answer(compat, wire_server, "xai", "grok-3-mini", "xai_reasoning_cost.sse")
    assert response.text == "Hello"
    assert response.message.content[0] == ThinkingBlock(
        text="First, the user said", wire={"reasoning_content": "First, the user said"}
    )
    # total_tokens 303 = 12 + 1 + 290: the reasoning is outside completion_tokens.
    assert response.usage == Usage(input=1, cache_read=11, output=291, reasoning=290)
    assert response.server_cost is not None
    assert response.server_cost.amount == Decimal("0.000146625")  # 1,466,250 ticks
    assert response.server_cost.source == "xai usage.cost_in_usd_ticks"


def test_deepseek_reasoner_tool_call_and_its_cache(compat, wire_server):
    request = Request(messages=[Message(role="user", content="Weather in SF?")], tools=[WEATHER])
    response = answer(
        compat,
        wire_server,
        "deepseek",
        "deepseek-reasoner",
        "deepseek_reasoner_tool_call.sse",
        request,
    )
    thinking, call = response.message.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.text.startswith("The user is asking for the weather in San Francisco.")
    assert call == ToolUseBlock(
        id="call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", name="weather", input={"location": "San Francisco"}
    )
    assert response.usage == Usage(input=19, cache_read=320, output=83, reasoning=39)


def test_deepseek_gets_its_reasoning_back_in_a_tool_loop(compat, wire_server):
    # DeepSeek's thinking mode wants reasoning_content back on the assistant message
    # that made the calls (a 400 "Missing reasoning_content field" otherwise).
    request = Request(messages=[Message(role="user", content="Weather in SF?")], tools=[WEATHER])
    first = answer(
        compat,
        wire_server,
        "deepseek",
        "deepseek-reasoner",
        "deepseek_reasoner_tool_call.sse",
        request,
    )
    call = first.message.content[1]
    result = ToolResultBlock(tool_use_id=call.id, content="Foggy, 14 C")
    follow = request.model_copy(
        update={
            "messages": [*request.messages, first.message, Message(role="user", content=[result])]
        }
    )
    wire_server.add_sse([{"choices": [{"delta": {"content": "Foggy."}, "finish_reason": "stop"}]}])
    compat(name="deepseek").complete("deepseek/deepseek-reasoner", follow)
    assistant = wire_server.requests[-1].json()["messages"][1]
    assert assistant["reasoning_content"] == first.message.content[0].text
    assert assistant["tool_calls"][0]["id"] == "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF"


def test_perplexity_citations_become_the_texts_citations(compat, wire_server):
    response = answer(compat, wire_server, "perplexity", "sonar", "perplexity_citations.sse")
    (text,) = response.message.content
    assert isinstance(text, TextBlock)
    assert text.text == "The current population of **[2][3]"
    assert text.citations is not None and len(text.citations) == 7
    assert text.citations[1] == {"url": "https://en.wikipedia.org/wiki/San_Francisco"}
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(input=10, output=336)  # the last running usage


def test_perplexity_reports_its_cost_in_dollars(compat, wire_server):
    response = answer(compat, wire_server, "perplexity", "sonar", "perplexity_cost.sse")
    assert response.text == "OK"
    assert response.server_cost is not None
    assert response.server_cost.amount == Decimal("0.00501")
    assert response.server_cost.source == "perplexity usage.cost.total_cost"


def test_perplexity_search_results_and_search_count(compat, wire_server):
    # Invented in the shape of Perplexity's newer answers: search_results beside citations,
    # and num_search_queries in the usage.
    results = [
        {"title": "San Francisco", "url": "https://en.wikipedia.org/wiki/San_Francisco"},
        {"title": "no url"},
    ]
    wire_server.add_sse(
        [
            {
                "model": "sonar",
                "object": "chat.completion.done",
                "citations": ["https://en.wikipedia.org/wiki/San_Francisco"],
                "search_results": results,
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "num_search_queries": 1},
                "choices": [{"index": 0, "delta": {"content": "SF."}, "finish_reason": "stop"}],
            }
        ]
    )
    response = compat(name="perplexity").complete("perplexity/sonar", "hi")
    assert response.message.content[0].citations == [results[0]]
    assert response.usage == Usage(input=5, output=2, web_searches=1)


def test_cerebras_reasoning_tool_call_and_time_info(compat, wire_server):
    request = Request(messages=[Message(role="user", content="The magic number?")])
    response = answer(
        compat, wire_server, "cerebras", "zai-glm-4.7", "cerebras_reasoning_tools.sse", request
    )
    thinking, text, call = response.message.content
    assert thinking.text.startswith("The nonUsefulTool returned the number 2026")
    assert text == TextBlock(text='{"result": "2026"}')
    assert call == ToolUseBlock(id="e0ecf32e0", name="nonUsefulTool", input={})
    assert response.usage == Usage(input=177, cache_read=256, output=122, reasoning=108)
    assert response.metadata["time_info"]["queue_time"] == 0.003384742


def test_together_token_chunks_and_eos(compat, wire_server):
    response = answer(
        compat, wire_server, "together", "meta-llama/Llama-3.3-70B", "together_tokens.sse"
    )
    assert response.text == " A: Sure"
    assert response.stop_reason == "end_turn"  # "eos"
    assert response.usage == Usage(input=18, output=4)


def test_fireworks_whole_answer_with_a_tool_call(compat, wire_server):
    request = Request(messages=[Message(role="user", content="Capital of France?")])
    response = answer(
        compat,
        wire_server,
        "fireworks",
        "accounts/fireworks/models/qwen3-30b-a3b",
        "fireworks_qwen3_tool_call.json",
        request,
    )
    assert wire_server.requests[-1].path == "/v1/chat/completions"
    text, call = response.message.content
    # Qwen3's <think> text stays text: Fireworks sent it as content.
    assert text.text.startswith("<think>\nOkay, the user is asking for the capital of France.")
    assert call == ToolUseBlock(
        id="call_Qi2Is8SYTdRWjAToAViVLGeE", name="search_capital", input={"country": "France"}
    )
    assert response.stop_reason == "tool_use"
    assert response.usage == Usage(input=172, output=118)


def test_deepinfra_reasoning_outside_completion_tokens(compat, wire_server):
    response = answer(
        compat, wire_server, "deepinfra", "google/gemma-2-9b-it", "deepinfra_reasoning_usage.json"
    )
    assert response.text == "Test response"
    # total_tokens 1184 = 19 + 84 + 1081: output counts the reasoning.
    assert response.usage == Usage(input=19, output=1165, reasoning=1081)


def test_deepinfra_reports_its_estimated_cost(compat, wire_server):
    # Invented: DeepInfra's usage.estimated_cost (US dollars) on a plain answer.
    wire_server.add_json(
        {
            "model": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
            "choices": [{"index": 0, "message": {"content": "Hi."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "estimated_cost": 0.000123},
        }
    )
    response = compat(name="deepinfra").complete("deepinfra/meta-llama/Llama-3.3-70B", "hi")
    assert response.server_cost is not None
    assert response.server_cost.amount == Decimal("0.000123")
    assert response.server_cost.source == "deepinfra usage.estimated_cost"
