"""Replay across turns: thought signatures go back unchanged on their own parts, to the
model that wrote them only; thought summaries never go back to any model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelplug import Request
from modelplug.client.client import Client
from modelplug.contract.types import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
)
from modelplug.host.known_providers import example_spec
from modelplug_kit.testing import WireServer

MULTIPLY = ToolSpec(
    name="multiply",
    description="Multiply two numbers.",
    input_schema={
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    },
)
SIGNATURE_START = "Et0BCtoBAXLI2nwMB4mo"
FLASH_3 = "gemini/gemini-3-flash-preview"


def first_turn(client: Client, server: WireServer, recorded: Callable[[str], Path]) -> Message:
    server.add_file(recorded("tool_call_signed.sse"))
    response = client.complete(FLASH_3, "What is 5 times 3?", tools=[MULTIPLY])
    assert response.stop_reason == "tool_use"
    return response.message


def conversation(answer: Message, result: Any = "15") -> list[Message]:
    call = answer.tool_calls[0]
    return [
        Message(role="user", content="What is 5 times 3?"),
        answer,
        Message(role="user", content=[ToolResultBlock(tool_use_id=call.id, content=result)]),
    ]


def signatures(body: dict[str, Any]) -> list[str]:
    return [
        part["thoughtSignature"]
        for content in body["contents"]
        for part in content["parts"]
        if "thoughtSignature" in part
    ]


def test_second_request_carries_the_signature_unchanged_on_its_call(
    gemini_client: Callable[..., Client], wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    client = gemini_client()
    answer = first_turn(client, wire_server, recorded)
    recorded_signature = json.loads(
        recorded("tool_call_signed.sse").read_text().split("data: ")[1]
    )["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    wire_server.add_file(recorded("tool_answer.sse"))
    final = client.complete(FLASH_3, Request(messages=conversation(answer), tools=[MULTIPLY]))
    assert final.text == "5 times 3 is 15."
    body = wire_server.requests[1].json()
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "What is 5 times 3?"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "multiply", "args": {"y": 3, "x": 5}},
                    "thoughtSignature": recorded_signature,
                }
            ],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "multiply", "response": {"output": "15"}}}],
        },
    ]


def test_another_model_gets_none_of_the_signatures(
    gemini_client: Callable[..., Client], wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    client = gemini_client()
    answer = first_turn(client, wire_server, recorded)
    wire_server.add_file(recorded("text.sse"))
    client.complete(
        "gemini/gemini-2.5-flash", Request(messages=conversation(answer), tools=[MULTIPLY])
    )
    body = wire_server.requests[1].json()
    assert signatures(body) == []
    model_turn = body["contents"][1]
    assert model_turn == {
        "role": "model",
        "parts": [{"functionCall": {"name": "multiply", "args": {"y": 3, "x": 5}}}],
    }


def test_a_gemini_3_model_gets_the_placeholder_for_calls_it_did_not_make(
    gemini_client: Callable[..., Client], wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    client = gemini_client()
    answer = first_turn(client, wire_server, recorded)
    # The same conversation, as if another model had made the call.
    foreign = answer.model_copy(update={"model": example_spec("anthropic")})
    wire_server.add_file(recorded("tool_answer.sse"))
    client.complete(FLASH_3, Request(messages=conversation(foreign), tools=[MULTIPLY]))
    body = wire_server.requests[1].json()
    assert signatures(body) == ["skip_thought_signature_validator"]
    assert SIGNATURE_START not in json.dumps(body)


def test_thought_summaries_never_go_back_even_to_the_same_model(
    gemini_client: Callable[..., Client], wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    client = gemini_client()
    wire_server.add_file(recorded("thinking.sse"))
    spec = "gemini/gemini-3.6-flash"
    first = client.complete(spec, "Name a pet", thinking={"effort": "low"})
    assert first.message.content[0].type == "thinking"
    wire_server.add_file(recorded("text.sse"))
    messages = [
        Message(role="user", content="Name a pet"),
        first.message,
        Message(role="user", content="Another"),
    ]
    client.complete(spec, Request(messages=messages))
    body = wire_server.requests[1].json()
    model_turn = body["contents"][1]
    assert len(model_turn["parts"]) == 1
    part = model_turn["parts"][0]
    assert part["text"] == "Scoop"  # the text, with the signature that rode after it
    assert part["thoughtSignature"].startswith("Eq0JCqoJARFNMg")
    assert "Considering the Constraint" not in json.dumps(body)


def test_parallel_calls_replay_with_one_signature_and_results_in_order(
    gemini_client: Callable[..., Client], wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    client = gemini_client()
    weather = ToolSpec(
        name="get_weather",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    wire_server.add_file(recorded("parallel_calls.sse"))
    answer = client.complete(FLASH_3, "Weather in Paris and London?", tools=[weather]).message
    paris, london = answer.tool_calls
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    results = Message(
        role="user",
        content=[
            ToolResultBlock(tool_use_id=paris.id, content=[TextBlock(text="18C"), image]),
            ToolResultBlock(tool_use_id=london.id, content="rain", is_error=True),
        ],
    )
    wire_server.add_file(recorded("tool_answer.sse"))
    client.complete(
        FLASH_3,
        Request(
            messages=[Message(role="user", content="Weather?"), answer, results], tools=[weather]
        ),
    )
    body = wire_server.requests[1].json()
    calls = body["contents"][1]["parts"]
    assert [p["functionCall"]["args"]["city"] for p in calls] == ["Paris", "London"]
    assert "thoughtSignature" in calls[0] and "thoughtSignature" not in calls[1]
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"output": "18C"}}},
        {"functionResponse": {"name": "get_weather", "response": {"error": "rain"}}},
        # Images a tool returned go right after the function responses (seed 001).
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
    ]


def test_ids_the_api_gave_go_back_to_the_same_model_only(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    event = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {
                            "functionCall": {
                                "id": "fc-7",
                                "name": "multiply",
                                "args": {"x": 2, "y": 4},
                            }
                        }
                    ],
                    "role": "model",
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
    }
    client = gemini_client()
    wire_server.add_sse([event])
    answer = client.complete(FLASH_3, "2 times 4?", tools=[MULTIPLY]).message
    assert answer.tool_calls[0].id == "fc-7"
    messages = conversation(answer, "8")
    for spec in (FLASH_3, "gemini/gemini-2.5-flash"):
        wire_server.add_file(Path(__file__).parent / "recorded" / "tool_answer.sse")
        client.complete(spec, Request(messages=messages, tools=[MULTIPLY]))
    same, other = (r.json() for r in wire_server.requests[1:])
    assert same["contents"][1]["parts"][0]["functionCall"]["id"] == "fc-7"
    assert same["contents"][2]["parts"][0]["functionResponse"]["id"] == "fc-7"
    assert "id" not in other["contents"][1]["parts"][0]["functionCall"]
    assert "id" not in other["contents"][2]["parts"][0]["functionResponse"]


def test_a_signature_on_a_thought_part_goes_back_on_an_empty_text_part(
    gemini_client: Callable[..., Client], wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    event = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "Planning...", "thought": True},
                        {"thought": True, "thoughtSignature": "c2lnbmF0dXJlLW9uLWEtdGhvdWdodA=="},
                        {"text": "Answer."},
                    ],
                    "role": "model",
                },
                "finishReason": "STOP",
            }
        ]
    }
    client = gemini_client()
    wire_server.add_sse([event])
    first = client.complete(FLASH_3, "q", thinking={})
    assert [b.type for b in first.message.content] == ["thinking", "opaque", "text"]
    wire_server.add_file(recorded("tool_answer.sse"))
    messages = [
        Message(role="user", content="q"),
        first.message,
        Message(role="user", content="more"),
    ]
    client.complete(FLASH_3, Request(messages=messages))
    assert wire_server.requests[1].json()["contents"][1]["parts"] == [
        {"text": "", "thoughtSignature": "c2lnbmF0dXJlLW9uLWEtdGhvdWdodA=="},
        {"text": "Answer."},
    ]
