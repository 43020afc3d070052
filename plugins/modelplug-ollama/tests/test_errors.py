"""Failures end as classified errors with what the model already produced."""

from __future__ import annotations

import json

import pytest
from modelplug import MissingKeyError, ModelError
from modelplug_kit.testing import refused_url

NOT_FOUND = {"error": 'model "llama3" not found, try pulling it first'}
# llm/llama_server.go's words when the prompt is longer than num_ctx.
TOO_LONG = {
    "error": "the prompt is longer than the context length currently available to the model; "
    "shorten the prompt, adjust the context length in settings, or use a model with a longer "
    "context length"
}


def failure(client, spec="ollama/llama3", request="hi", **fields) -> ModelError:
    with pytest.raises(ModelError) as caught:
        client.complete(spec, request, **fields)
    return caught.value


def test_a_refused_connection_says_how_to_start_ollama(ollama, wire):
    url = refused_url()
    client = ollama(base_url=url)
    error = failure(client)
    assert client.classify(error) is error.error_class  # what a policy reads
    assert f"Cannot reach Ollama at {url}. Is it running (ollama serve)?" in str(error)
    # Then the kit's words on where that address is set (here: the test's own settings).
    assert "base_url of providers.ollama in the settings given in code" in str(error)
    assert error.error_class.kind == "unreachable"
    assert error.error_class.fallback is True


def test_a_model_ollama_does_not_have_is_not_found_with_the_pull_command(ollama, wire):
    wire.server.add_json(NOT_FOUND, status=404, path="/api/chat")
    error = failure(ollama())
    assert error.error_class.kind == "not_found"
    assert "ollama pull llama3" in str(error)
    assert 'model "llama3" not found' in str(error)
    # The answer is kept on the error, as the kit's StatusError keeps it.
    assert (error.status_code, error.body) == (404, NOT_FOUND)


def test_a_server_error_is_transient(ollama, wire):
    wire.server.add_json(
        {"error": "llama runner process has terminated"}, status=500, path="/api/chat"
    )
    error = failure(ollama())
    assert error.error_class.kind == "transient"
    assert error.error_class.retryable is True
    assert "llama runner process has terminated" in str(error)


def test_a_prompt_longer_than_num_ctx_is_a_context_overflow(ollama, wire):
    wire.server.add_json(TOO_LONG, status=400, path="/api/chat")
    error = failure(ollama())
    assert error.error_class.kind == "context_overflow"
    assert error.error_class.fallback is False
    assert "num_ctx 32768" in str(error)
    assert 'context_window under [models."ollama/llama3"]' in str(error)
    # Nothing compacts a conversation on its own: the hint must not promise it.
    assert "is compacted" not in str(error) and "shorten or compact it" in str(error)


def test_a_context_overflow_names_the_num_ctx_this_call_sent(ollama, wire):
    wire.server.add_json(TOO_LONG, status=400, path="/api/chat")
    extra = {"models": {"ollama/llama3": {"context_window": 8192}}}
    error = failure(ollama(extra))
    assert wire.requests[0].json()["options"]["num_ctx"] == 8192
    assert error.error_class.kind == "context_overflow"
    assert "(num_ctx 8192)" in str(error)


def test_a_json_error_answered_with_200_is_read_by_its_words(ollama, wire):
    wire.server.add_json(NOT_FOUND, path="/api/chat")
    error = failure(ollama())
    assert error.error_class.kind == "not_found"
    assert "Ollama answered 200" in str(error) and "ollama pull llama3" in str(error)
    assert error.partial is None


def test_an_error_line_mid_stream_is_classified_and_keeps_the_text(ollama, wire):
    wire.chat("error_line.jsonl")
    error = failure(ollama(), "ollama/gemma4")
    assert error.error_class.kind == "transient"
    assert "an error was encountered while running the model" in str(error)
    assert error.partial is not None
    assert error.partial.text == " Yes.Ican"
    assert error.status_code is None  # said on a line of a 200 stream


def test_an_error_line_about_the_context_is_a_context_overflow(ollama, wire):
    wire.lines([{"message": {"role": "assistant", "content": "a"}, "done": False}, TOO_LONG])
    error = failure(ollama())
    assert error.error_class.kind == "context_overflow"
    assert error.partial is not None and error.partial.text == "a"


def test_a_cut_stream_is_transient_and_keeps_the_partial_output(ollama, wire):
    wire.server.add(wire.recorded("cut.jsonl"), path="/api/chat")
    error = failure(ollama(), "ollama/gemma2:2b")
    assert error.error_class.kind == "transient"
    assert "before its final line (done: true); its last line was cut off" in str(error)
    assert error.partial is not None
    assert error.partial.text == "Hello! 👋"


def test_a_connection_reset_mid_stream_is_transient_with_the_partial_output(ollama, wire):
    wire.chat("text.jsonl", drop_after=3)
    error = failure(ollama(), "ollama/gemma2:2b")
    assert error.error_class.kind == "transient"
    assert error.partial is not None
    assert error.partial.text.startswith("Hello!")


def test_a_line_that_is_not_json_is_a_classified_error(ollama, wire):
    wire.lines([{"message": {"role": "assistant", "content": "ok"}, "done": False}, "<html>"])
    error = failure(ollama())
    assert error.error_class.kind == "transient"
    assert "not a JSON object" in str(error)
    assert error.partial is not None and error.partial.text == "ok"


def test_a_load_answer_is_an_error_not_an_empty_reply(ollama, wire):
    wire.lines(
        [{"model": "llama3", "message": {"role": "assistant"}, "done": True, "done_reason": "load"}]
    )
    error = failure(ollama())
    assert error.error_class.kind == "other"
    assert "done_reason 'load'" in str(error)


def test_a_key_and_headers_for_a_hosted_ollama_come_from_user_settings(ollama, wire):
    wire.chat("text.jsonl")
    client = ollama(
        api_key_env="OLLAMA_PROXY_KEY",
        headers={"X-Team": "lab"},
        environ={"OLLAMA_PROXY_KEY": "sk-proxy-secret-123"},
    )
    client.complete("ollama/gemma2:2b", "hi")
    headers = {k.lower(): v for k, v in wire.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-proxy-secret-123"
    assert headers["x-team"] == "lab"


def test_a_refused_key_echoed_by_a_proxy_never_appears_in_the_error(ollama, wire):
    secret = "sk-proxy-secret-456"
    wire.server.add_json({"error": f"invalid key {secret}"}, status=401, path="/api/chat")
    client = ollama(api_key_env="OLLAMA_PROXY_KEY", environ={"OLLAMA_PROXY_KEY": secret})
    error = failure(client)
    assert error.error_class.kind == "auth"
    assert secret not in str(error)
    assert secret not in json.dumps(getattr(error, "body", None))


def test_a_missing_key_fails_before_sending(ollama, wire):
    with pytest.raises(MissingKeyError, match="Set OLLAMA_PROXY_KEY to use the provider ollama"):
        ollama(api_key_env="OLLAMA_PROXY_KEY").complete("ollama/m", "hi")
    assert wire.requests == []


def test_an_error_before_any_output_carries_no_partial(ollama, wire):
    wire.lines([{"error": "an error was encountered while running the model"}])
    error = failure(ollama())
    assert error.error_class.kind == "transient"
    assert error.partial is None


def test_a_stalled_stream_is_transient_with_the_partial_output(ollama, wire):
    first = b'{"message":{"role":"assistant","content":"slow"},"done":false}\n'
    last = b'{"message":{"role":"assistant","content":""},"done":true}\n'
    wire.server.add([first, (2.0, last)], path="/api/chat")
    error = failure(ollama({"ollama": {"read_timeout": 0.3}}))
    assert error.error_class.kind == "transient"
    assert "read_timeout in [ollama]" in str(error)
    assert error.partial is not None and error.partial.text == "slow"


def test_a_wrong_option_is_a_config_error_naming_it(ollama, wire):
    from modelplug import ConfigError

    with pytest.raises(ConfigError, match=r"\[ollama\] read_timeout"):
        ollama({"ollama": {"read_timeout": "soon"}}).complete("ollama/m", "hi")
    assert wire.requests == []
