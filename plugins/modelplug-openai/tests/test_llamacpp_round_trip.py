"""A tool call round trip with llama.cpp's llama-server on /v1/responses: the second
request carries the call, its output and the model's own reasoning in the form
llama-server reads, and the server gets the conversation it would get on its chat
endpoint.

llama-server cannot run here, so the check is :func:`llamacpp_chat_body`, a
transcription of what llama-server does with a /v1/responses body before its model sees
it: ``server_chat_convert_responses_to_chatcmpl`` (tools/server/server-chat.cpp, formerly
``convert_responses_to_chatcmpl`` in tools/server/server-common.cpp) turns the input
items into Chat Completions messages and refuses what it cannot place, with the words
below; ``oaicompat_chat_params_parse`` (tools/server/server-common.cpp) and
``common_chat_msgs_parse_oaicompat`` (common/chat.cpp) then check the messages.
The answers are recorded in the shape tools/server/server-task.cpp streams.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from modelplug.contract.types import (
    ImageBlock,
    Message,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
)

MODEL = "llama/qwen3-4b"
QUESTION = "What is the weather in Paris?"
GET_WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
CALL_ID = "fc_b2Vf9Kx4Lq7Tn1Wz8Rc3Jh6Ps5Gm0Ya2"  # llama-server's own: "fc_" + the call's id
REASONING = "The user wants the weather in Paris. I should call get_weather."
PNG = "iVBORw0KGgo="


class LlamaCppRefused(Exception):
    """What llama-server answers 400 (invalid_request_error) with, in its words."""


def _is_str(item: dict[str, Any], key: str) -> bool:
    return isinstance(item.get(key), str)


def _is_list(item: dict[str, Any], key: str) -> bool:
    return isinstance(item.get(key), list)


def _input_message(item: dict[str, Any]) -> dict[str, Any]:
    content = []
    for part in item["content"]:
        kind = part.get("type", "")
        if kind == "input_text":
            if "text" not in part:
                raise LlamaCppRefused("'Input text' requires 'text'")
            content.append({"text": part["text"], "type": "text"})
        elif kind == "input_image":
            if "image_url" not in part:
                raise LlamaCppRefused("'image_url' is required")
            content.append({"image_url": {"url": part["image_url"]}, "type": "image_url"})
        elif kind == "input_file":
            raise LlamaCppRefused("'input_file' is not supported by llamacpp at this moment")
        else:
            raise LlamaCppRefused(
                "'type' must be one of 'input_text', 'input_image', or 'input_file'"
            )
    message = {k: v for k, v in item.items() if k not in ("type", "status")}
    message["content"] = content
    return message


def _output_text(item: dict[str, Any]) -> list[dict[str, Any]]:
    content = []
    for part in item["content"]:
        if part.get("type", "") not in ("output_text", "input_text"):
            raise LlamaCppRefused("'type' must be one of 'output_text' or 'refusal'")
        if not _is_str(part, "text"):
            raise LlamaCppRefused("'Output text' requires 'text'")
        content.append({"text": part["text"], "type": "text"})
    return content


def _tool_message(item: dict[str, Any]) -> dict[str, Any]:
    output = item["output"]
    if not isinstance(output, str):
        for part in output:
            if part.get("type") != "input_text":
                raise LlamaCppRefused("Output of tool call should be 'Input text'")
        output = [{**part, "type": "text"} for part in output]
    return {"content": output, "role": "tool", "tool_call_id": item["call_id"]}


def _reasoning(item: dict[str, Any]) -> str:
    if not _is_list(item, "content"):
        raise LlamaCppRefused("item['content'] is not an array")
    if not item["content"]:
        raise LlamaCppRefused("item['content'] is empty")
    if not _is_str(item["content"][0], "text"):
        raise LlamaCppRefused("item['content']['text'] is not a string")
    text: str = item["content"][0]["text"]
    return text


def _append(messages: list[dict[str, Any]], item: dict[str, Any]) -> None:
    """One input item onto the chat messages, as the converter's loop places it."""
    merge_prev = bool(messages) and messages[-1].get("role") == "assistant"
    if _is_str(item, "content"):
        item = {**item, "content": [{"text": item["content"], "type": "input_text"}]}
    role, kind = item.get("role"), item.get("type")
    if _is_list(item, "content") and role in ("user", "system", "developer"):
        messages.append(_input_message(item))
    elif role == "assistant" and kind == "message":
        content = _output_text(item)
        if merge_prev:
            messages[-1].setdefault("content", []).extend(content)
        else:
            messages.append({"role": "assistant", "content": content})
    elif kind == "function_call" and all(
        _is_str(item, k) for k in ("arguments", "call_id", "name")
    ):
        call = {
            "function": {"arguments": item["arguments"], "name": item["name"]},
            "id": item["call_id"],
            "type": "function",
        }
        if merge_prev:
            messages[-1].setdefault("tool_calls", []).append(call)
        else:
            messages.append({"role": "assistant", "tool_calls": [call]})
    elif (
        kind == "function_call_output"
        and _is_str(item, "call_id")
        and isinstance(item.get("output"), str | list)
    ):
        messages.append(_tool_message(item))
    elif kind == "reasoning" and _is_list(item, "summary"):
        text = _reasoning(item)
        if merge_prev:
            messages[-1]["reasoning_content"] = text
        else:
            messages.append({"role": "assistant", "content": [], "reasoning_content": text})
    else:
        raise LlamaCppRefused("Cannot determine type of 'item'")


def _check_messages(messages: list[dict[str, Any]]) -> None:
    """oaicompat_chat_params_parse's and common_chat_msgs_parse_oaicompat's checks."""
    for message in messages:
        role = message.get("role")
        if role != "assistant" and "content" not in message:
            raise LlamaCppRefused("All non-assistant messages must contain 'content'")
        if role == "assistant" and "content" not in message and "tool_calls" not in message:
            raise LlamaCppRefused(
                "Assistant message must contain either 'content' or 'tool_calls'!"
            )
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") not in ("text", "image_url"):
                raise LlamaCppRefused("unsupported content[].type")
        for call in message.get("tool_calls", []):
            if call.get("type") != "function" or "name" not in call.get("function", {}):
                raise LlamaCppRefused("Expected 'function' in tool call")
            json.loads(call["function"]["arguments"])  # templates get the arguments parsed


def llamacpp_chat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The Chat Completions body llama-server makes of a /v1/responses body, or
    :class:`LlamaCppRefused` where llama-server answers 400."""
    if "input" not in body:
        raise LlamaCppRefused("'input' is required")
    if body.get("previous_response_id"):
        raise LlamaCppRefused("llama.cpp does not support 'previous_response_id'.")
    messages: list[dict[str, Any]] = []
    if "instructions" in body:
        messages.append({"role": "system", "content": body["instructions"]})
    given = body["input"]
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
    elif isinstance(given, list):
        for item in given:
            _append(messages, item)
    else:
        raise LlamaCppRefused("'input' must be a string or array of objects")
    for tool in body.get("tools", []):
        if tool.get("type") != "function":
            raise LlamaCppRefused("'type' of tool must be 'function'")
    _check_messages(messages)
    chat = {k: v for k, v in body.items() if k not in ("input", "instructions")}
    chat["messages"] = messages
    return chat


def two_turns(responses, wire_server, wire, recorded, tool_result, **provider):
    """The round trip: the model calls get_weather, the tool answers, the model answers.
    Returns the second request's body and the second answer."""
    wire_server.add_file(recorded / "llamacpp_tool_turn1.sse")
    wire_server.add_file(recorded / "llamacpp_tool_turn2.sse")
    client = responses(name="llama", **provider)
    _, first = wire.run(client, MODEL, QUESTION, tools=[GET_WEATHER])
    call = first.tool_calls[0]
    # The conversation goes through JSON between the turns, as an application keeps it.
    second_request = Request.model_validate_json(
        Request(
            messages=[
                Message(role="user", content=QUESTION),
                first.message,
                Message(role="user", content=[tool_result(call.id)]),
            ],
            tools=[GET_WEATHER],
        ).model_dump_json()
    )
    _, second = wire.run(client, MODEL, second_request)
    return wire_server.requests[1].json(), second


def test_a_tool_call_round_trip_reaches_llama_server_as_its_chat_conversation(
    responses, wire_server, wire, recorded
):
    body, second = two_turns(
        responses,
        wire_server,
        wire,
        recorded,
        lambda call_id: ToolResultBlock(tool_use_id=call_id, content="sunny, 21 °C"),
    )
    assert llamacpp_chat_body(body)["messages"] == [
        {"role": "user", "content": [{"text": QUESTION, "type": "text"}]},
        {
            "role": "assistant",
            "content": [{"text": "Let me check.", "type": "text"}],
            "reasoning_content": REASONING,
            "tool_calls": [
                {
                    "function": {"arguments": '{"city": "Paris"}', "name": "get_weather"},
                    "id": CALL_ID,
                    "type": "function",
                }
            ],
        },
        {"content": "sunny, 21 °C", "role": "tool", "tool_call_id": CALL_ID},
    ]
    assert wire.sdk_checked(body) == body  # and OpenAI's own types read every item
    assert second.text == "It is sunny in Paris, 21 °C."
    assert second.stop_reason == "end_turn"


def test_llama_servers_reasoning_goes_back_with_its_call_as_it_came(
    responses, wire_server, wire, recorded
):
    # llama-server sends a reasoning item with its text in content and an empty
    # encrypted_content; it goes back to the same model whole, so the model's thinking
    # carries across the tool call as on llama-server's chat endpoint.
    body, _ = two_turns(
        responses,
        wire_server,
        wire,
        recorded,
        lambda call_id: ToolResultBlock(tool_use_id=call_id, content="sunny"),
    )
    sent = body["input"]
    assert [item.get("type", "message") for item in sent] == [
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    turn1 = wire.final_output("llamacpp_tool_turn1.sse")
    assert sent[1] == turn1[0]
    assert sent[3] == {
        "type": "function_call",
        "call_id": CALL_ID,
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    assert sent[4] == {"type": "function_call_output", "call_id": CALL_ID, "output": "sunny"}


def test_a_reasoning_item_with_no_text_and_no_encrypted_content_stays_out(
    responses, wire_server, wire
):
    # The item would be refused by llama-server ("item['content'] is empty") and by
    # OpenAI with store: false (an id it cannot find): it has nothing to carry.
    empty = {
        "id": "rs_1",
        "summary": [],
        "type": "reasoning",
        "content": [],
        "encrypted_content": "",
    }
    wire_server.add_file(wire.RECORDED / "llamacpp_tool_turn2.sse")
    request = Request(
        messages=[
            Message(role="user", content=QUESTION),
            Message(
                role="assistant",
                model=MODEL,
                content=[ThinkingBlock(text="", wire=empty), TextBlock(text="Hello.")],
            ),
            Message(role="user", content="And tomorrow?"),
        ]
    )
    wire.run(responses(name="llama"), MODEL, request)
    body = wire_server.requests[0].json()
    assert "reasoning" not in [item.get("type") for item in body["input"]]
    assert llamacpp_chat_body(body)["messages"][1] == {
        "role": "assistant",
        "content": [{"text": "Hello.", "type": "text"}],
    }


@pytest.mark.parametrize("is_error", [False, True])
def test_a_tool_result_with_an_image_reaches_llama_server_as_text_then_the_image(
    responses, wire_server, wire, recorded, is_error
):
    body, _ = two_turns(
        responses,
        wire_server,
        wire,
        recorded,
        lambda call_id: ToolResultBlock(
            tool_use_id=call_id,
            content=[TextBlock(text="map"), ImageBlock(media_type="image/png", data=PNG)],
            is_error=is_error,
        ),
        server="llamacpp",
    )
    messages = llamacpp_chat_body(body)["messages"]
    assert messages[2] == {
        "content": "Error: map" if is_error else "map",
        "role": "tool",
        "tool_call_id": CALL_ID,
    }
    assert messages[3] == {
        "role": "user",
        "content": [
            {
                "text": f"[The tool result {CALL_ID} included 1 image(s); they follow.]",
                "type": "text",
            },
            {"image_url": {"url": f"data:image/png;base64,{PNG}"}, "type": "image_url"},
        ],
    }
    assert wire.sdk_checked(body) == body


def test_a_tool_result_with_an_image_goes_to_openai_inside_the_output(
    responses, wire_server, wire, recorded
):
    # OpenAI takes images in a call's output; only a server said to be llama.cpp gets
    # them apart.
    body, _ = two_turns(
        responses,
        wire_server,
        wire,
        recorded,
        lambda call_id: ToolResultBlock(
            tool_use_id=call_id, content=[ImageBlock(media_type="image/png", data=PNG)]
        ),
    )
    assert body["input"][-1]["output"] == [
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"}
    ]
    with pytest.raises(LlamaCppRefused, match="Output of tool call should be 'Input text'"):
        llamacpp_chat_body(body)


def test_the_mirror_refuses_what_llama_server_refuses():
    # The check above would pass anything if it refused nothing: these bodies are
    # what llama-server answers 400 to.
    def refused(items: list[dict[str, Any]]) -> str:
        with pytest.raises(LlamaCppRefused) as caught:
            llamacpp_chat_body({"model": "m", "input": items})
        return str(caught.value)

    assert refused([{"role": "assistant", "content": "hi"}]) == "Cannot determine type of 'item'"
    assert (
        refused([{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}])
        == "Cannot determine type of 'item'"
    )
    assert (
        refused([{"type": "reasoning", "summary": [], "encrypted_content": "x"}])
        == "item['content'] is not an array"
    )
