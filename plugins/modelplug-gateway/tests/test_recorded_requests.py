"""Requests recorded from real clients, replayed through the gateway in front of each
provider type (issue 46, item 3).

The bodies and headers in ``recorded/`` were sent by the clients themselves (each file's
``recorded`` field names the client, its version, the command and the date; credentials
were never written down, Claude Code's device id is zeroed): Claude Code, Codex, the
anthropic SDK and the openai SDK's Responses calls. Each is posted
as recorded (the ``model`` field aside: a spec of the upstream under test) to the gateway
on a real ASGI server, in front of a loopback upstream of each type that serves the
provider plugins' own recorded answers (``recordings/``, first lines say where from):
Anthropic Messages, OpenAI-compatible Chat Completions and OpenAI Responses. The answer
must be a 200 in the caller's shape with the recorded text, and the upstream must get
what the client asked for, as far as it can take it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

import httpx2
import pytest
from modelplug import Client
from modelplug.testing import FakeModel
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.settings import GatewaySettings
from modelplug_kit.testing import RecordedRequest, WireServer

RECORDED = Path(__file__).parent / "recorded"
RECORDINGS = Path(__file__).parent / "recordings"


class Upstream:
    """A provider of one type on the loopback upstream: its spec prefix, where the
    gateway calls it and the recorded answer it serves."""

    def __init__(
        self, name: str, kind: str, base: str, path: str, recording: str, text: str
    ) -> None:
        self.name, self.kind, self.base, self.path = name, kind, base, path
        self.recording, self.text = RECORDINGS / recording, text

    def __repr__(self) -> str:
        return self.kind


UPSTREAMS = [
    Upstream("claude", "anthropic", "", "/v1/messages", "anthropic_text.sse", "Hello, world!"),
    Upstream(
        "compat",
        "openai-compatible",
        "/v1",
        "/v1/chat/completions",
        "openai_compat_text.sse",
        "Sockets wait in silence — café ☕",
    ),
    Upstream(
        "resp",
        "openai-responses",
        "/v1",
        "/v1/responses",
        "openai_responses_text.sse",
        "The final result is **570**.",
    ),
]
ANTHROPIC, COMPAT, RESPONSES = UPSTREAMS


def recorded(name: str) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text())
    assert entry["recorded"].startswith("recorded from "), "a fixture must say where from"
    return entry


class Running:
    """A gateway running for the module; the ``wire`` fixture swaps the Client it calls."""

    def __init__(self, serving: Callable[..., AbstractContextManager[str]]) -> None:
        self.app = Gateway(Client(plugins=[FakeModel()]), GatewaySettings(), OpenGate())
        self._stack = ExitStack()
        self.url = self._stack.enter_context(serving(self.app, server="uvicorn"))

    def stop(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def gateway(serving: Callable[..., AbstractContextManager[str]]) -> Iterator[Running]:
    running = Running(serving)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def wire(
    gateway: Running, make_client: Callable[..., Client], modelplug_config_dir: Path
) -> Iterator[WireServer]:
    """The gateway calls ``claude/...``, ``compat/...`` and ``resp/...`` on a recording
    loopback upstream of the test's own (so one test's failure leaves no answer queued
    for the next)."""
    upstream = WireServer().start()
    (modelplug_config_dir / "config.toml").write_text(
        "".join(
            f'[providers.{up.name}]\ntype = "{up.kind}"\nbase_url = "{upstream.url}{up.base}"\n'
            for up in UPSTREAMS
        )
    )
    gateway.app.client = make_client(
        "modelplug-anthropic", "modelplug-openai-compat", "modelplug-openai", entry_points=True
    )
    try:
        yield upstream
    finally:
        upstream.stop()


def replay(gateway: Running, entry: dict[str, Any], model: str) -> httpx2.Response:
    """Post ``entry``'s body, with ``model`` as its model, as the client did."""
    body = {**entry["body"], "model": model}
    url = gateway.url + entry["path"] + (f"?{entry['query']}" if entry["query"] else "")
    with httpx2.Client(timeout=30) as http:
        return http.request(
            entry["method"], url, headers=entry["headers"], content=json.dumps(body).encode()
        )


def events(answer: httpx2.Response) -> list[dict[str, Any]]:
    """An SSE answer's events (their data), checking each names its type alike."""
    out = []
    for frame in answer.text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if "data" not in lines:
            continue
        event = json.loads(lines["data"])
        assert lines.get("event", event["type"]) == event["type"]
        out.append(event)
    return out


def messages_stream_text(answer: httpx2.Response) -> str:
    """The text of a well-formed Messages stream: message_start first, message_stop last,
    every delta inside a block it opened."""
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    stream = events(answer)
    assert stream[0]["type"] == "message_start"
    assert stream[-1]["type"] == "message_stop"
    assert stream[-2]["type"] == "message_delta"
    open_blocks: set[int] = set()
    text = ""
    for event in stream[1:-2]:
        if event["type"] == "content_block_start":
            open_blocks.add(event["index"])
        elif event["type"] == "content_block_stop":
            open_blocks.remove(event["index"])
        elif event["type"] == "content_block_delta":
            assert event["index"] in open_blocks
            if event["delta"]["type"] == "text_delta":
                text += event["delta"]["text"]
        else:
            assert event["type"] == "ping", event
    assert not open_blocks
    return text


def message_text(answer: httpx2.Response) -> str:
    assert answer.status_code == 200, answer.text
    message = answer.json()
    assert (message["type"], message["role"]) == ("message", "assistant")
    assert message["stop_reason"] == "end_turn"
    return "".join(block["text"] for block in message["content"] if block["type"] == "text")


def tool_names(up: Upstream, sent: RecordedRequest) -> list[str]:
    tools = sent.json().get("tools", [])
    if up.kind == "openai-compatible":
        return [tool["function"]["name"] for tool in tools]
    return [tool["name"] for tool in tools]


# -- Claude Code ------------------------------------------------------------------------


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_claude_code_turn_is_answered_on_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    entry = recorded("claude_code_say_hello")
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, f"{up.name}/some-model")
    assert messages_stream_text(answer) == up.text
    (sent,) = wire.requests
    assert sent.path == up.path
    offered = [tool["name"] for tool in entry["body"]["tools"]]
    assert tool_names(up, sent) == offered


def test_claude_code_betas_reach_an_anthropic_upstream(gateway: Running, wire: WireServer) -> None:
    entry = recorded("claude_code_say_hello")
    wire.add_file(ANTHROPIC.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, "claude/claude-opus-5-5")
    assert answer.status_code == 200
    assert "x-modelplug-dropped" not in answer.headers
    (sent,) = wire.requests
    assert sent.headers["anthropic-beta"] == entry["headers"]["anthropic-beta"]
    body = sent.json()
    assert body["context_management"] == entry["body"]["context_management"]
    assert body["model"] == "claude-opus-5-5"
    # Its system messages (the environment, per turn) join the system prompt.
    system = body["system"]
    texts = system if isinstance(system, str) else "".join(b["text"] for b in system)
    assert "# Environment" in texts
    assert [m["role"] for m in body["messages"]] == ["user"]


@pytest.mark.parametrize("up", [COMPAT, RESPONSES], ids=repr)
def test_claude_code_betas_are_dropped_and_named_for_other_upstreams(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    entry = recorded("claude_code_say_hello")
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, f"{up.name}/some-model")
    assert answer.headers["x-modelplug-dropped"] == "context_management"
    (sent,) = wire.requests
    assert "anthropic-beta" not in sent.headers
    assert "context_management" not in sent.json()


def test_claude_code_turn_effort_reaches_a_responses_upstream(
    gateway: Running, wire: WireServer
) -> None:
    entry = recorded("claude_code_say_hello")
    # The recorded turn sets its effort twice, in the body and in a system message (the
    # per-turn control beta); the system message's is the later word.
    body = json.loads(json.dumps(entry["body"]))
    body["output_config"] = {"effort": "low"}
    (turn,) = [m for m in body["messages"] if "output_config" in m]
    assert turn["output_config"] == {"effort": "medium"}
    turn["output_config"] = {"effort": "high"}
    wire.add_file(RESPONSES.recording, content_type="text/event-stream")
    answer = replay(gateway, {**entry, "body": body}, "resp/some-model")
    assert answer.status_code == 200, answer.text
    (sent,) = wire.requests
    assert sent.json()["reasoning"]["effort"] == "high"


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_claude_code_tool_result_reaches_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    entry = recorded("claude_code_tool_result")
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, f"{up.name}/some-model")
    assert messages_stream_text(answer) == up.text
    sent = json.dumps(wire.requests[0].json())
    # The Read call the recorder asked for, and the file's text Claude Code answered with.
    assert "toolu_rec01" in sent
    assert "hello from the file" in sent


def test_claude_code_probe_gets_a_200_and_is_not_counted(
    gateway: Running, wire: WireServer
) -> None:
    entry = recorded("claude_code_probe")
    with httpx2.Client(timeout=30) as http:
        answer = http.request(entry["method"], gateway.url + entry["path"])
        metrics = http.get(gateway.url + "/metrics").text
    assert answer.status_code == 200
    assert not wire.requests
    # Not an unserved path: a probe before every run is no operator's concern.
    assert "modelplug_gateway_unserved_requests_total{" not in metrics


# -- the anthropic SDK ----------------------------------------------------------------


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_anthropic_sdk_create_is_answered_on_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, recorded("anthropic_sdk_messages_create"), f"{up.name}/m")
    assert message_text(answer) == up.text


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_anthropic_sdk_stream_is_answered_on_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, recorded("anthropic_sdk_messages_stream"), f"{up.name}/m")
    assert messages_stream_text(answer) == up.text
    assert "Be brief." in json.dumps(wire.requests[0].json())


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_anthropic_sdk_tool_round_trip_reaches_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    wire.add_file(up.recording, content_type="text/event-stream")
    wire.add_file(up.recording, content_type="text/event-stream")
    first = replay(gateway, recorded("anthropic_sdk_tool_call"), f"{up.name}/m")
    second = replay(gateway, recorded("anthropic_sdk_tool_result"), f"{up.name}/m")
    assert message_text(first) == message_text(second) == up.text
    assert tool_names(up, wire.requests[0]) == ["get_weather"]
    answered = json.dumps(wire.requests[1].json(), ensure_ascii=False)
    assert "toolu_weather1" in answered and "18°C, sunny" in answered


# -- the Responses shape: Codex and the openai SDK -------------------------------------


def responses_stream_text(answer: httpx2.Response) -> tuple[str, dict[str, Any]]:
    """The text of a well-formed Responses stream, and the response it completes with:
    response.created first, response.completed last, the deltas adding up to the
    completed response's text."""
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    stream = events(answer)
    assert stream[0]["type"] == "response.created"
    assert stream[-1]["type"] == "response.completed"
    numbers = [event["sequence_number"] for event in stream]
    assert numbers == sorted(set(numbers))
    text = "".join(e["delta"] for e in stream if e["type"] == "response.output_text.delta")
    response: dict[str, Any] = stream[-1]["response"]
    assert response_text(response) == text
    return text, response


def response_text(response: dict[str, Any]) -> str:
    assert response["object"] == "response"
    assert response["status"] == "completed"
    return "".join(
        part["text"]
        for item in response["output"]
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    )


def answered_text(answer: httpx2.Response) -> str:
    assert answer.status_code == 200, answer.text
    return response_text(answer.json())


CODEX_FUNCTIONS = ["exec_command", "write_stdin", "request_user_input", "view_image"]


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_codex_turn_is_answered_on_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    entry = recorded("codex_say_hello")
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, f"{up.name}/some-model")
    text, _ = responses_stream_text(answer)
    assert text == up.text
    (sent,) = wire.requests
    assert sent.path == up.path
    names = tool_names(up, sent) if up is not RESPONSES else []
    for name in CODEX_FUNCTIONS:
        assert up is RESPONSES or name in names


def test_codex_tools_and_fields_reach_a_responses_upstream_as_sent(
    gateway: Running, wire: WireServer
) -> None:
    entry = recorded("codex_say_hello")
    wire.add_file(RESPONSES.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, "resp/gpt-5.5")
    assert answer.status_code == 200, answer.text
    assert "x-modelplug-dropped" not in answer.headers
    body = wire.requests[0].json()
    assert body["tools"] == entry["body"]["tools"]
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["store"] is False
    assert body["reasoning"]["effort"] == entry["body"]["reasoning"]["effort"]


@pytest.mark.parametrize("up", [ANTHROPIC, COMPAT], ids=repr)
def test_codex_tools_other_upstreams_cannot_take_are_dropped_and_named(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    entry = recorded("codex_say_hello")
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, f"{up.name}/some-model")
    assert answer.status_code == 200, answer.text
    dropped = answer.headers["x-modelplug-dropped"]
    # apply_patch (a custom tool) and tool_search have no Chat or Messages equivalent.
    assert "custom" in dropped and "tool_search" in dropped
    sent = wire.requests[0].json()
    assert "apply_patch" not in tool_names(up, wire.requests[0])
    assert "include" not in sent and "client_metadata" not in sent


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_codex_tool_output_reaches_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    entry = recorded("codex_function_call_output")
    wire.add_file(up.recording, content_type="text/event-stream")
    text, _ = responses_stream_text(replay(gateway, entry, f"{up.name}/gpt-5.5"))
    assert text == up.text
    sent = json.dumps(wire.requests[0].json())
    assert "call_rec01" in sent and "hello from the file" in sent


def test_codex_reasoning_goes_back_to_a_responses_upstream(
    gateway: Running, wire: WireServer
) -> None:
    entry = recorded("codex_function_call_output")
    (reasoning,) = [i for i in entry["body"]["input"] if i.get("type") == "reasoning"]
    wire.add_file(RESPONSES.recording, content_type="text/event-stream")
    answer = replay(gateway, entry, "resp/gpt-5.5")
    assert answer.status_code == 200, answer.text
    sent = [i for i in wire.requests[0].json()["input"] if i.get("type") == "reasoning"]
    assert [i["encrypted_content"] for i in sent] == [reasoning["encrypted_content"]]


def test_claude_reasoning_survives_a_round_trip_through_the_responses_shape(
    gateway: Running, wire: WireServer
) -> None:
    """A Responses caller on a Claude model: the signed thinking block leaves as a
    reasoning item and, sent back as Codex sends its items, reaches Claude unchanged."""
    thinking = RECORDINGS / "anthropic_thinking.sse"
    wire.add_file(thinking, content_type="text/event-stream")
    wire.add_file(ANTHROPIC.recording, content_type="text/event-stream")
    first = replay(gateway, recorded("codex_say_hello"), "claude/claude-opus-5")
    text, response = responses_stream_text(first)
    assert text == "The answer is 4."
    items = [i for i in response["output"] if i["type"] == "reasoning"]
    assert len(items) == 1 and items[0]["encrypted_content"]
    follow = recorded("codex_say_hello")
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }
    question = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "and 3 + 3?"}],
    }
    body = {**follow["body"], "input": [*follow["body"]["input"], *items, said, question]}
    second = replay(gateway, {**follow, "body": body}, "claude/claude-opus-5")
    assert responses_stream_text(second)[0] == ANTHROPIC.text
    messages = wire.requests[1].json()["messages"]
    blocks = [b for m in messages if m["role"] == "assistant" for b in m["content"]]
    signed = [b for b in blocks if b["type"] == "thinking"]
    assert signed == [
        {
            "type": "thinking",
            "thinking": "Let me add these. 2 + 2 = 4.",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2Cx2CTbGwsZ3cYg3kZ7Lq4Bg9G0hlsqkHqpyPqKXdgvgjH7=",
        }
    ]


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_openai_sdk_responses_create_is_answered_on_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, recorded("openai_sdk_responses_create"), f"{up.name}/m")
    assert answered_text(answer) == up.text
    assert "Be brief." in json.dumps(wire.requests[0].json())


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_openai_sdk_responses_stream_is_answered_on_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    wire.add_file(up.recording, content_type="text/event-stream")
    answer = replay(gateway, recorded("openai_sdk_responses_stream"), f"{up.name}/m")
    assert responses_stream_text(answer)[0] == up.text


@pytest.mark.parametrize("up", UPSTREAMS, ids=repr)
def test_openai_sdk_tool_round_trip_reaches_each_upstream(
    gateway: Running, wire: WireServer, up: Upstream
) -> None:
    wire.add_file(up.recording, content_type="text/event-stream")
    wire.add_file(up.recording, content_type="text/event-stream")
    first = replay(gateway, recorded("openai_sdk_tool_call"), f"{up.name}/m")
    second = replay(gateway, recorded("openai_sdk_tool_result"), f"{up.name}/m")
    assert answered_text(first) == answered_text(second) == up.text
    assert tool_names(up, wire.requests[0]) == ["get_weather"]
    answered = json.dumps(wire.requests[1].json(), ensure_ascii=False)
    assert "call_weather1" in answered and "18°C, sunny" in answered
