"""``modelplug gateway keys create|list|revoke|rotate`` through the real command."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from modelplug import Client
from modelplug.cli import main
from modelplug_gateway.auth import Refusal
from modelplug_gateway.key_gate import VirtualKeyGate


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("MODELPLUG_PLUGINS", "MODELPLUG_DISABLE", "MODELPLUG_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "user.toml").write_text("")
    monkeypatch.setenv("MODELPLUG_CONFIG", str(tmp_path / "user.toml"))
    monkeypatch.setenv("MODELPLUG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def command(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["gateway", "keys", *args])
    out, err = capsys.readouterr()
    return code, out, err


def admit(key: str, model: str = "m") -> str:
    async def work() -> str:
        gate = VirtualKeyGate.for_client(Client())
        try:
            ticket = await gate.admit({"x-api-key": key}, b"", model)
        except Refusal as exc:
            return str(exc.status)
        await ticket.settle(None, None, None)  # never reached a provider: costs nothing
        return ticket.key_name or ""

    return asyncio.run(work())


def test_create_prints_the_key_once_and_list_never_shows_it(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = command(
        capsys, "create", "alice", "--budget", "5.00", "--period", "week", "--rpm", "60",
        "--tpm", "10000", "--models", "fast,live/gemma", "--expires", "2099-01-31",
    )  # fmt: skip
    assert code == 0
    key = out.strip()
    assert key.startswith("mpk-") and "shown only now" in err
    assert admit(key, "fast") == "alice"
    assert admit(key, "other/model") == "403"
    code, out, _ = command(capsys, "list", "--json")
    assert code == 0 and key not in out and key[4:] not in out
    (row,) = json.loads(out)
    assert row == {
        "name": "alice",
        "state": "active",
        "budget": "5.00",
        "period": "week",
        "spent": "0",
        "rpm": 60,
        "tpm": 10000,
        "models": ["fast", "live/gemma"],
        "expires": "2099-01-31T00:00:00Z",
    }
    code, out, _ = command(capsys, "list")
    assert "alice" in out and "5.00 USD/week" in out and key not in out


def test_revoke_and_rotate(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = command(capsys, "create", "bob")
    old = out.strip()
    code, out, err = command(capsys, "rotate", "bob")
    new = out.strip()
    assert code == 0 and new.startswith("mpk-") and new != old and "old key" in err
    assert admit(old) == "401" and admit(new) == "bob"
    assert command(capsys, "revoke", "bob")[0] == 0
    assert admit(new) == "401"
    _, out, _ = command(capsys, "list", "--json")
    assert json.loads(out)[0]["state"] == "revoked"


def test_mistakes_are_said_without_a_traceback(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert command(capsys, "create", "carol")[0] == 0
    code, _, err = command(capsys, "create", "carol")
    assert code == 1 and "exists already" in err
    code, _, err = command(capsys, "revoke", "nobody")
    assert code == 1 and "no key named" in err
    code, _, err = command(capsys, "create", 'bad"name')
    assert code == 2 and "name" in err
    code, _, err = command(capsys, "create", "dave", "--budget", "lots")
    assert code == 2 and "--budget" in err
