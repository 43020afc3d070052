"""Details of reading a stream: invalid usage, hidden thinking, refusals, odd shapes."""

from __future__ import annotations

import pytest
from modelplug import ModelError
from modelplug.contract.types import Notice, TextDelta, ThinkingDelta, ThinkingRequest


def test_invalid_usage_on_the_wire_is_estimated(compat, wire_server):
    wire_server.add_sse(
        [
            {"choices": [{"delta": {"content": "abcdefgh"}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": -3}},
        ],
        done=True,
    )
    response = compat().complete("wire/m", "hi")
    assert response.usage.reported is False
    assert response.usage.output == 2 and response.usage.input > 0


def test_hidden_thinking_sends_no_deltas_but_keeps_the_wire(compat, wire_server):
    wire_server.add_sse(
        [
            {"choices": [{"delta": {"reasoning_content": "secret plan"}}]},
            {"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]},
        ],
        done=True,
    )
    events = list(compat().stream("wire/m", "hi", thinking=ThinkingRequest(hide=True)))
    assert not [e for e in events if isinstance(e, ThinkingDelta)]
    block = events[-1].response.message.content[0]
    assert block.text == "" and block.wire == {"reasoning_content": "secret plan"}


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("content_filter", "refusal"),
        ("length", "max_tokens"),
        ("stop", "end_turn"),
        ("weird", "other"),
    ],
)
def test_stop_reasons(compat, wire_server, finish, stop):
    wire_server.add_sse(
        [{"choices": [{"delta": {"content": "x"}, "finish_reason": finish}]}], done=True
    )
    assert compat().complete("wire/m", "hi").stop_reason == stop


def test_a_refusal_becomes_the_text(compat, wire_server):
    wire_server.add_sse(
        [{"choices": [{"delta": {"refusal": "I can't help with that."}, "finish_reason": "stop"}]}],
        done=True,
    )
    response = compat().complete("wire/m", "hi")
    assert (response.text, response.stop_reason) == ("I can't help with that.", "refusal")


def test_odd_shapes_missing_choices_comments_and_unknown_fields(compat, wire_server):
    wire_server.add(
        [
            b": keep-alive\n\n",
            b'data: {"object": "chat.completion.chunk"}\n\n',
            b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n',
            b'event: message\ndata: {"choices": [{"delta": {"content": "b"}}], "x_trace": 7}\n\n',
            b"data: \n\n",
            b'data: {"choices": [{"delta": {"content": "c"}, "finish_reason": "stop"}],\n'
            b'data:  "gateway": "edge-1"}\n\n',
            b"data: [DONE]",  # no blank line at the very end
        ]
    )
    events = list(compat().stream("wire/m", "hi"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "abc"
    response = events[-1].response
    assert response.text == "abc"
    assert response.metadata["x_trace"] == 7 and response.metadata["gateway"] == "edge-1"
    assert not [e for e in events if isinstance(e, Notice)]


def test_a_server_that_ignores_stream_true(compat, wire_server):
    wire_server.add_json(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": "Let me look.",
                        "tool_calls": [
                            {
                                "id": "c9",
                                "type": "function",
                                "function": {"name": "ls", "arguments": '{"dir": "/"}'},
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 7},
        }
    )
    events = list(compat().stream("wire/m", "hi"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me look."
    response = events[-1].response
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [("c9", "ls", {"dir": "/"})]
    assert (response.stop_reason, response.usage.input, response.usage.output) == ("tool_use", 9, 7)


def streamed(completion: dict) -> list[dict]:
    """The one chunk a server that honours stream=true would send for ``completion``."""
    chunk = {key: value for key, value in completion.items() if key != "choices"}
    chunk["choices"] = [
        {"delta": c.get("message") or {}, "finish_reason": c.get("finish_reason")}
        for c in completion.get("choices", [])[:1]
    ]
    return [chunk]


@pytest.mark.parametrize(
    "completion",
    [
        {
            "model": "m-2025",
            "x_trace": 7,
            "choices": [
                {
                    "message": {"role": "assistant", "reasoning_content": "hm", "content": "hé"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        },
        {"choices": [{"message": {"content": "no finish reason, no usage"}}]},
        {
            "choices": [
                {
                    "message": {
                        "content": None,
                        "tool_calls": [
                            {"id": "c1", "function": {"name": "ls", "arguments": {"dir": "/"}}},
                            {"id": "c2", "function": {"name": "cat", "arguments": '{"f": 1'}},
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        },
        {"choices": [{"message": {"refusal": "no"}, "finish_reason": "content_filter"}]},
        {"id": "no choices at all"},
    ],
)
def test_a_whole_completion_reads_as_the_same_completion_streamed(compat, wire_server, completion):
    client = compat()
    wire_server.add_json(completion)
    whole = list(client.stream("wire/m", "hi"))
    wire_server.add_sse(streamed(completion), done=True)
    assert whole == list(client.stream("wire/m", "hi"))


def test_a_whole_completion_with_an_error_fails_as_the_same_event_streamed(compat, wire_server):
    completion = {"error": {"message": "model crashed", "code": 503}}
    client = compat()
    wire_server.add_json(completion)
    with pytest.raises(ModelError) as whole:
        list(client.stream("wire/m", "hi"))
    wire_server.add_sse([completion], done=True)
    with pytest.raises(ModelError) as streamed_error:
        list(client.stream("wire/m", "hi"))
    assert (
        str(whole.value) == str(streamed_error.value) == "wire answered 503: model crashed [wire/m]"
    )
    assert whole.value.error_class == streamed_error.value.error_class


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_a_json_answer_that_is_no_completion_is_malformed(compat, wire_server, body):
    wire_server.add(body, content_type="application/json")
    with pytest.raises(ModelError) as caught:
        list(compat().stream("wire/m", "hi"))
    assert str(caught.value) == (
        f"wire sent an event that is not a JSON object: {body.decode()!r} [wire/m]"
    )
    assert caught.value.error_class.reason == "malformed stream event"
