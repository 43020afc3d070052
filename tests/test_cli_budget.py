"""``modelplug budget -m MODEL``: the key's spend, limit and reset on stdout (``--json``
the KeyBudget), exit status 3 when the endpoint exposes no key budget, 1 when it could
not be reached. The answers are recorded ones: LiteLLM's /key/info and OpenRouter's
/api/v1/key (plugins/modelplug-openai-compat/tests/recordings, where each says its
source)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelplug.cli import main
from modelplug.cli.budget import NO_BUDGET
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parents[1] / "plugins/modelplug-openai-compat/tests/recordings"


@pytest.fixture
def proxy(modelplug_config_dir: Path) -> Iterator[WireServer]:
    """A wire server standing in for a proxy, as the user's provider ``proxy``."""
    server = WireServer().start()
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.proxy]\ntype = "openai-compatible"\nbase_url = "{server.url}/v1"\n'
    )
    try:
        yield server
    finally:
        server.stop()


def recorded(server: WireServer, name: str, path: str) -> None:
    server.add_file(
        RECORDINGS / name, path=path, content_type="application/json", chunk_size=1 << 16
    )


def test_a_litellm_budget_is_shown_in_dollars(
    proxy: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded(proxy, "litellm_key_info.json", "/key/info")
    code = main(["budget", "-m", "proxy/claude-haiku"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.splitlines() == [
        "proxy/claude-haiku",
        "  source: litellm-key-info",
        "  spend: 12.5 USD",
        "  limit: 50.0 USD",
        "  remaining: 37.5 USD",
        "  resets every: 30d",
        "  resets at: 2026-12-31T00:00:00+00:00",
    ]


def test_json_keeps_openrouters_credits(
    proxy: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    proxy.add('{"detail":"Not Found"}', status=404, path="/key/info")
    recorded(proxy, "openrouter_key.json", "/v1/key")
    code = main(["budget", "-m", "proxy/m", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["budget"] == {
        "source": "openrouter",
        "spend": "25.5",
        "limit": "100",
        "remaining": "74.5",
        "reset_at": None,
        "interval": "monthly",
        "currency": "credits",
    }


def test_no_key_budget_exits_3_with_a_line_on_stderr(
    proxy: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    proxy.add('{"detail":"Not Found"}', status=404, path="/key/info")
    proxy.add('{"detail":"Not Found"}', status=404, path="/v1/key")
    code = main(["budget", "-m", "proxy/m"])
    out, err = capsys.readouterr()
    assert (code, out) == (NO_BUDGET, "")
    assert "exposes no key budget" in err


def test_an_endpoint_that_fails_exits_1(
    proxy: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    proxy.add('{"error":"database down"}', status=503, path="/key/info")
    code = main(["budget", "-m", "proxy/m"])
    _, err = capsys.readouterr()
    assert code == 1
    assert "503" in err
