"""Hosted OpenAI-compatible services by name: the install hint names the plugin that
serves each, and ``modelplug models`` lists each one's example."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from modelplug import UnknownProviderError
from modelplug.cli import main
from modelplug.host.known_providers import KNOWN_PROVIDERS, example_spec
from modelplug.testing import FakeModel

HOSTED = (
    "mistral",
    "groq",
    "xai",
    "deepseek",
    "together",
    "fireworks",
    "cerebras",
    "deepinfra",
    "perplexity",
)


@pytest.mark.parametrize("name", HOSTED)
def test_each_hosted_service_has_an_install_hint_and_an_example(name: str) -> None:
    known = KNOWN_PROVIDERS[name]
    assert known.distributions == ("modelplug-openai-compat",)
    assert known.example


def test_a_hosted_service_without_its_plugin_says_what_to_install(make_client: Any) -> None:
    client = make_client(FakeModel(provider="scripted"))
    with pytest.raises(UnknownProviderError) as caught:
        client.resolve("deepseek/deepseek-chat")
    message = str(caught.value)
    assert "pip install modelplug-openai-compat" in message
    assert f"then use e.g. {example_spec('deepseek')}" in message


def test_the_plugin_serves_every_hosted_name(make_client: Any) -> None:
    pytest.importorskip("modelplug_openai_compat")
    declared = make_client("modelplug-openai-compat", entry_points=True).declared_providers()
    assert set(HOSTED) <= declared.keys()


def test_models_lists_each_hosted_services_example(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("modelplug_openai_compat")
    assert main(["models", "--json"]) == 0
    rows = {row.get("name", row.get("spec")): row for row in json.loads(capsys.readouterr().out)}
    for name in HOSTED:
        row = rows[example_spec(name)]
        assert row["served_by"] == "modelplug-openai-compat", name
        assert row["listed_by"] == [f"example for {name} (core's provider table)"], name
