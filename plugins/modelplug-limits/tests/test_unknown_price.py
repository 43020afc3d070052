"""A spend budget and a model whose price nobody knows: refused before anything is
sent, through the real ``modelplug chat``, with a message that says what is unknown (the
model's price) and names the two settings that decide; and each of them, once set, lets
the call through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from modelplug.testing import FakeModel, text

# A remote provider of the user's own: a loopback server would be free (price 0), and
# nothing is sent anyway, so the name never needs to resolve.
USER_FILE = """
[providers.lab]
type = "openai-compatible"
base_url = "https://llm.example.invalid/v1"

[limits.budgets.daily]
spend = "1.00"
period = "day"
"""
BUDGET = {"budgets": {"daily": {"spend": "1.00", "period": "day"}}}


def test_modelplug_stream_names_what_is_unknown_and_the_settings_that_decide(
    tmp_path: Path,
) -> None:
    # The real command needs a provider of the user file's type: in this repository
    # modelplug-openai-compat; from this plugin's sdist alone there is none.
    pytest.importorskip(
        "modelplug_openai_compat", reason="the user's provider is openai-compatible"
    )
    (tmp_path / "config.toml").write_text(USER_FILE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(tmp_path / "config.toml")
    env["MODELPLUG_DATA_DIR"] = str(tmp_path / "data")

    done = subprocess.run(
        [sys.executable, "-m", "modelplug.cli", "chat", "-m", "lab/tiny", "hi"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )

    assert done.returncode == 1 and done.stdout == ""
    message = done.stderr
    assert message.count("\n") == 1 and "Traceback" not in message
    assert "budget 'daily' (1.00 USD per day) cannot count a call to lab/tiny" in message
    assert "the price of lab/tiny is unknown" in message
    assert '[models."lab/tiny"] price = { input = ..., output = ... }' in message
    assert '[limits] unknown_price = "tokens"' in message
    assert "unknown amount spent" not in message


def test_a_price_for_the_model_lets_the_call_through(make_client: Any) -> None:
    fake = FakeModel([text("priced")])  # no price of its own
    config = {"limits": BUDGET, "models": {"fake/m": {"price": {"input": 0, "output": 0}}}}
    client = make_client("modelplug-limits", fake, config=config)

    assert client.complete("fake/m", "hi").text == "priced"
    assert len(fake.requests) == 1


def test_unknown_price_tokens_lets_the_call_through(make_client: Any) -> None:
    fake = FakeModel([text("counted by tokens")])
    config = {"limits": {**BUDGET, "unknown_price": "tokens"}}
    client = make_client("modelplug-limits", fake, config=config)

    assert client.complete("fake/m", "hi").text == "counted by tokens"
    assert len(fake.requests) == 1
