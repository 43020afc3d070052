"""A whole turn through the Client: the model calls a tool, the loop answers, the
model replies; the second request carries the call and its result exactly."""

from __future__ import annotations

from modelplug.contract.types import Message, Request, TextDelta, ToolResultBlock, ToolSpec

CALL = [
    {
        "choices": [
            {
                "delta": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "add", "arguments": ""},
                        }
                    ],
                }
            }
        ]
    },
    {
        "choices": [
            {"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 2, '}}]}}
        ]
    },
    {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"b": 3}'}}]}}]},
    {
        "choices": [{"delta": {}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10},
    },
]
ANSWER = [
    {"choices": [{"delta": {"content": "2 + 3 = "}}]},
    {
        "choices": [{"delta": {"content": "5"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 70, "completion_tokens": 4},
    },
]
TOOLS = {"add": lambda a, b: str(a + b)}


def test_a_whole_turn_with_a_tool_loop(compat, wire_server):
    wire_server.add_sse(CALL, done=True)
    wire_server.add_sse(ANSWER, done=True)
    client = compat()
    request = Request(
        system="You add.",
        messages=[Message(role="user", content="2+3?")],
        tools=[ToolSpec(name="add", input_schema={"type": "object"})],
    )
    shown: list[str] = []
    for _ in range(3):
        response = client.complete(
            "wire/m",
            request,
            on_event=lambda e: shown.append(e.text) if isinstance(e, TextDelta) else None,
        )
        request.messages.append(response.message)
        if response.stop_reason != "tool_use":
            break
        results = [
            ToolResultBlock(tool_use_id=call.id, content=TOOLS[call.name](**call.input))
            for call in response.tool_calls
        ]
        request.messages.append(Message(role="user", content=results))
    assert response.text == "2 + 3 = 5" and "".join(shown) == "2 + 3 = 5"
    assert len(wire_server.requests) == 2
    assert wire_server.requests[1].json()["messages"] == [
        {"role": "system", "content": "You add."},
        {"role": "user", "content": "2+3?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
    ]
    assert request.messages[1].model == "wire/m"
