"""Which plugin serves a provider name when two declare it: the user's pinned type, else
the native declaration, else plugin name order; and `modelplug resolve` says which."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from modelplug import Endpoint, Provider, Route, hookimpl


class Claimant:
    """A provider plugin that declares ``shared`` with its own type and serves that type."""

    def __init__(self, name: str, type_: str, native: bool) -> None:
        self.name = name
        self.type = type_
        self.native = native
        self.asked: list[str | None] = []

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name="shared", type=self.type, native=self.native, example="m1")]

    @hookimpl
    def modelplug_resolve(self, spec: str, provider_type: str | None) -> Route | None:
        self.asked.append(provider_type)
        provider, _, model = spec.partition("/")
        if provider != "shared" or provider_type != self.type:
            return None
        return Route(provider=provider, model=model, endpoint=Endpoint(type=self.type))


def test_a_native_declaration_beats_a_generic_one(make_client: Any) -> None:
    generic = Claimant("generic", "chat-compatible", native=False)
    native = Claimant("native", "shared-native", native=True)
    client = make_client(generic, native)

    route = client.resolve("shared/m1")

    assert route.endpoint.type == "shared-native"
    assert route.plugin == "native"


def test_registration_order_does_not_change_the_winner(make_client: Any) -> None:
    native = Claimant("native", "shared-native", native=True)
    generic = Claimant("generic", "chat-compatible", native=False)
    client = make_client(native, generic)

    assert client.resolve("shared/m1").plugin == "native"
    assert generic.asked == ["shared-native"]  # asked first, told the winning type


def test_two_generic_declarations_go_by_plugin_name(make_client: Any) -> None:
    client = make_client(Claimant("zeta", "z-type", False), Claimant("alpha", "a-type", False))

    assert client.resolve("shared/m1").endpoint.type == "a-type"
    ranked = [plugin for _, plugin in client.declared_providers()["shared"]]
    assert ranked == ["alpha", "zeta"]


def test_the_users_file_pins_a_type(make_client: Any) -> None:
    generic = Claimant("generic", "chat-compatible", native=False)
    native = Claimant("native", "shared-native", native=True)
    client = make_client(
        generic, native, config={"providers": {"shared": {"type": "chat-compatible"}}}
    )

    route = client.resolve("shared/m1")

    assert route.endpoint.type == "chat-compatible"
    assert route.plugin == "generic"


def test_a_bare_model_id_gets_no_provider_type(make_client: Any) -> None:
    seen = Claimant("generic", "chat-compatible", native=False)
    client = make_client(seen)

    client.resolve("echo")

    assert seen.asked == [None]


def test_a_route_left_without_an_endpoint_takes_its_provider_as_type() -> None:
    route = Route(provider="lab", model="m")

    assert route.endpoint.type == "lab"
    assert Route(provider="lab", model="m", endpoint=Endpoint(type="x")).endpoint.type == "x"


def test_declaring_names_instead_of_providers_is_a_clear_error(make_client: Any) -> None:
    class Old:
        @hookimpl
        def modelplug_providers(self) -> list[str]:
            return ["old"]

    client = make_client(Old())

    with pytest.raises(TypeError, match=r"return modelplug\.Provider records"):
        client.providers()


def test_modelplug_resolve_json_names_the_serving_plugin(tmp_path: Path) -> None:
    adapter = tmp_path / "twin_adapter.py"
    adapter.write_text(
        "from modelplug import Endpoint, Provider, Route, hookimpl\n"
        "@hookimpl\n"
        "def modelplug_providers():\n"
        "    return [Provider(name='echo', type='twin', native=True)]\n"
        "@hookimpl\n"
        "def modelplug_resolve(spec, provider_type):\n"
        "    if provider_type != 'twin':\n"
        "        return None\n"
        "    return Route(provider='echo', model=spec.partition('/')[2], endpoint=Endpoint(type='twin'))\n"
    )
    config = tmp_path / "config.toml"
    config.write_text(f'trusted_projects = ["{tmp_path}"]\n')
    (tmp_path / "modelplug.toml").write_text('[plugins]\nlocal = ["twin_adapter"]\n')
    env = {"MODELPLUG_CONFIG": str(config), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "modelplug.cli", "resolve", "echo/x", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["plugin"] == "twin_adapter"
    assert data["endpoint"]["type"] == "twin"
