"""``modelplug models``: per provider, the models settings and plugins name, each with
its context window, max output and price per million tokens, and where each comes
from; ``--json`` for programs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from modelplug.cli import main

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
