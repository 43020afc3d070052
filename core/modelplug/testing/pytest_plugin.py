"""pytest fixtures for modelplug plugin authors (registered through ``pytest11``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ..client import Client
from .fake import FakeModel
from .wire_server import WireServer

MakeClient = Callable[..., Client]


@pytest.fixture
def modelplug_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user config dir; the environment's MODELPLUG_* toggles are cleared and
    the working directory is an empty project-less folder."""
    config_dir = tmp_path / "modelplug-config"
    config_dir.mkdir()
    workdir = tmp_path / "work"
    workdir.mkdir()
    for name in list(os.environ):
        if name.startswith("MODELPLUG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MODELPLUG_CONFIG", str(config_dir / "config.toml"))
    monkeypatch.chdir(workdir)
    return config_dir


@pytest.fixture
def make_client(modelplug_config_dir: Path) -> Iterator[MakeClient]:
    """Build isolated Clients: ``make_client(plugin, ..., config={...})``. Installed
    plugins load only with ``entry_points=True``. Every client is closed afterwards."""
    made: list[Client] = []

    def make(
        *plugins: object,
        entry_points: bool = False,
        config: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Client:
        kwargs.setdefault("user_config", modelplug_config_dir / "config.toml")
        # Names (strings) switch installed plugins on, as an allow-list; objects register.
        names = [p for p in plugins if isinstance(p, str)]
        if names:
            kwargs.setdefault("enable", names)
        objects = [p for p in plugins if not isinstance(p, str)]
        client = Client(plugins=objects, entry_points=entry_points, config=config, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        try:
            client.close()
        except RuntimeError:
            pass


@pytest.fixture
def modelplug_client(make_client: MakeClient) -> Client:
    """A Client with only core's built-in plugins."""
    return make_client()


@pytest.fixture
def register_plugin(modelplug_client: Client) -> Iterator[Callable[[object], object]]:
    """``register_plugin(obj)`` registers a plugin on ``modelplug_client`` for this test
    and unregisters it afterwards (returns ``obj``)."""
    registered: list[object] = []

    def register(plugin: object) -> object:
        modelplug_client.register(plugin)
        registered.append(plugin)
        return plugin

    yield register
    for plugin in registered:
        if modelplug_client.host.pm.is_registered(plugin):
            modelplug_client.unregister(plugin)


@pytest.fixture
def fake_model(modelplug_client: Client) -> FakeModel:
    """A FakeModel with an empty script, registered on ``modelplug_client``; add steps
    with ``fake_model.add(text("hi"))`` and call ``fake/any-model``."""
    fake = FakeModel()
    modelplug_client.register(fake)
    return fake


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A started loopback WireServer, stopped after the test."""
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()
