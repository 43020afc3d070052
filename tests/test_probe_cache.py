"""A probe's answer is the route's from then on: the probed context window (and tool
support) replaces the plugin's guess, whose "run --probe" note goes, in the same Client
and in the next process, for a day."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from modelplug import Client
from modelplug.cli import main
from modelplug.client.probe_cache import MAX_AGE
from modelplug_kit.testing import WireServer

# llama.cpp's GET /props, trimmed to the two fields the probe reads (the server's
# names; the values are invented for this test: a server started with -c 2048 and a
# chat template without tool support).
PROPS = {
    "default_generation_settings": {"n_ctx": 2048},
    "chat_template_caps": {"supports_tools": False},
}
GUESS_NOTE = "has no context_window entry; assuming 32,768"


@pytest.fixture
def llamacpp(modelplug_config_dir: Path, wire_server: WireServer) -> Path:
    """The user's file pointing the llamacpp preset at the loopback server."""
    own = modelplug_config_dir / "config.toml"
    own.write_text(
        f'[providers.llamacpp]\ntype = "openai-compatible"\nbase_url = "{wire_server.url}/v1"\n'
    )
    return own


def client() -> Client:
    return Client(enable=["modelplug-openai-compat"])


def resolve_text(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["resolve", *args]) == 0
    return capsys.readouterr().out


def test_resolve_probe_shows_the_probed_window_as_the_routes_and_drops_the_note(
    llamacpp: Path, wire_server: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "context window: 32768" in resolve_text(capsys, "llamacpp/any")
    wire_server.add_json(PROPS, path="/props")
    out = resolve_text(capsys, "--probe", "llamacpp/any")
    assert "context window: 2048" in out
    assert "probe: context window 2048, tools no" in out
    assert "tools: no" in out
    assert GUESS_NOTE not in out and "32768" not in out
    assert "--probe" not in out.replace("probe: ", "")  # no advice to do what was done


def test_the_next_run_uses_the_probed_window_and_says_where_it_came_from(
    llamacpp: Path, wire_server: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    wire_server.add_json(PROPS, path="/props")
    resolve_text(capsys, "--probe", "llamacpp/any")
    out = resolve_text(capsys, "llamacpp/any")  # a new Client: the answer came from disk
    assert "context window: 2048" in out and "tools: no" in out
    assert GUESS_NOTE not in out
    assert "note: context window 2,048, tools no: from a probe of the server just now" in out
    assert len(wire_server.requests) == 1  # it did not ask the server again


def test_a_running_client_sees_a_probe_another_process_made(
    llamacpp: Path, wire_server: WireServer
) -> None:
    wire_server.add_json(PROPS, path="/props")
    with client() as running:
        assert running.resolve("llamacpp/any").info.context_window == 32768  # file read
        done = subprocess.run(
            [sys.executable, "-m", "modelplug", "resolve", "--probe", "llamacpp/any"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert running.resolve("llamacpp/any").info.context_window == 2048


def test_a_probe_is_used_by_later_resolves_in_the_same_client(
    llamacpp: Path, wire_server: WireServer
) -> None:
    wire_server.add_json(PROPS, path="/props")
    with client() as one:
        assert one.resolve("llamacpp/any").info.context_window == 32768
        one.probe("llamacpp/any")
        info = one.resolve("llamacpp/any").info
    assert (info.context_window, info.supports_tools) == (2048, False)
    assert not any(GUESS_NOTE in note for note in info.notes)
    # The price and what the plugin knows beyond the probe stay.
    assert info.price_source == "local (free)" and info.structured_output == "native"


def test_the_probe_is_kept_owner_only_per_provider_address_and_model(
    llamacpp: Path, wire_server: WireServer, modelplug_config_dir: Path
) -> None:
    wire_server.add_json(PROPS, path="/props")
    with client() as one:
        one.probe("llamacpp/any")
        data_dir = one.settings.data_dir()
        # Another model on the same server was not probed.
        assert one.resolve("llamacpp/other").info.context_window == 32768
    kept = data_dir / "probes.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert [json.loads(key) for key in json.loads(kept.read_text())] == [
        ["llamacpp", f"{wire_server.url}/v1", "any"]
    ]


def test_the_users_own_context_window_wins_over_a_probe(
    llamacpp: Path, wire_server: WireServer
) -> None:
    with llamacpp.open("a") as own:
        own.write('[models."llamacpp/any"]\ncontext_window = 4096\n')
    wire_server.add_json(PROPS, path="/props")
    with client() as one:
        one.probe("llamacpp/any")
        info = one.resolve("llamacpp/any").info
    assert info.context_window == 4096 and info.supports_tools is False


def test_a_probe_older_than_a_day_is_forgotten(llamacpp: Path, wire_server: WireServer) -> None:
    wire_server.add_json(PROPS, path="/props")
    with client() as one:
        one.probe("llamacpp/any")
        kept = one.settings.data_dir() / "probes.json"
    data = json.loads(kept.read_text())
    for entry in data.values():
        entry["at"] = time.time() - MAX_AGE - 60
    kept.write_text(json.dumps(data))
    with client() as later:
        info = later.resolve("llamacpp/any").info
    assert info.context_window == 32768
    assert any(GUESS_NOTE in note for note in info.notes)


def test_a_damaged_cache_file_is_ignored(llamacpp: Path, wire_server: WireServer) -> None:
    with client() as one:
        kept = one.settings.data_dir() / "probes.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text('{"x": {"at": "soon", "info": []}, ')
    with client() as later:
        assert later.resolve("llamacpp/any").info.context_window == 32768
        wire_server.add_json(PROPS, path="/props")
        later.probe("llamacpp/any")  # and is replaced by the next probe
    assert len(json.loads(kept.read_text())) == 1
