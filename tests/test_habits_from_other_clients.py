"""What a newcomer from LiteLLM or the OpenAI SDK writes: ``messages=`` is taken as the
conversation; ``model=``, ``api_base=``, ``api_key=``, ``timeout=``, ``stream=`` are
refused before anything is sent, each with what to write instead; ``OPENAI_BASE_URL``
and ``ANTHROPIC_BASE_URL`` are not read, and a warning says so once, with the setting
that does what the user meant."""

from __future__ import annotations

import traceback
import warnings
from pathlib import Path

import pytest
from modelplug import ModelplugWarning, RequestError
from modelplug_kit.testing import WireServer

pytest.importorskip("modelplug_openai_compat")

RECORDINGS = Path(__file__).parent / "recordings"
KEY = "sk-live-0123456789abcdefghij"  # an invented key a caller passes as api_key=
HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]


def llamacpp_at(config_dir: Path, server: WireServer) -> Path:
    user_file = config_dir / "config.toml"
    user_file.write_text(
        f'[providers.llamacpp]\ntype = "openai-compatible"\nbase_url = "{server.url}/v1"\n',
        encoding="utf-8",
    )
    return user_file


def refused(spec: str, **fields: object) -> str:
    import modelplug

    with (
        modelplug.Client(enable=["modelplug-openai-compat"]) as client,
        pytest.raises(RequestError) as caught,
    ):
        client.complete(spec, "hi", **fields)
    shown = "".join(traceback.format_exception(caught.value))
    assert KEY not in shown  # neither in the message nor anywhere in the traceback
    return str(caught.value)


def test_messages_as_a_keyword_is_the_conversation(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    import modelplug

    llamacpp_at(modelplug_config_dir, wire_server)
    wire_server.add_file(RECORDINGS / "chat_text.sse")
    with modelplug.Client(enable=["modelplug-openai-compat"]) as client:
        response = client.complete("llamacpp/any", messages=HELLO, max_tokens=20)
    assert response.text == "Still here."
    sent = wire_server.requests[0].json()
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello"},
    ]
    assert sent["max_tokens"] == 20


def test_the_conversation_given_twice_is_refused(modelplug_config_dir: Path) -> None:
    message = refused("llamacpp/any", messages=HELLO)
    assert "the conversation is given twice" in message
    assert "as the second argument and as messages=; pass it once" in message


def test_each_habit_is_refused_with_what_to_write_instead(
    modelplug_config_dir: Path, wire_server: WireServer
) -> None:
    user_file = llamacpp_at(modelplug_config_dir, wire_server)
    assert 'the model is the first argument: complete("provider/model", prompt)' in refused(
        "llamacpp/any", model="llamacpp/any"
    )
    assert (
        'Set base_url = "http://..." under [providers.llamacpp] in your own settings file '
        f"({user_file})"
    ) in refused("llamacpp/any", api_base="http://127.0.0.1:1234/v1")
    # A local preset is sent no key: the hint says how to name one, not where to put it.
    assert (
        "a call takes no key, and llamacpp is sent none; if its server needs one, put it in "
        'an environment variable and name it with api_key_env = "VAR" under '
        "[providers.llamacpp]"
    ) in refused("llamacpp/any", api_key=KEY)
    assert (
        "connect_timeout, first_byte_timeout, read_timeout, write_timeout under "
        "[openai-compat], in seconds); to bound a whole call, await acomplete() inside "
        "asyncio.timeout(seconds)"
    ) in refused("llamacpp/any", timeout=30)
    assert "call modelplug.stream(...) (async: astream)" in refused("llamacpp/any", stream=True)
    assert wire_server.requests == []  # refused before anything was sent


def test_a_key_passed_in_a_call_names_the_providers_key_variable(
    modelplug_config_dir: Path,
) -> None:
    message = refused("openrouter/qwen/qwen3-coder", api_key=KEY)
    assert "put it in the environment variable OPENROUTER_API_KEY" in message


def test_every_habit_in_one_call_is_named(modelplug_config_dir: Path) -> None:
    message = refused("llamacpp/any", model="x", api_key=KEY, stream=True)
    assert message.count("=: ") == 3
    assert "model=:" in message and "api_key=:" in message and "stream=:" in message


def test_an_unknown_keyword_lists_the_request_fields(modelplug_config_dir: Path) -> None:
    message = refused("llamacpp/any", temprature=0.2)
    assert "temprature=: not a Request field (the fields: system, messages, tools," in message
    assert "temperature" in message
    assert "Extra inputs are not permitted" not in message


@pytest.mark.parametrize(
    ("variable", "key_variable", "spec", "provider"),
    [
        ("OPENAI_BASE_URL", "OPENAI_API_KEY", "openai/gpt-4.1", "openai"),
        ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-6", "anthropic"),
    ],
)
def test_an_sdks_base_url_variable_is_not_read_and_said_once(
    modelplug_config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    key_variable: str,
    spec: str,
    provider: str,
) -> None:
    import modelplug

    plugin = "modelplug-anthropic" if provider == "anthropic" else "modelplug-openai-compat"
    pytest.importorskip(plugin.replace("-", "_"))
    monkeypatch.setenv(variable, "http://127.0.0.1:9/v1")
    monkeypatch.setenv(key_variable, KEY)
    with (
        modelplug.Client(enable=[plugin]) as client,
        pytest.warns(ModelplugWarning) as seen,
    ):
        first = client.resolve(spec)
        client.resolve(spec)
    said = [str(w.message) for w in seen if variable in str(w.message)]
    assert len(said) == 1  # once, not per call
    assert f"{variable} is set, and modelplug does not read it" in said[0]
    assert f'set base_url = "..." under [providers.{provider}]' in said[0]
    assert str(modelplug_config_dir / "config.toml") in said[0]
    assert first.endpoint.base_url != "http://127.0.0.1:9/v1"  # the key does not go there


def test_no_warning_when_the_users_file_chose_the_address(
    modelplug_config_dir: Path, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelplug

    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.openai-chat]\ntype = "openai-compatible"\nbase_url = "{wire_server.url}/v1"\n'
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelplugWarning)
        with modelplug.Client(enable=["modelplug-openai-compat"]) as client:
            route = client.resolve("openai-chat/gpt-4.1")
    assert route.endpoint.base_url == f"{wire_server.url}/v1"
