"""The install hints name distributions that exist, and examples that are current."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from modelplug.host.known_providers import KNOWN_PROVIDERS, PRICING_DISTRIBUTION, example_spec

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = {p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file()}


def test_every_hinted_distribution_is_a_plugin_of_this_repository() -> None:
    named = {d for known in KNOWN_PROVIDERS.values() for d in known.distributions}
    assert named | {PRICING_DISTRIBUTION} <= PLUGINS, sorted(named - PLUGINS)


# Models past their end of life: no example may name one. KNOWN_PROVIDERS is the one
# place examples are kept; the plugins declare the same, tests take example_spec().
RETIRED = {"claude-sonnet-4-5"}


def test_no_example_is_a_retired_model() -> None:
    examples = {name: known.example for name, known in KNOWN_PROVIDERS.items()}
    assert {n: m for n, m in examples.items() if m in RETIRED} == {}
    assert example_spec("anthropic") == "anthropic/claude-sonnet-4-6"


def test_every_plugin_declares_the_known_example(make_client: Any) -> None:
    declared = make_client(entry_points=True).declared_providers()
    assert {"anthropic", "gemini", "ollama", "openai"} <= declared.keys()
    differ = [
        (name, plugin, entry.example)
        for name, entries in declared.items()
        for entry, plugin in entries
        if name in KNOWN_PROVIDERS
        and entry.example not in (None, "", KNOWN_PROVIDERS[name].example)
    ]
    assert differ == []
