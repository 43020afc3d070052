"""``modelplug models``: per provider, the models settings and plugins name, each with
its context window, max output and price per million tokens, and where each comes
from; ``--json`` for programs."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from modelplug.cli import main
from modelplug.host.known_providers import KNOWN_PROVIDERS
from modelplug_kit.testing import WireServer

SETTINGS = """
model = "echo/default"
[aliases]
quick = "echo/fast"
[roles]
smart = "echo/default"
[fallbacks]
smart = ["echo/backup"]
[models."echo/fast"]
context_window = 8192
price = { input = 3, output = 15 }
"""


def models(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["models", *args])
    out, err = capsys.readouterr()
    return code, out, err


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r.get("name", r.get("spec")): r for r in rows}


def test_models_lists_what_the_settings_name_with_why_and_from_where(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (modelplug_config_dir / "config.toml").write_text(SETTINGS)
    code, out, _ = models(capsys, "--json")
    assert code == 0
    rows = by_name(json.loads(out))
    user_file = f"user file {modelplug_config_dir / 'config.toml'}"
    assert rows["echo/default"]["listed_by"] == [f"the default model ({user_file})", "role smart"]
    assert rows["echo/backup"]["listed_by"] == ["fallback for smart"]
    fast = rows["echo/fast"]
    assert fast["listed_by"] == [f"[models] ({user_file})", "alias quick"]
    # The user's window and price win, and say so; the rest is the provider plugin's.
    assert (fast["context_window"], fast["context_window_source"]) == (
        8192,
        f"settings ({user_file})",
    )
    assert (fast["max_output_tokens"], fast["max_output_tokens_source"]) == (1_000_000, "echo")
    assert fast["price"] == {"input": "3", "output": "15", "currency": "USD", "source": "settings"}
    assert rows["echo/default"]["price"]["source"] == "echo (free)"


def test_models_lists_each_providers_example_from_its_plugin(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = models(capsys)
    assert code == 0
    assert "echo  (served by echo)\n  echo/any\n" in out
    assert "    listed by: example of echo\n" in out
    assert "    context window: 1,000,000 (echo)\n" in out
    assert "    price per million tokens: input $0, output $0 (echo (free))\n" in out


def test_models_shows_a_catalogs_window_and_a_price_tables_price(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("modelplug_prices")
    pytest.importorskip("modelplug_anthropic")
    code, out, _ = models(capsys, "--json", "anthropic/claude-sonnet-4-6")
    assert code == 0
    (row,) = json.loads(out)
    assert row["served_by"] == "modelplug-anthropic"
    assert (row["context_window"], row["context_window_source"]) == (1_000_000, "modelplug-prices")
    assert (row["price"]["input"], row["price"]["output"]) == ("3", "15")
    assert row["price"]["source"].startswith("genai-prices ")


def test_a_model_nobody_prices_says_how_to_set_its_price(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("modelplug_openai_compat")
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.lab]\ntype = "openai-compatible"\nbase_url = "https://llm.example.com/v1"\n'
    )
    code, out, _ = models(capsys, "lab/mystery-model")
    assert code == 0
    assert "lab  (served by modelplug-openai-compat)\n  lab/mystery-model\n" in out
    assert "    listed by: the command line\n" in out
    assert (
        "    price: unknown (no pricing table knows it; set one in your settings: "
        '[models."lab/mystery-model"] price = { input = ..., output = ... })\n'
    ) in out


def test_a_spec_that_resolves_to_nothing_is_shown_with_its_error_and_exits_2(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = models(capsys, "nowhere/m", "echo/x")
    assert code == 2
    assert "  echo/x\n" in out
    assert "nowhere/m: cannot resolve it (the command line)\n" in out
    assert "Unknown provider 'nowhere'" in out


def test_an_alias_to_nothing_in_the_settings_is_listed_with_its_error(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (modelplug_config_dir / "config.toml").write_text('[aliases]\nbroken = "nowhere/m"\n')
    code, out, _ = models(capsys, "--json")
    assert code == 0  # the listing is still a listing
    row = by_name(json.loads(out))["nowhere/m"]
    assert row["listed_by"] == ["alias broken"] and "Unknown provider" in row["error"]


RECORDINGS = Path(__file__).parent / "recordings"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def local_servers(config_dir: Path, llamacpp: str, ollama: str) -> None:
    """The user's llama-server and Ollama, at these addresses."""
    (config_dir / "config.toml").write_text(
        f'[providers.llamacpp]\ntype = "openai-compatible"\nbase_url = "{llamacpp}/v1"\n'
        f'[providers.ollama]\ntype = "ollama"\nbase_url = "{ollama}"\n',
        encoding="utf-8",
    )


def test_models_lists_what_local_servers_serve_instead_of_an_example(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], wire_server: WireServer
) -> None:
    pytest.importorskip("modelplug_openai_compat")
    pytest.importorskip("modelplug_ollama")
    local_servers(modelplug_config_dir, wire_server.url, wire_server.url)
    json_answer = {"content_type": "application/json"}
    wire_server.add_file(RECORDINGS / "llamacpp_models.json", path="/v1/models", **json_answer)
    wire_server.add_file(RECORDINGS / "ollama_tags.json", path="/api/tags", **json_answer)
    code, out, _ = models(capsys)
    assert code == 0
    served_at = f"listed by: served by the server at {wire_server.url}"
    assert f"  llamacpp/gemma-3-4b-it\n    {served_at}/v1\n" in out
    assert f"  ollama/qwen3:8b\n    {served_at}\n" in out
    assert f"  ollama/gemma3:4b\n    {served_at}\n" in out
    # The examples stand for nothing these servers serve: not listed.
    assert "ollama/qwen3:8b\n    listed by: example" not in out
    assert sorted(r.path for r in wire_server.requests) == ["/api/tags", "/v1/models"]


def test_a_local_server_that_does_not_answer_is_said_with_the_example(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("modelplug_openai_compat")
    pytest.importorskip("modelplug_ollama")
    down = f"http://127.0.0.1:{closed_port()}"
    local_servers(modelplug_config_dir, down, down)
    code, out, _ = models(capsys, "--json")
    assert code == 0
    rows = by_name(json.loads(out))
    llamacpp = rows[f"llamacpp/{KNOWN_PROVIDERS['llamacpp'].example}"]
    assert llamacpp["note"] == (
        f"the server at {down}/v1 did not answer (connection refused), so this is the "
        "plugin's example, not a model it is known to serve"
    )
    assert rows[f"ollama/{KNOWN_PROVIDERS['ollama'].example}"]["note"].startswith(
        f"the server at {down} did not answer"
    )
    assert "note" not in rows["echo/any"]  # nothing was asked of echo


def test_a_local_server_with_no_model_loaded_says_so(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], wire_server: WireServer
) -> None:
    pytest.importorskip("modelplug_openai_compat")
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.lab]\ntype = "openai-compatible"\nbase_url = "{wire_server.url}/v1"\n'
    )
    wire_server.add_json({"object": "list", "data": []}, path="/v1/models")
    code, out, _ = models(capsys)
    assert code == 0
    assert (
        f"lab  (asked the server at {wire_server.url}/v1): the server at "
        f"{wire_server.url}/v1 lists no model; load one there\n"
    ) in out
