"""pytest fixtures for modelplug plugin authors (registered through ``pytest11``), and
the run-wide watch for a planted key (see :mod:`modelplug.testing.leaks`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from modelplug.client.client import Client
from modelplug.testing.fake import FakeModel
from modelplug.testing.leaks import PLANTED_KEY, LeakWatch

MakeClient = Callable[..., Client]
_watch = LeakWatch()


def pytest_configure(config: pytest.Config) -> None:
    logging.getLogger().addHandler(_watch)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for where, text in (
        ("failure report", report.longreprtext),
        ("stdout", report.capstdout),
        ("stderr", report.capstderr),
        ("log", report.caplog),
    ):
        _watch.scan(f"{report.nodeid} ({report.when}) {where}", text)


def pytest_warning_recorded(warning_message: Any, when: str, nodeid: str, location: Any) -> None:
    _watch.scan(f"{nodeid}: a warning", str(getattr(warning_message, "message", "")))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _watch.leaks:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["a secret leaked into messages produced by the test suite:", *_watch.leaks]
        if reporter is not None:
            reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def planted_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A distinctive key, set as PLANTED_API_KEY for this test; the run fails if it
    appears in any report, output, log record or warning."""
    monkeypatch.setenv("PLANTED_API_KEY", PLANTED_KEY)
    return PLANTED_KEY


@pytest.fixture
def modelplug_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user config dir holding an empty ``config.toml``; the environment's MODELPLUG_*
    toggles are cleared, the data directory (``MODELPLUG_DATA_DIR``: the counters and
    cooldowns policies keep between runs) is a fresh one beside it, and the working
    directory is an empty project-less folder."""
    config_dir = tmp_path / "modelplug-config"
    config_dir.mkdir()
    (config_dir / "config.toml").touch()
    workdir = tmp_path / "work"
    workdir.mkdir()
    for name in list(os.environ):
        if name.startswith("MODELPLUG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MODELPLUG_CONFIG", str(config_dir / "config.toml"))
    # A test's budgets and cooldowns must not reach the next test, or the user's own.
    monkeypatch.setenv("MODELPLUG_DATA_DIR", str(tmp_path / "modelplug-data"))
    monkeypatch.chdir(workdir)
    return config_dir


@pytest.fixture
def make_client(modelplug_config_dir: Path) -> Iterator[MakeClient]:
    """Build isolated Clients: ``make_client(plugin, ..., config={...})``. A plugin
    object registers; a name (``"openai-compat"``) loads that installed plugin and no
    other. Installed plugins load only when named or with ``entry_points=True``. Every
    client is closed afterwards."""
    made: list[Client] = []

    def make(
        *plugins: object,
        entry_points: bool | None = None,
        config: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Client:
        kwargs.setdefault("user_config", modelplug_config_dir / "config.toml")
        environ = kwargs.get("environ")
        if environ is not None and "MODELPLUG_DATA_DIR" not in environ:
            # A test that gives its own environment still keeps its state to itself.
            data_dir = str(modelplug_config_dir.parent / "modelplug-data")
            kwargs["environ"] = {**environ, "MODELPLUG_DATA_DIR": data_dir}
        # Names (strings) switch installed plugins on, as an allow-list; objects register.
        names = [p for p in plugins if isinstance(p, str)]
        if names:
            kwargs.setdefault("enable", names)
        if entry_points is None:
            entry_points = bool(names)
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
