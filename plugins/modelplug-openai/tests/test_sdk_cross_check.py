"""The same recorded bytes read by the openai SDK's own Responses stream accumulator
give the same text, calls, reasoning items and usage as this plugin."""

from __future__ import annotations

import json

import openai
import pytest
from modelplug.contract.types import ThinkingBlock

RECORDINGS = [
    "text.sse",
    "text_cached.sse",
    "parallel_calls.sse",
    "reasoning_tool_turn1.sse",
    "reasoning_tool_turn2.sse",
    "web_search.sse",
    "incomplete.sse",
]


def sdk_final(url, model):
    sdk = openai.OpenAI(base_url=url + "/v1", api_key="sk-sdk", max_retries=0)
    with sdk, sdk.responses.stream(model=model, input="hi") as stream:
        # get_final_response() wants response.completed; an incomplete response
        # ends the SDK's stream too, as an event carrying the accumulated response.
        final = None
        for event in stream:
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
        assert final is not None
        return final


@pytest.mark.parametrize("name", RECORDINGS)
def test_the_sdk_reads_the_same_answer(responses, wire_server, wire, recorded, name):
    wire_server.add_file(recorded / name)
    wire_server.add_file(recorded / name)
    final = sdk_final(wire_server.url, "gpt-5")
    _, ours = wire.run(responses(), "wire/gpt-5", "hi")

    assert ours.text == final.output_text
    calls = [
        (item.call_id, item.name, json.loads(item.arguments))
        for item in final.output
        if item.type == "function_call"
    ]
    assert [(c.id, c.name, c.input) for c in ours.tool_calls] == calls
    reasoning = [
        item.model_dump(exclude_none=True) for item in final.output if item.type == "reasoning"
    ]
    thinking = [b.wire for b in ours.message.content if isinstance(b, ThinkingBlock)]
    assert thinking == reasoning
    usage = final.usage
    assert usage is not None
    cached = usage.input_tokens_details.cached_tokens
    assert (ours.usage.input, ours.usage.cache_read) == (usage.input_tokens - cached, cached)
    assert ours.usage.output == usage.output_tokens
    assert ours.usage.reasoning == usage.output_tokens_details.reasoning_tokens
