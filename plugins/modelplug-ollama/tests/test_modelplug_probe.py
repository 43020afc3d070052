"""modelplug_probe (/api/show and /api/ps), and what the stream does with what it learns:
num_ctx sized from it, a notice for tools to a model without them, one /api/show per
model."""

from __future__ import annotations

import pytest
from modelplug import ModelError
from modelplug.contract.types import ToolSpec
from modelplug_kit.testing import refused_url

TOOLS = [ToolSpec(name="get_weather")]


def test_modelplug_probe_llama_family_not_loaded(ollama, wire):
    wire.answer("show_llava.json", "/api/show")
    wire.answer("ps_mistral.json", "/api/ps")
    info = ollama().probe("ollama/llava")
    assert info is not None
    # Trained for 8192 (llama.context_length): the default 32768 is capped there.
    assert info.context_window == 8192
    assert info.supports_tools is False
    assert info.supports_images is True
    assert info.thinking == "never"
    assert "trained for 8,192 tokens (model_info)" in info.notes
    assert "not loaded now (/api/ps does not list it)" in info.notes
    assert "every request sends num_ctx 8192, so Ollama loads that window" in info.notes
    show, ps = wire.requests
    assert (show.method, show.path, show.json()) == ("POST", "/api/show", {"model": "llava"})
    assert (ps.method, ps.path) == ("GET", "/api/ps")


def test_modelplug_probe_gemma4_loaded_with_a_smaller_window(ollama, wire):
    wire.answer("show_gemma4.json", "/api/show")
    wire.answer("ps_gemma4.json", "/api/ps")
    info = ollama().probe("ollama/gemma4")
    assert info is not None
    # The model's own parameters set num_ctx 2048: that is its window, not 131072.
    assert info.context_window == 2048
    assert "trained for 131,072 tokens (model_info)" in info.notes
    assert "the model's parameters set num_ctx 2048" in info.notes
    assert "loaded now with a context of 4,096 tokens (/api/ps)" in info.notes
    assert info.supports_tools is False
    assert "capabilities: completion, vision" in info.notes


def test_modelplug_probe_qwen3_can_call_tools_and_think(ollama, wire):
    wire.answer("show_qwen3.json", "/api/show")
    wire.server.add_json({"models": []}, path="/api/ps")
    info = ollama().probe("ollama/qwen3:8b")
    assert info is not None
    assert (info.supports_tools, info.thinking, info.supports_images) == (True, "optional", False)
    assert info.context_window == 32768  # the default, under the 40960 it was trained for


def test_the_settings_window_wins_over_the_probe(ollama, wire):
    wire.answer("show_qwen3.json", "/api/show")
    wire.server.add_json({"models": []}, path="/api/ps")
    extra = {"models": {"ollama/qwen3:8b": {"context_window": 40960}}}
    info = ollama(extra).probe("ollama/qwen3:8b")
    assert info is not None and info.context_window == 40960


def test_modelplug_probe_without_api_ps_still_answers(ollama, wire):
    wire.answer("show_llava.json", "/api/show")
    wire.server.add_json({"error": "404 page not found"}, status=404, path="/api/ps")
    info = ollama().probe("ollama/llava")
    assert info is not None and info.context_window == 8192


def test_modelplug_probe_of_a_model_not_pulled_says_how_to_pull_it(ollama, wire):
    wire.server.add_json({"error": "model 'nope' not found"}, status=404, path="/api/show")
    with pytest.raises(ModelError) as caught:
        ollama().probe("ollama/nope")
    assert caught.value.error_class.kind == "not_found"
    assert "ollama pull nope" in str(caught.value)


def test_modelplug_probe_of_no_server_is_unreachable(ollama, wire):
    with pytest.raises(ModelError) as caught:
        ollama(base_url=refused_url()).probe("ollama/llava")
    assert caught.value.error_class.kind == "unreachable"


def test_modelplug_probe_refuses_a_login_page(ollama, wire):
    wire.server.add("<html>sign in: sk-0123</html>", path="/api/show", content_type="text/html")
    with pytest.raises(ModelError) as caught:
        ollama().probe("ollama/llava")
    message = str(caught.value)
    for part in ("POST /api/show", "status 200", "text/html", "was not JSON", "base_url"):
        assert part in message
    assert caught.value.error_class.kind == "other"
    assert "sign in" not in message and "sk-0123" not in message  # the body is never quoted


def test_the_stream_asks_api_show_once_per_model_and_sizes_num_ctx(ollama, wire):
    wire.answer("show_llava.json", "/api/show")
    wire.chat("images.jsonl")
    wire.chat("images.jsonl")
    client = ollama(probe=True)
    client.complete("ollama/llava", "hi")
    client.complete("ollama/llava", "again")
    paths = [r.path for r in wire.requests]
    assert paths == ["/api/show", "/api/chat", "/api/chat"]
    assert [r.json()["options"]["num_ctx"] for r in wire.requests[1:]] == [8192, 8192]


def test_tools_to_a_model_with_them_are_sent(ollama, wire):
    wire.answer("show_qwen3.json", "/api/show")
    wire.chat("tool_call.jsonl")
    response = ollama(probe=True).complete("ollama/qwen3:8b", "weather?", tools=TOOLS)
    assert response.stop_reason == "tool_use"
    assert wire.requests[1].json()["tools"][0]["function"]["name"] == "get_weather"


def test_think_is_left_out_for_a_model_that_cannot_think(ollama, wire):
    wire.answer("show_llava.json", "/api/show")
    wire.chat("images.jsonl")
    ollama(probe=True).complete("ollama/llava", "hi", thinking={"effort": "low"})
    assert "think" not in wire.requests[1].json()


def test_a_server_without_api_show_is_asked_once_and_served(ollama, wire):
    wire.server.add("not json", path="/api/show", content_type="text/plain")
    wire.chat("text.jsonl")
    wire.chat("text.jsonl")
    client = ollama(probe=True)
    client.complete("ollama/gemma2:2b", "hi")
    client.complete("ollama/gemma2:2b", "hi", tools=TOOLS)
    assert [r.path for r in wire.requests] == ["/api/show", "/api/chat", "/api/chat"]
    assert wire.requests[1].json()["options"]["num_ctx"] == 32768


def test_the_automatic_probe_of_a_model_not_pulled_fails_the_call(ollama, wire):
    wire.server.add_json({"error": "model 'nope' not found"}, status=404, path="/api/show")
    with pytest.raises(ModelError) as caught:
        ollama(probe=True).complete("ollama/nope", "hi")
    assert caught.value.error_class.kind == "not_found"
    assert "ollama pull nope" in str(caught.value)
