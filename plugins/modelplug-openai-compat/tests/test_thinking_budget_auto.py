"""reasoning_budget="auto" on the wire: llama.cpp's prompt counted by /apply-template and
/tokenize, then the chat request carries the window less the count less the reserve, and
the message llama-server injects at the cut."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from modelplug import DEFAULT_BUDGET_MESSAGE, Notice
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
DONE = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]
WINDOW = {"models": {"llamacpp/gemma": {"context_window": 8192}}}


def recorded(wire: WireServer, name: str, path: str) -> None:
    wire.add_file(RECORDINGS / name, path=path, content_type="application/json", chunk_size=1 << 16)


def test_an_auto_budget_is_sized_from_the_counted_prompt(
    compat: Any, wire_server: WireServer
) -> None:
    recorded(wire_server, "llamacpp_apply_template.json", "/apply-template")
    recorded(wire_server, "llamacpp_tokenize.json", "/tokenize")  # 3 tokens
    wire_server.add_sse(DONE, done=True, path="/v1/chat/completions")
    client = compat(WINDOW, name="llamacpp")
    client.complete(
        "llamacpp/gemma", "Hello there", reasoning_budget="auto", reasoning_reserve=1000
    )
    paths = [r.path for r in wire_server.requests]
    assert paths == ["/apply-template", "/tokenize", "/v1/chat/completions"]
    body = wire_server.requests[-1].json()
    assert body["reasoning_budget_tokens"] == 8192 - 3 - 1000
    assert body["reasoning_budget_message"] == DEFAULT_BUDGET_MESSAGE
    assert body["chat_template_kwargs"] == {"enable_thinking": True}


def test_the_caller_s_message_at_the_cut_wins(compat: Any, wire_server: WireServer) -> None:
    recorded(wire_server, "llamacpp_apply_template.json", "/apply-template")
    recorded(wire_server, "llamacpp_tokenize.json", "/tokenize")
    wire_server.add_sse(DONE, done=True, path="/v1/chat/completions")
    client = compat(WINDOW, name="llamacpp")
    client.complete(
        "llamacpp/gemma",
        "Hello there",
        reasoning_budget="auto",
        extra={"reasoning_budget_message": "Answer now."},
    )
    assert wire_server.requests[-1].json()["reasoning_budget_message"] == "Answer now."


def test_no_budget_is_sent_when_the_server_cannot_count(
    compat: Any, wire_server: WireServer
) -> None:
    wire_server.add_json({"error": {"code": 404, "message": "File Not Found"}}, status=404)
    wire_server.add_sse(DONE, done=True, path="/v1/chat/completions")
    client = compat(WINDOW, name="llamacpp")
    notices: list[Notice] = []
    client.complete(
        "llamacpp/gemma",
        "Hello there",
        reasoning_budget="auto",
        on_event=lambda e: notices.append(e) if isinstance(e, Notice) else None,
    )
    body = wire_server.requests[-1].json()
    assert "reasoning_budget_tokens" not in body and "reasoning_budget_message" not in body
    assert [n.kind for n in notices] == ["thinking_budget"]
