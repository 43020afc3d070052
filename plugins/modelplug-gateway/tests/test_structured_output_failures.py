"""A structured answer that fails reaches the caller as what it is, never as a 404: one
cut at max_tokens inside its JSON is the answer, stopped for length
(``finish_reason: "length"``, ``stop_reason: "max_tokens"``), and the openai SDK's own
``parse`` raises its LengthFinishReasonError; one that is not JSON (or does not fit the
schema) is a 502 the SDKs do not send again, naming what was wrong."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from modelplug import Client
from modelplug.contract.types import ToolUseBlock
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply
from pydantic import BaseModel

HELLO = [{"role": "user", "content": "Where?"}]
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "place", "schema": SCHEMA}}
OUTPUT_CONFIG = {"format": {"type": "json_schema", "schema": SCHEMA}}
CUT = '{"city": "Par'


class Place(BaseModel):
    city: str


def cut() -> Any:
    return reply(CUT, stop_reason="max_tokens")


def test_a_json_answer_cut_at_max_tokens_is_a_length_finish_for_the_openai_sdk(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([cut(), cut(), cut()])
    with serve(make_gateway(fake)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = client.chat.completions.create(
            model="fake/m", messages=HELLO, response_format=JSON_SCHEMA, max_tokens=5
        )
        chunks = list(
            client.chat.completions.create(
                model="fake/m",
                messages=HELLO,
                response_format=JSON_SCHEMA,
                max_tokens=5,
                stream=True,
            )
        )
        with pytest.raises(openai.LengthFinishReasonError):
            client.chat.completions.parse(
                model="fake/m", messages=HELLO, response_format=Place, max_tokens=5
            )
    assert plain.choices[0].finish_reason == "length"
    assert plain.choices[0].message.content == CUT
    assert plain.usage is not None and plain.usage.completion_tokens > 0
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == CUT
    assert chunks[-1].choices[0].finish_reason == "length"
    assert len(fake.requests) == 3  # no re-ask, no retry


def test_a_json_answer_cut_at_max_tokens_is_a_max_tokens_stop_for_the_anthropic_sdk(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([cut(), cut()])
    with serve(make_gateway(fake)) as url:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        fields: dict[str, Any] = {
            "model": "fake/m",
            "max_tokens": 5,
            "messages": HELLO,
            "extra_body": {"output_config": OUTPUT_CONFIG},
        }
        message = client.messages.create(**fields)
        with client.messages.stream(**fields) as stream:
            streamed = stream.get_final_message()
    for answer in (message, streamed):
        assert answer.stop_reason == "max_tokens"
        assert [b.type for b in answer.content] == ["text"]
        assert answer.content[0].text == CUT  # type: ignore[union-attr]


def test_a_cut_answer_given_as_a_tool_call_comes_back_as_its_text(
    make_client: Any, serve: Any
) -> None:
    # Tool mode: the model wrote its JSON as the schema tool's input, cut short.
    from modelplug_gateway.app import Gateway
    from modelplug_gateway.auth import OpenGate
    from modelplug_gateway.settings import GatewaySettings

    as_call = reply(ToolUseBlock(id="t1", name="place", input=CUT), stop_reason="max_tokens")
    fake = FakeModel([as_call, as_call.model_copy(deep=True)])
    client: Client = make_client(fake, config={"models": {"fake/t": {"structured_output": "tool"}}})
    with serve(Gateway(client, GatewaySettings(), OpenGate())) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = sdk.chat.completions.create(
            model="fake/t", messages=HELLO, response_format=JSON_SCHEMA
        )
        chunks = list(
            sdk.chat.completions.create(
                model="fake/t", messages=HELLO, response_format=JSON_SCHEMA, stream=True
            )
        )
    assert fake.requests[0].tools[0].name == "place"  # it was asked in tool mode
    assert (plain.choices[0].finish_reason, plain.choices[0].message.content) == ("length", CUT)
    assert plain.choices[0].message.tool_calls is None
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == CUT and chunks[-1].choices[0].finish_reason == "length"


def test_an_answer_that_is_not_json_is_a_502_the_sdks_do_not_send_again(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([reply("Paris, I think.") for _ in range(2)])
    with serve(make_gateway(fake)) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=2)
        with pytest.raises(openai.InternalServerError) as raised:
            gpt.chat.completions.create(model="fake/m", messages=HELLO, response_format=JSON_SCHEMA)
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=2)
        with pytest.raises(anthropic.InternalServerError) as caught:
            claude.messages.create(
                model="fake/m",
                max_tokens=50,
                messages=HELLO,
                extra_body={"output_config": OUTPUT_CONFIG},
            )
    assert len(fake.requests) == 2  # one call each: no SDK retry
    error = raised.value
    assert error.status_code == 502 and error.response.headers["x-should-retry"] == "false"
    assert error.code == "output_validation_failed"
    assert "the answer is not JSON" in error.message
    assert caught.value.status_code == 502
    assert caught.value.body["error"]["type"] == "api_error"  # type: ignore[index]
    assert "the answer is not JSON" in caught.value.message


def test_an_answer_that_does_not_fit_the_schema_names_what_is_wrong(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([reply('{"town": "Paris"}')])
    with serve(make_gateway(fake)) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        with pytest.raises(openai.InternalServerError) as raised:
            gpt.chat.completions.create(model="fake/m", messages=HELLO, response_format=JSON_SCHEMA)
    assert raised.value.status_code == 502
    assert "does not fit the schema" in raised.value.message and "city" in raised.value.message


def test_an_answer_that_is_not_json_after_the_stream_began_is_an_error_event(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([reply("Paris, I think."), reply("Paris, I think.")])
    with serve(make_gateway(fake)) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        seen: list[str] = []
        with pytest.raises(openai.APIError) as raised:
            for chunk in gpt.chat.completions.create(
                model="fake/m", messages=HELLO, response_format=JSON_SCHEMA, stream=True
            ):
                if chunk.choices and chunk.choices[0].delta.content:
                    seen.append(chunk.choices[0].delta.content)
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        with (
            pytest.raises(anthropic.APIStatusError) as caught,
            claude.messages.stream(
                model="fake/m",
                max_tokens=50,
                messages=HELLO,
                extra_body={"output_config": OUTPUT_CONFIG},
            ) as stream,
        ):
            for _ in stream:
                pass
    # The connection was not dropped: the error arrived in the stream, in each shape.
    assert seen == ["Paris, I think."]
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["code"] == "output_validation_failed"
    assert "the answer is not JSON" in str(raised.value)
    assert caught.value.body["error"]["type"] == "api_error"  # type: ignore[index]
    assert "the answer is not JSON" in str(caught.value)
