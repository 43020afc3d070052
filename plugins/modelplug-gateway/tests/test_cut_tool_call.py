"""A tool call cut at max_tokens reaches a gateway caller as the answer it is, stopped
for length (finish_reason "length", stop_reason "max_tokens"), its cut arguments never
sent: core's TruncatedToolCallError is for library callers, and an SDK reads its own
wire's length stop. Nothing is sent again."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
from modelplug.contract.types import ToolUseBlock
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply

HELLO = [{"role": "user", "content": "Weather in Paris?"}]
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
CUT = '{"city": "Par'


def cut() -> Any:
    return reply(
        "Let me check.",
        ToolUseBlock(id="t1", name="get_weather", input=CUT),
        stop_reason="max_tokens",
    )


def test_the_openai_sdk_gets_a_length_finish_and_no_call(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel([cut(), cut()])
    with serve(make_gateway(fake)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = client.chat.completions.create(
            model="fake/m", messages=HELLO, tools=[TOOL], max_tokens=5
        )
        chunks = list(
            client.chat.completions.create(
                model="fake/m", messages=HELLO, tools=[TOOL], max_tokens=5, stream=True
            )
        )
    choice = plain.choices[0]
    assert (choice.finish_reason, choice.message.content) == ("length", "Let me check.")
    assert choice.message.tool_calls is None
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "length"
    # The stream showed the call's start as it came (as the provider's own stream does),
    # never its cut arguments; the length finish tells the SDK not to run it.
    sent = [
        call.function.arguments or ""
        for c in chunks
        if c.choices
        for call in c.choices[0].delta.tool_calls or ()
        if call.function is not None
    ]
    assert "Par" not in "".join(sent)
    assert len(fake.requests) == 2  # one each: not sent again


def test_the_anthropic_sdk_gets_a_max_tokens_stop_and_no_call(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([cut(), cut()])
    with serve(make_gateway(fake)) as url:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        fields: dict[str, Any] = {
            "model": "fake/m",
            "max_tokens": 5,
            "messages": HELLO,
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        }
        message = client.messages.create(**fields)
        with client.messages.stream(**fields) as stream:
            streamed = stream.get_final_message()
    assert message.stop_reason == "max_tokens"
    assert [b.type for b in message.content] == ["text"]
    # Streamed, the call's start was shown as it came (as Claude's own stream shows it),
    # never its cut input; the max_tokens stop tells the SDK's caller not to run it.
    assert streamed.stop_reason == "max_tokens"
    assert [b.input for b in streamed.content if b.type == "tool_use"] in ([], [{}])
    assert len(fake.requests) == 2
