"""The Responses shape (``POST /v1/responses``, issue 46 item 2) through the official
openai SDK against the gateway on a real ASGI server, over a scripted model: what the
request becomes, the answer's items, the stream's events in OpenAI's order (checked by
the SDK's own ``responses.stream`` accumulation), reasoning that comes back to the
model that wrote it, and the refusals of what needs stored state."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest
from modelplug import ThinkingBlock, ToolResultBlock, ToolUseBlock, Usage
from modelplug.testing import FakeModel, reply, thinking, tool_use

TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def sdk_for(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


def test_a_string_input_and_instructions_become_the_request(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel([reply("Hi there!", usage=Usage(input=7, output=3, cache_read=2))])
    with serve(make_gateway(fake)) as url:
        raw = sdk_for(url).responses.with_raw_response.create(
            model="fake/m",
            input="hello",
            instructions="Be brief.",
            max_output_tokens=50,
            temperature=0.5,
            reasoning={"effort": "low"},
            store=False,
        )
    answer = raw.parse()
    (request,) = fake.requests
    assert request.system == "Be brief."
    assert [(m.role, m.text) for m in request.messages] == [("user", "hello")]
    assert (request.max_tokens, request.temperature) == (50, 0.5)
    assert request.thinking is not None and request.thinking.effort == "low"
    assert answer.output_text == "Hi there!"
    assert answer.status == "completed" and answer.object == "response"
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (9, 3)
    assert answer.usage.input_tokens_details.cached_tokens == 2
    assert answer.instructions == "Be brief."
    assert raw.headers["x-modelplug-route"] == "fake/m"


def test_a_tool_round_trip_calls_then_reads_the_output(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel(
        [tool_use("get_weather", {"city": "Paris"}, id="call_1"), reply("It is sunny.")]
    )
    with serve(make_gateway(fake)) as url:
        sdk = sdk_for(url)
        first = sdk.responses.create(
            model="fake/m", input="Weather in Paris?", tools=[TOOL], tool_choice="required"
        )
        (call,) = [item for item in first.output if item.type == "function_call"]
        second = sdk.responses.create(
            model="fake/m",
            input=[
                {"role": "user", "content": "Weather in Paris?"},
                *[item.model_dump(exclude_none=True) for item in first.output],
                {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"},
            ],
            tools=[TOOL],
        )
    assert (call.name, json.loads(call.arguments), call.call_id) == (
        "get_weather",
        {"city": "Paris"},
        "call_1",
    )
    assert fake.requests[0].tool_choice == "any"
    assert fake.requests[0].tools[0].input_schema == TOOL["parameters"]
    sent = fake.requests[1].messages
    assert [m.role for m in sent] == ["user", "assistant", "user"]
    assert isinstance(sent[1].content[0], ToolUseBlock)
    result = sent[2].content[0]
    assert isinstance(result, ToolResultBlock)
    assert (result.tool_use_id, result.text) == ("call_1", "sunny")
    assert second.output_text == "It is sunny."


def test_the_stream_parses_with_the_sdks_accumulating_helper(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel(
        [
            reply(
                ThinkingBlock(text="Let me look.", signature="sig", wire={"type": "thinking"}),
                "Checking.",
                ToolUseBlock(id="call_9", name="get_weather", input={"city": "Oslo"}),
                usage=Usage(input=11, output=5),
            )
        ]
    )
    with serve(make_gateway(fake)) as url:
        stream = sdk_for(url).responses.stream(model="fake/m", input="Oslo?", tools=[TOOL])
        with stream as events:
            kinds = [event.type for event in events]
            final = events.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert "response.reasoning_summary_text.delta" in kinds
    assert kinds.index("response.function_call_arguments.delta") < kinds.index(
        "response.function_call_arguments.done"
    )
    assert [item.type for item in final.output] == ["reasoning", "message", "function_call"]
    assert final.output_text == "Checking."
    call = final.output[2]
    assert call.type == "function_call" and json.loads(call.arguments) == {"city": "Oslo"}
    assert final.usage is not None and final.usage.total_tokens == 16


def test_a_structured_answer_follows_text_format(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel([reply('{"city": "Rome", "temp": 21}')])
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "temp": {"type": "integer"}},
        "required": ["city", "temp"],
        "additionalProperties": False,
    }
    with serve(make_gateway(fake)) as url:
        answer = sdk_for(url).responses.create(
            model="fake/m",
            input="Rome",
            text={"format": {"type": "json_schema", "name": "weather", "schema": schema}},
        )
    (request,) = fake.requests
    assert request.output_schema is not None
    assert (request.output_schema.name, request.output_schema.json_schema) == ("weather", schema)
    assert json.loads(answer.output_text) == {"city": "Rome", "temp": 21}


def test_reasoning_goes_back_to_the_model_that_wrote_it_and_no_other(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([thinking("Hmm.", "First."), reply("Second."), reply("Third.")])
    with serve(make_gateway(fake)) as url:
        sdk = sdk_for(url)
        first = sdk.responses.create(
            model="fake/a", input="one", include=["reasoning.encrypted_content"]
        )
        history = [
            {"role": "user", "content": "one"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"role": "user", "content": "two"},
        ]
        same = sdk.responses.with_raw_response.create(model="fake/a", input=history)
        other = sdk.responses.with_raw_response.create(model="fake/b", input=history)
    (item,) = [i for i in first.output if i.type == "reasoning"]
    assert item.encrypted_content  # the signed block, to come back
    back = fake.requests[1].messages[1]
    (block,) = [b for b in back.content if isinstance(b, ThinkingBlock)]
    assert (block.signature, block.text, back.model) == ("sig", "Hmm.", "fake/a")
    assert "x-modelplug-dropped" not in same.headers
    assert other.headers["x-modelplug-dropped"] == "input.reasoning"


@pytest.mark.parametrize(
    ("field", "value"),
    [("previous_response_id", "resp_123"), ("conversation", "conv_123")],
)
def test_what_needs_stored_state_is_a_400_naming_the_field(
    make_gateway: Any, serve: Any, field: str, value: str
) -> None:
    fake = FakeModel([])
    with serve(make_gateway(fake)) as url, pytest.raises(openai.BadRequestError) as raised:
        sdk_for(url).responses.create(model="fake/m", input="hi", **{field: value})
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["type"] == "invalid_request_error"
    assert body["message"].startswith(f"{field}: the gateway keeps no")
    assert fake.requests == []


def test_a_stored_response_is_a_404_in_the_responses_shape(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway()) as url:
        with pytest.raises(openai.NotFoundError) as raised:
            sdk_for(url).responses.retrieve("resp_123")
        deleted = httpx2.delete(url + "/v1/responses/resp_123")
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["type"] == "not_found_error"
    assert "keeps no responses" in body["message"]
    assert deleted.status_code == 404
    assert deleted.json()["error"]["code"] == "not_found_error"
