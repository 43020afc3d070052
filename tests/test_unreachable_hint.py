"""A server that is not there: the kit's one-line message says where its address is set
(the user's settings file, by its real path, and the lines to write there)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from modelplug import Client, Endpoint, ModelError, Route, Settings, hookimpl
from modelplug.cli import main
from modelplug.contract.types import Event, Request
from modelplug_kit import ProviderHTTP, WireErrors
from modelplug_kit.testing import refused_url


class BuiltIn:
    """A provider with a built-in address (as openai-compat's llamacpp preset has) that
    the user's file may override; it only ever sends, so it only ever fails to."""

    name = "builtin-lab"

    def __init__(self, address: str) -> None:
        self.address = address
        self.http = ProviderHTTP("builtin-lab", section="builtin-lab", errors=WireErrors("lab"))

    @hookimpl
    def modelplug_resolve(
        self, spec: str, settings: Settings, provider_type: str | None
    ) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "lab":
            return None
        own = settings.providers.get("lab")
        base = own.base_url if own is not None and own.base_url else self.address
        return Route(provider="lab", model=model, endpoint=Endpoint(type="lab", base_url=base))

    @hookimpl
    def modelplug_stream(
        self, route: Route, request: Request, client: Client
    ) -> AsyncIterator[Event] | None:
        return self.send(route, client) if route.provider == "lab" else None

    async def send(self, route: Route, client: Client) -> AsyncIterator[Event]:
        url = f"{route.endpoint.base_url}/generate"
        async with self.http.stream(client, route, url, body=b"{}", headers={}):
            pass
        yield  # pragma: no cover - never reached: nothing listens


def failure(client: Client, spec: str) -> ModelError:
    with pytest.raises(ModelError) as caught:
        client.complete(spec, "hi")
    return caught.value


def test_a_built_in_address_names_the_file_and_the_lines_that_point_it_elsewhere(
    make_client, modelplug_config_dir: Path
) -> None:
    address = refused_url() + "/api"
    error = failure(make_client(BuiltIn(address)), "lab/m")
    message = str(error)
    assert error.kind == "unreachable"
    assert message.startswith(f"Cannot reach lab at {address}. Is the server running?")
    assert "[providers.lab]" in message
    assert 'type = "lab"' in message
    # The example keeps the path the provider's API lives under.
    assert 'base_url = "http://HOST:PORT/api"' in message
    assert f"to {modelplug_config_dir / 'config.toml'} " in message
    assert "`modelplug config edit`" in message
    assert "\n" not in message


def test_an_address_from_the_users_file_is_named_where_it_is_set(
    make_client, modelplug_config_dir: Path
) -> None:
    own = modelplug_config_dir / "config.toml"
    base = refused_url() + "/api"
    own.write_text(f'[providers.lab]\ntype = "lab"\nbase_url = "{base}"\n')
    message = str(failure(make_client(BuiltIn("http://127.0.0.1:9")), "lab/m"))
    assert f"Cannot reach lab at {base}." in message
    assert f"Its address is base_url under [providers.lab] in {own} " in message
    assert "If it listens elsewhere" not in message


def test_an_address_given_in_code_is_not_sent_to_the_users_file(make_client) -> None:
    base = refused_url() + "/api"
    client = make_client(
        BuiltIn("http://127.0.0.1:9"),
        config={"providers": {"lab": {"type": "lab", "base_url": base}}},
    )
    message = str(failure(client, "lab/m"))
    assert "base_url of providers.lab in the settings given in code" in message
    assert "config.toml" not in message


def test_the_cli_says_which_file_and_lines_on_one_line(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = modelplug_config_dir / "config.toml"
    own.write_text(
        f'[providers.down]\ntype = "openai-compatible"\nbase_url = "{refused_url()}/v1"\n'
    )
    assert main(["chat", "-m", "down/m", "hi"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Cannot reach down at" in err
    assert f"base_url under [providers.down] in {own}" in err
    assert "modelplug config edit" in err
