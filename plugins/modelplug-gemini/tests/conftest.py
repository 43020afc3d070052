"""Shared fixtures: Clients whose ``gemini`` and ``vertex`` providers point at the
loopback WireServer through the user's own settings file (the only place a base URL
may come from), with a test key and test Google credentials."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import modelplug_gemini
import pytest
from modelplug.client.client import Client
from modelplug.testing import calm_hypothesis
from modelplug_kit.testing import WireServer, load_recording

RECORDED = Path(__file__).parent / "recorded"
TEST_KEY = "AIzaSy-test-0123456789abcdefghijk"
PLANTED_TOKEN = "ya29.planted-token-0123456789abcdef"


@pytest.fixture
def recorded() -> Callable[[str], Path]:
    """``recorded("text.sse")``: the path of a recording beside the tests."""
    return lambda name: RECORDED / name


@pytest.fixture
def recorded_json() -> Callable[[str], Any]:
    """``recorded_json("rate_limit_429.json")``: a recorded JSON body, parsed."""
    return lambda name: json.loads(load_recording(RECORDED / name))


@pytest.fixture
def test_key() -> str:
    return TEST_KEY


@pytest.fixture
def planted_token() -> str:
    return PLANTED_TOKEN


@pytest.fixture(scope="module")
def _module_wire_server() -> Iterator[WireServer]:
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def wire_server(_module_wire_server: WireServer) -> WireServer:
    """The test kit's WireServer, shared by a module's tests, handed on idle and emptied (``WireServer.hand_on``)."""
    return _module_wire_server.hand_on()


@pytest.fixture
def gemini_client(
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    wire_server: WireServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., Client]:
    """``gemini_client(extra_toml="")``: a Client with this plugin, the test key in
    GEMINI_API_KEY and ``[providers.gemini]`` pointing at ``wire_server`` with
    ``api_key_env = "GEMINI_API_KEY"`` (a loopback server that names no key variable
    gets no key: here it stands in for Google's, which takes one)."""
    monkeypatch.setenv("GEMINI_API_KEY", TEST_KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)

    def make(extra_toml: str = "", *plugins: object, **kwargs: Any) -> Client:
        (modelplug_config_dir / "config.toml").write_text(
            f'[providers.gemini]\ntype = "gemini"\nbase_url = "{wire_server.url}"\n'
            'api_key_env = "GEMINI_API_KEY"\n' + extra_toml
        )
        return make_client(modelplug_gemini, *plugins, **kwargs)

    return make


def planted_credentials(token: str = PLANTED_TOKEN) -> Any:
    """Real google-auth Credentials whose ``refresh`` sets a known token (and counts
    its calls), with no network."""
    from google.auth import credentials as google_credentials

    class Planted(google_credentials.Credentials):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.refreshes = 0

        def refresh(self, request: Any) -> None:
            self.refreshes += 1
            self.token = f"{token}-{self.refreshes}" if self.refreshes > 1 else token
            self.expiry = None

    return Planted()


@pytest.fixture
def vertex_client(
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    wire_server: WireServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., tuple[Client, Any]]:
    """``vertex_client(credentials=None, options=..., adc_project=...)``: a Client whose
    ``vertex`` provider points at ``wire_server``, project ``proj-test`` in
    ``europe-west4`` (the ``[gemini]`` table's body is ``options``), and
    google.auth.default answering with test credentials and ``adc_project`` (no
    network). Returns the client and the credentials."""
    pytest.importorskip("google.auth")
    import google.auth

    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION", raising=False)

    def make(
        credentials: Any = None,
        options: str = 'vertex_project = "proj-test"\nvertex_location = "europe-west4"\n',
        adc_project: str | None = "adc-proj",
    ) -> tuple[Client, Any]:
        creds = credentials if credentials is not None else planted_credentials()
        monkeypatch.setattr(google.auth, "default", lambda scopes=None, **_: (creds, adc_project))
        (modelplug_config_dir / "config.toml").write_text(
            f'[providers.vertex]\ntype = "vertex"\nbase_url = "{wire_server.url}"\n'
            "[gemini]\n" + options
        )
        return make_client(modelplug_gemini), creds

    return make


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
