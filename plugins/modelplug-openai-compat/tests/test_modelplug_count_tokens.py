"""modelplug_count_tokens: llama.cpp's /tokenize and /apply-template, vLLM's /tokenize;
None where the server has no count endpoint, remembered; a failure is None once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug_kit.testing import WireServer
from modelplug_openai_compat.counting import CountReplyError, read_count, read_prompt

RECORDINGS = Path(__file__).parent / "recordings"
TOOL = {
    "name": "lookup",
    "description": "Look a word up",
    "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}},
}


def recorded(wire: WireServer, name: str, path: str) -> None:
    wire.add_file(RECORDINGS / name, path=path, content_type="application/json", chunk_size=1 << 16)


def test_modelplug_count_tokens(compat: Any, wire_server: WireServer) -> None:
    """llama.cpp counts text alone with /tokenize: no BOS added, special tokens parsed."""
    recorded(wire_server, "llamacpp_tokenize.json", "/tokenize")
    client = compat(name="llamacpp")
    assert client.count_tokens("llamacpp/gemma", "Hello there") == 3
    sent = wire_server.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/tokenize")
    assert sent.json() == {"content": "Hello there", "add_special": False, "parse_special": True}


def test_llamacpp_counts_a_prompt_as_its_template_renders_it(
    compat: Any, wire_server: WireServer
) -> None:
    recorded(wire_server, "llamacpp_apply_template.json", "/apply-template")
    recorded(wire_server, "llamacpp_tokenize.json", "/tokenize")
    client = compat(name="llamacpp")
    counted = client.count_prompt("llamacpp/gemma", "Hello there", system="Be brief.", tools=[TOOL])
    assert counted == 3
    template, tokenize = wire_server.requests[-2:]
    assert template.path == "/apply-template"
    body = template.json()
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello there"},
    ]
    assert body["tools"][0]["function"]["name"] == "lookup"
    assert "stream" not in body and "stream_options" not in body
    # The rendered text is tokenized as the chat path tokenizes it.
    assert tokenize.json() == {
        "content": "<bos><start_of_turn>user\nBe brief.\n\nHello there<end_of_turn>\n"
        "<start_of_turn>model\n",
        "add_special": True,
        "parse_special": True,
    }


def test_vllm_counts_text_and_a_prompt(compat: Any, wire_server: WireServer) -> None:
    recorded(wire_server, "vllm_tokenize.json", "/tokenize")
    recorded(wire_server, "vllm_tokenize.json", "/tokenize")
    client = compat(name="vllm")
    assert client.count_tokens("vllm/Qwen/Qwen3-8B", "Hello") == 5
    assert client.count_prompt("vllm/Qwen/Qwen3-8B", "Hello", tools=[TOOL]) == 5
    text, prompt = (r.json() for r in wire_server.requests[-2:])
    assert text == {"model": "Qwen/Qwen3-8B", "prompt": "Hello", "add_special_tokens": False}
    assert prompt["model"] == "Qwen/Qwen3-8B"
    assert prompt["messages"] == [{"role": "user", "content": "Hello"}]
    assert prompt["tools"][0]["function"]["name"] == "lookup"
    assert "stream" not in prompt


def test_a_server_without_a_count_endpoint_is_none_and_asked_nothing(
    compat: Any, wire_server: WireServer
) -> None:
    for name in ("ollama", "openrouter", "lmstudio"):
        client = compat(name=name, api_key_env="")
        assert client.count_tokens(f"{name}/m", "Hello") is None
        assert client.count_prompt(f"{name}/m", "Hello") is None
    assert wire_server.requests == []


def test_a_404_from_tokenize_is_none_and_not_asked_again(
    compat: Any, wire_server: WireServer
) -> None:
    wire_server.add_json({"error": {"code": 404, "message": "File Not Found"}}, status=404)
    client = compat(name="llamacpp")
    assert client.count_tokens("llamacpp/gemma", "a") is None
    assert client.count_tokens("llamacpp/gemma", "b") is None
    assert len(wire_server.requests) == 1


def test_a_server_error_is_none_once_and_asked_again(compat: Any, wire_server: WireServer) -> None:
    wire_server.add_json({"error": {"code": 500, "message": "tokenizer busy"}}, status=500)
    recorded(wire_server, "llamacpp_tokenize.json", "/tokenize")
    client = compat(name="llamacpp")
    assert client.count_tokens("llamacpp/gemma", "a") is None
    assert client.count_tokens("llamacpp/gemma", "a") == 3


def test_an_unreachable_server_is_none_and_asked_again(
    compat: Any, wire_server: WireServer
) -> None:
    # Hung up on twice: the kit resends a request once when a connection dies unanswered.
    wire_server.add(hang_up=True)
    wire_server.add(hang_up=True)
    recorded(wire_server, "llamacpp_tokenize.json", "/tokenize")
    client = compat(name="llamacpp")
    assert client.count_tokens("llamacpp/gemma", "a") is None
    assert client.count_tokens("llamacpp/gemma", "a") == 3


def test_an_answer_without_a_count_is_none(compat: Any, wire_server: WireServer) -> None:
    wire_server.add_json({"detail": "no tokenizer"}, path="/tokenize")
    client = compat(name="llamacpp")
    assert client.count_tokens("llamacpp/gemma", "a") is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


# The first draw pays for hypothesis' own warm-up: slow on a loaded machine, not a
# slow strategy.
@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.dictionaries(st.sampled_from(["count", "tokens", "prompt", "x"]), JSON))
def test_a_count_reply_is_a_count_or_a_reply_error(data: dict[str, Any]) -> None:
    try:
        count = read_count(data)
    except CountReplyError:
        pass
    else:
        assert type(count) is int and count >= 0
    try:
        prompt = read_prompt(data)
    except CountReplyError:
        pass
    else:
        assert isinstance(prompt, str)
