"""Record what the openai and anthropic SDKs send for the calls the gateway's recorded
tests replay: ``python record_sdks.py URL`` with ``record.py`` serving at URL. Each call is
one request in record.py's output, in this order: openai ``responses.create``,
``responses.stream``, a tool round trip's two turns (the second carrying the
``function_call`` back with its ``function_call_output``); then anthropic
``messages.create``, ``messages.stream`` and a tool round trip's two turns."""

from __future__ import annotations

import sys
from typing import Any

import anthropic
import openai

WEATHER_FUNCTION = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city now",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city now",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def openai_calls(url: str) -> None:
    sdk = openai.OpenAI(base_url=url + "/v1", api_key="sk-recording", max_retries=0)
    sdk.responses.create(model="gpt-5.5", input="say hello", instructions="Be brief.")
    with sdk.responses.stream(
        model="gpt-5.5", input="say hello", reasoning={"effort": "low", "summary": "auto"}
    ) as stream:
        stream.get_final_response()
    question: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    sdk.responses.create(model="gpt-5.5", input=question, tools=[WEATHER_FUNCTION])  # type: ignore[list-item]
    call = {
        "type": "function_call",
        "call_id": "call_weather1",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
    }
    output = {"type": "function_call_output", "call_id": "call_weather1", "output": "18°C, sunny"}
    sdk.responses.create(
        model="gpt-5.5",
        input=[*question, call, output],
        tools=[WEATHER_FUNCTION],  # type: ignore[list-item]
    )


def anthropic_calls(url: str) -> None:
    sdk = anthropic.Anthropic(base_url=url, api_key="sk-recording", max_retries=0)
    hello: list[Any] = [{"role": "user", "content": "say hello"}]
    sdk.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=hello)
    with sdk.messages.stream(
        model="claude-sonnet-4-6", max_tokens=256, system="Be brief.", messages=hello
    ) as stream:
        stream.get_final_message()
    question: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    sdk.messages.create(
        model="claude-sonnet-4-6", max_tokens=256, messages=question, tools=[WEATHER_TOOL]
    )
    use = {"type": "tool_use", "id": "toolu_weather1", "name": "get_weather"}
    turn = [
        *question,
        {"role": "assistant", "content": [use | {"input": {"city": "Paris"}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_weather1", "content": "18°C, sunny"}
            ],
        },
    ]
    sdk.messages.create(
        model="claude-sonnet-4-6", max_tokens=256, messages=turn, tools=[WEATHER_TOOL]
    )


if __name__ == "__main__":
    openai_calls(sys.argv[1])
    anthropic_calls(sys.argv[1])
