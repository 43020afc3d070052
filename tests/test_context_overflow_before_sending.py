"""A prompt surely too long for a known context window is refused before it is sent.

Known means the user's settings or a probe of the server said so; a plugin's default
window is a guess, and the server judges. "Surely" is a count of words, which no
tokenizer in use joins into fewer tokens, so a prompt that fits is never refused. And
the server's own refusal no longer asks for a context_window setting "so the
conversation is compacted": nothing compacts on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from modelplug import ModelError
from modelplug_kit.testing import WireServer

pytest.importorskip("modelplug_openai_compat")

RECORDINGS = Path(__file__).parent / "recordings"
# llama-server's /props of a model loaded with -c 2048 (the fields modelplug-openai-compat
# reads; shape as tools/server/server.cpp answers it).
PROPS_2048 = {"default_generation_settings": {"n_ctx": 2048}, "chat_template_caps": {}}
# llama-server's 400 for a prompt over its window (tools/server/utils.hpp,
# format_error_response with ERROR_TYPE_EXCEED_CONTEXT_SIZE; the counts of the report).
EXCEEDED = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5026,
        "n_ctx": 2048,
    }
}


def llamacpp_at(config_dir: Path, server: WireServer, extra: str = "") -> None:
    (config_dir / "config.toml").write_text(
        f'[providers.llamacpp]\ntype = "openai-compatible"\nbase_url = "{server.url}/v1"\n' + extra,
        encoding="utf-8",
    )


def client():  # type: ignore[no-untyped-def]
    import modelplug

    return modelplug.Client(enable=["modelplug-openai-compat"])


def words(count: int, word: str = "word") -> str:
    return " ".join([word] * count)


def test_a_prompt_over_a_probed_window_is_refused_before_sending(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    llamacpp_at(modelplug_config_dir, wire_server)
    wire_server.add_json(PROPS_2048, path="/props")
    with client() as probing:
        assert probing.probe("llamacpp/gemma").context_window == 2048
    with client() as later, pytest.raises(ModelError) as caught:  # the next process
        later.complete("llamacpp/gemma", words(5026), max_tokens=256)
    error = caught.value
    assert error.error_class.kind == "context_overflow"
    assert not error.error_class.retryable and not error.error_class.fallback
    message = str(error)
    assert (
        "the prompt is longer than llamacpp/gemma's context window of 2,048 tokens (as a "
        "probe of the server found it (`modelplug resolve --probe llamacpp/gemma` asks it "
        "again)), so it was not sent: at least 5,026 tokens (one per word; about 6,283 at 4 "
        "characters a token). About 8,192 characters fit, less the answer's max_tokens (256)"
    ) in message
    assert [r.path for r in wire_server.requests] == ["/props"]  # the probe, nothing more


def test_a_ten_megabyte_prompt_is_refused_without_being_sent(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    llamacpp_at(
        modelplug_config_dir, wire_server, '[models."llamacpp/gemma"]\ncontext_window = 2048\n'
    )
    prompt = words(2_000_000)  # 10 MB
    with client() as user, pytest.raises(ModelError) as caught:
        user.complete("llamacpp/gemma", prompt)
    assert "window of 2,048 tokens (as your settings say), so it was not sent" in str(caught.value)
    assert "at least 2,000,000 tokens" in str(caught.value)
    assert wire_server.requests == []


def test_a_prompt_that_fits_is_sent_though_its_characters_would_not(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    # 2,000 long words: 24,000 characters, 6,000 tokens by four characters a token, but
    # as few as 2,000 tokens for a tokenizer that knows the word: not surely too long.
    llamacpp_at(
        modelplug_config_dir, wire_server, '[models."llamacpp/gemma"]\ncontext_window = 2048\n'
    )
    wire_server.add_file(RECORDINGS / "chat_text.sse")
    with client() as user:
        response = user.complete("llamacpp/gemma", words(2000, "internationa"))
    assert response.text == "Still here."
    assert len(wire_server.requests) == 1


def test_system_tools_and_tool_results_count_toward_the_prompt(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    from modelplug import ToolSpec

    llamacpp_at(
        modelplug_config_dir, wire_server, '[models."llamacpp/gemma"]\ncontext_window = 100\n'
    )
    conversation = [
        {"role": "user", "content": "look it up"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "find", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": words(40)},
    ]
    tool = ToolSpec(name="find", description=words(40))
    with client() as user, pytest.raises(ModelError, match="at least 104 tokens"):
        user.complete("llamacpp/gemma", conversation, system=words(20), tools=[tool])
    assert wire_server.requests == []


def test_a_plugins_default_window_lets_the_server_judge(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    # No settings entry, no probe: openai-compat assumes 32,768 tokens, a guess.
    llamacpp_at(modelplug_config_dir, wire_server)
    wire_server.add_json(EXCEEDED, status=400)
    with client() as user, pytest.raises(ModelError) as caught:
        user.complete("llamacpp/gemma", words(40_000))
    message = str(caught.value)
    assert len(wire_server.requests) == 1  # sent: the server had the last word
    assert caught.value.error_class.kind == "context_overflow"
    assert "exceeds the available context size" in message
    assert "compacted" not in message  # nothing compacts on its own
    assert (
        "shorten or compact the conversation, or load the model with a larger window (e.g. "
        "llama-server -c, OLLAMA_CONTEXT_LENGTH). Set context_window under "
        '[models."llamacpp/gemma"] to what the server loaded (or run `modelplug resolve '
        "--probe llamacpp/gemma`), and modelplug refuses a prompt too long for it before "
        "sending it"
    ) in message


def test_the_servers_refusal_under_a_known_window_names_it(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    # Under the floor of words, over the window in the server's tokens: sent, refused.
    llamacpp_at(
        modelplug_config_dir, wire_server, '[models."llamacpp/gemma"]\ncontext_window = 2048\n'
    )
    wire_server.add_json(EXCEEDED, status=400)
    with client() as user, pytest.raises(ModelError) as caught:
        user.complete("llamacpp/gemma", words(2000, "internationa"))
    assert (
        "the prompt does not fit llamacpp/gemma's context window of 2,048 tokens (as your "
        "settings say); shorten or compact the conversation"
    ) in str(caught.value)
    assert "compacted" not in str(caught.value)


def test_resolve_says_who_gave_the_window(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    llamacpp_at(
        modelplug_config_dir, wire_server, '[models."llamacpp/set"]\ncontext_window = 4096\n'
    )
    with client() as user:
        assert user.resolve("llamacpp/set").info.context_window_source == "settings"
        guessed = user.resolve("llamacpp/other").info
    assert (guessed.context_window, guessed.context_window_source) == (
        32_768,
        "modelplug-openai-compat",
    )
