"""A bare model id (no ``provider/``) of a known vendor's family is read as that
vendor's: ``claude-*`` anthropic, ``gemini-*`` gemini, ``gpt-*``, ``o1``, ``o3-mini``...
openai. One rule, in core, for the library, the CLI and the gateway alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from modelplug.client.client import Client
from modelplug.contract.errors import UnknownProviderError
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
RESPONSES_TEXT = RECORDINGS / "local_responses_text.sse"  # says "The final result is **570**."


def openai_at(config_dir: Path, server: WireServer) -> None:
    """The user's own file points ``openai`` at the loopback wire server."""
    (config_dir / "config.toml").write_text(
        f'[providers.openai]\ntype = "openai-responses"\nbase_url = "{server.url}/v1"\n',
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    ("bare", "provider"),
    [
        ("gpt-5", "openai"),
        ("gpt-4o", "openai"),
        ("chatgpt-4o-latest", "openai"),
        ("o1", "openai"),
        ("o3-mini", "openai"),
        ("o4-mini", "openai"),
        ("claude-sonnet-4-6", "anthropic"),
        ("gemini-2.5-flash", "gemini"),
    ],
)
def test_a_bare_id_resolves_as_its_vendors_spec_does(
    make_client: Any, bare: str, provider: str
) -> None:
    pytest.importorskip("modelplug_openai")
    pytest.importorskip("modelplug_anthropic")
    pytest.importorskip("modelplug_gemini")
    client: Client = make_client(entry_points=True)
    route = client.resolve(bare)
    spelled = client.resolve(f"{provider}/{bare}")
    assert (route.name, route.spec) == (f"{provider}/{bare}", bare)
    assert (route.plugin, route.endpoint) == (spelled.plugin, spelled.endpoint)


def test_a_bare_gpt_id_is_answered_by_openai(
    modelplug_config_dir: Path, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("modelplug_openai")
    import modelplug

    openai_at(modelplug_config_dir, wire_server)
    wire_server.add_file(RESPONSES_TEXT)
    with modelplug.Client(enable=["modelplug-openai"]) as client:
        response = client.complete("gpt-5", "hi")
    assert response.text == "The final result is **570**."
    assert response.message.model == "openai/gpt-5"
    (sent,) = wire_server.requests
    assert (sent.path, sent.json()["model"]) == ("/v1/responses", "gpt-5")


@pytest.mark.parametrize("bare", ["gpt-oss-20b", "gemma-3-4b-it", "omni"])
def test_a_bare_id_of_no_known_family_says_how_to_name_it(make_client: Any, bare: str) -> None:
    # gpt-oss is open weights: local servers serve it, OpenAI's API does not.
    client: Client = make_client(entry_points=True)
    with pytest.raises(UnknownProviderError) as caught:
        client.resolve(bare)
    message = str(caught.value)
    assert f"No plugin resolves the model {bare!r}. Name it as provider/model" in message
    assert "claude-*, gemini-* and OpenAI families" in message


def test_an_alias_named_like_a_family_is_the_users_word(make_client: Any) -> None:
    client: Client = make_client(config={"aliases": {"gpt-5": "echo/parrot"}})
    assert client.resolve("gpt-5").name == "echo/parrot"
