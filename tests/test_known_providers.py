"""The install hints name distributions that exist."""

from __future__ import annotations

from pathlib import Path

from modelplug.known_providers import KNOWN_PROVIDERS, PRICING_DISTRIBUTION

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = {p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file()}


def test_every_hinted_distribution_is_a_plugin_of_this_repository() -> None:
    named = {d for known in KNOWN_PROVIDERS.values() for d in known.distributions}
    assert named | {PRICING_DISTRIBUTION} <= PLUGINS, sorted(named - PLUGINS)
