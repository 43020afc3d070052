"""Shared fixtures: a Client whose `anthropic` provider points at the loopback server
through the user's own settings file (the only place a base URL may come from)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import modelplug_anthropic
import pytest
from modelplug import Client
from modelplug.testing import calm_hypothesis
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
TEST_KEY = "sk-ant-test-0123456789abcdef"


@pytest.fixture
def recording() -> Callable[[str], Path]:
    """``recording("text.sse")``: the path of a recorded body beside the tests."""
    return lambda name: RECORDINGS / name


@pytest.fixture
def claude_client(
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    wire_server: WireServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., Client]:
    """``claude_client(extra_toml="", key_env="ANTHROPIC_API_KEY")``: a Client with this
    plugin, the test key in ANTHROPIC_API_KEY and ``[providers.anthropic]`` pointing at
    ``wire_server`` with ``api_key_env = key_env`` (a loopback server that names no key
    variable gets no key: here it stands in for Anthropic's, which takes one)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)

    def make(extra_toml: str = "", key_env: str = "ANTHROPIC_API_KEY", **kwargs: Any) -> Client:
        (modelplug_config_dir / "config.toml").write_text(
            f'[providers.anthropic]\ntype = "anthropic"\nbase_url = "{wire_server.url}"\n'
            f'api_key_env = "{key_env}"\n' + extra_toml
        )
        return make_client(modelplug_anthropic, **kwargs)

    return make


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
