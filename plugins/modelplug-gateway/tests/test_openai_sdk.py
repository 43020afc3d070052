"""The official openai SDK (sync and async, streamed and not, tools, structured output)
against the gateway running for real, on uvicorn and on granian, over core's echo and
fake models."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from typing import Any

import openai
import pytest
from modelplug.contract.routes import Price
from modelplug.contract.types import Usage
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply, structured, thinking, tool_use

HELLO = [{"role": "user", "content": "hello there"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture(params=["uvicorn", "granian"])
def server(request: pytest.FixtureRequest) -> str:
    """Every test here that serves the gateway runs on both ASGI servers."""
    return str(request.param)


def sdk(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)


def test_sync_chat_over_echo_answers_with_route_and_overhead_headers(
    make_gateway: Any, serve: Any
) -> None:
    with serve(make_gateway()) as url:
        raw = sdk(url).chat.completions.with_raw_response.create(model="echo", messages=HELLO)
    completion = raw.parse()
    assert completion.choices[0].message.content == "hello there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "echo"
    assert completion.usage is not None and completion.usage.completion_tokens == 2
    assert raw.headers["x-modelplug-route"] == "echo/echo"
    assert float(raw.headers["x-modelplug-overhead-ms"]) >= 0


def test_sync_stream_over_echo_sends_each_delta_and_usage_when_asked(
    make_gateway: Any, serve: Any
) -> None:
    with serve(make_gateway()) as url:
        chunks = list(
            sdk(url).chat.completions.create(
                model="echo",
                messages=HELLO,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["hello", " there"]
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 2


def test_stream_without_include_usage_has_no_usage_chunk(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway()) as url:
        chunks = list(sdk(url).chat.completions.create(model="echo", messages=HELLO, stream=True))
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_async_chat_and_stream_over_the_fake_model_with_its_price(
    make_gateway: Any, serve: Any
) -> None:
    price = Price(input=Decimal("1"), output=Decimal("2"))
    fake = FakeModel(
        [
            reply("first answer", usage=Usage(input=1_000_000, output=500_000)),
            reply("second answer", usage=Usage(input=10, output=3)),
        ],
        price=price,
    )

    async def calls(url: str) -> tuple[object, list[object]]:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        first = await client.chat.completions.with_raw_response.create(
            model="fake/m", messages=HELLO
        )
        stream = await client.chat.completions.create(
            model="fake/m", messages=HELLO, stream=True, stream_options={"include_usage": True}
        )
        chunks = [c async for c in stream]
        await client.close()
        return first, chunks

    with serve(make_gateway(fake)) as url:
        first, chunks = asyncio.run(calls(url))
    assert first.parse().choices[0].message.content == "first answer"  # type: ignore[attr-defined]
    assert Decimal(first.headers["x-modelplug-cost"]) == Decimal("2")  # type: ignore[attr-defined]
    assert first.headers["x-modelplug-route"] == "fake/m"  # type: ignore[attr-defined]
    usage = chunks[-1].usage  # type: ignore[attr-defined]
    assert (usage.prompt_tokens, usage.completion_tokens) == (10, 3)
    assert usage.model_extra["modelplug"]["route"] == "fake/m"
    assert Decimal(usage.model_extra["modelplug"]["cost"]) == Decimal("0.000016")
    assert fake.requests[0].messages[0].content[0].text == "hello there"


def test_tools_go_to_the_model_and_calls_come_back_in_both_modes(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel(
        [
            tool_use("weather", {"city": "Paris"}, id="call_1"),
            tool_use("weather", {"city": "Oslo"}, id="call_2"),
            reply("It is sunny."),
        ]
    )
    with serve(make_gateway(fake)) as url:
        client = sdk(url)
        plain = client.chat.completions.create(
            model="fake/m", messages=HELLO, tools=[WEATHER], tool_choice="required"
        )
        chunks = list(
            client.chat.completions.create(
                model="fake/m", messages=HELLO, tools=[WEATHER], stream=True
            )
        )
        answer = client.chat.completions.create(
            model="fake/m",
            messages=[
                *HELLO,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"},
            ],
            tools=[WEATHER],
        )
    call = plain.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert plain.choices[0].finish_reason == "tool_calls"
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1",
        "weather",
        {"city": "Paris"},
    )
    assert fake.requests[0].tools[0].name == "weather"
    assert fake.requests[0].tools[0].input_schema["required"] == ["city"]
    assert fake.requests[0].tool_choice == "any"
    # The streamed call: its start (id, name) first, its whole arguments at the end.
    deltas = [c.choices[0].delta.tool_calls for c in chunks if c.choices[0].delta.tool_calls]
    assert deltas[0][0].id == "call_2" and deltas[0][0].function.name == "weather"
    arguments = "".join(d[0].function.arguments or "" for d in deltas)
    assert json.loads(arguments) == {"city": "Oslo"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    # The tool result reached the model as a tool_result answering call_1.
    result = fake.requests[2].messages[-1].tool_results[0]
    assert result.tool_use_id == "call_1" and result.content[0].text == "sunny, 21 C"
    assert answer.choices[0].message.content == "It is sunny."


def test_response_format_json_schema_becomes_the_requests_output_schema(
    make_gateway: Any, serve: Any
) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    fake = FakeModel([structured({"city": "Paris"})])
    with serve(make_gateway(fake)) as url:
        completion = sdk(url).chat.completions.create(
            model="fake/m",
            messages=HELLO,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "place", "schema": schema, "strict": True},
            },
        )
    sent = fake.requests[0].output_schema
    assert sent is not None and sent.name == "place"
    assert sent.json_schema["required"] == ["city"]
    assert json.loads(completion.choices[0].message.content or "") == {"city": "Paris"}


def test_thinking_comes_back_as_reasoning_content(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel([thinking("let me see", "42"), thinking("hmm", "43")])
    with serve(make_gateway(fake)) as url:
        client = sdk(url)
        plain = client.chat.completions.create(
            model="fake/m", messages=HELLO, reasoning_effort="high"
        )
        chunks = list(client.chat.completions.create(model="fake/m", messages=HELLO, stream=True))
    assert plain.choices[0].message.content == "42"
    assert plain.choices[0].message.model_extra["reasoning_content"] == "let me see"
    assert fake.requests[0].thinking is not None and fake.requests[0].thinking.effort == "high"
    reasoning = [
        c.choices[0].delta.model_extra.get("reasoning_content")
        for c in chunks
        if c.choices and c.choices[0].delta.model_extra
    ]
    assert "hmm" in reasoning


def test_embeddings_in_float_and_in_the_sdks_default_base64(make_gateway: Any, serve: Any) -> None:
    from modelplug.builtin.echo import echo_vector

    with serve(make_gateway()) as url:
        client = sdk(url)
        default = client.embeddings.create(model="echo", input=["red apple", "blue sky"])
        floats = client.embeddings.create(
            model="echo", input="red apple", encoding_format="float", dimensions=8
        )
    assert [d.index for d in default.data] == [0, 1]
    assert default.data[1].embedding == pytest.approx(echo_vector("blue sky"), abs=1e-6)
    assert floats.data[0].embedding == pytest.approx(echo_vector("red apple", 8))
    assert default.usage.prompt_tokens == 4


def test_models_lists_the_allow_list_and_refuses_others(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway(models=["echo", "fast"])) as url:
        client = sdk(url)
        names = [m.id for m in client.models.list()]
        with pytest.raises(openai.NotFoundError) as refused:
            client.chat.completions.create(model="echo/other", messages=HELLO)
        allowed = client.chat.completions.create(model="echo", messages=HELLO)
    assert names == ["echo", "fast"]
    assert "not served here" in str(refused.value)
    assert allowed.choices[0].message.content == "hello there"
