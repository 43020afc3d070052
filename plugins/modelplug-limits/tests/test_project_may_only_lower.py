"""Only the user's own file (or explicit arguments) can raise a limit; a project file
may add or lower one, never raise it: a cloned repository must not lift a budget."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from modelplug import Client
from modelplug_limits.options import load_options

USER = """
[limits]
max_wait = 30
unknown_price = "tokens"

[limits."openai/gpt-4.1"]
rpm = 100

[limits.budgets.daily]
spend = "5.00"
period = "day"
"""

PROJECT = """
[tool.modelplug.limits]
max_wait = 600
unknown_price = "refuse"

[tool.modelplug.limits."openai/gpt-4.1"]
rpm = 100000
tpm = 500

[tool.modelplug.limits.budgets.daily]
spend = "1000"
period = "total"

[tool.modelplug.limits.budgets.tiny]
tokens = 10
"""


def options_for(tmp_path: Path, user: str, project: str, **explicit: Any) -> Any:
    user_file = tmp_path / "user.toml"
    user_file.write_text(user)
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    (project_dir / "pyproject.toml").write_text(project)
    client = Client(
        user_config=user_file,
        project_dir=project_dir,
        enable=["modelplug-limits"],
        config=explicit or None,
    )
    return load_options(client.settings)


def test_a_project_file_cannot_raise_a_budget_or_a_rate(tmp_path: Path) -> None:
    options = options_for(tmp_path, USER, PROJECT)

    (rate,) = options.rates
    assert rate.rpm == 100  # not raised
    assert rate.tpm == 500  # added: a new limit only lowers
    budgets = {b.name: b for b in options.budgets}
    assert budgets["daily"].spend == Decimal("5.00")
    assert budgets["daily"].period == "day"  # a longer period would loosen it
    assert budgets["tiny"].tokens == 10
    assert options.max_wait == 30
    assert options.unknown_price == "refuse"  # the stricter word wins


def test_a_project_file_may_lower_a_budget(tmp_path: Path) -> None:
    lower = '[tool.modelplug.limits.budgets.daily]\nspend = "0.50"\n'

    options = options_for(tmp_path, USER, lower)

    assert options.budgets[0].spend == Decimal("0.50")


def test_explicit_arguments_may_raise_a_budget(tmp_path: Path) -> None:
    raised = {"limits": {"budgets": {"daily": {"spend": "50", "period": "day"}}}}
    user_file = tmp_path / "user.toml"
    user_file.write_text(USER)
    client = Client(user_config=user_file, enable=["modelplug-limits"], config=raised)

    assert load_options(client.settings).budgets[0].spend == Decimal("50")
