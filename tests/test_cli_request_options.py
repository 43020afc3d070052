"""``modelplug chat -o KEY=VALUE``: values read as JSON when they are, Request fields
set by name, ``extra.NAME`` passed to the provider, anything else refused naming the
option."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from modelplug.cli import main

RECORDING = Path(__file__).parent / "recordings" / "chat_text.sse"


@pytest.fixture
def lab(modelplug_config_dir: Path, wire_server: Any) -> Any:
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.lab]\ntype = "openai-compatible"\nbase_url = "{wire_server.url}/v1"\n'
    )
    return wire_server


def test_options_set_request_fields_and_pass_extras(
    lab: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    lab.add_file(RECORDING)
    code = main(
        [
            "chat",
            "-m",
            "lab/m",
            "-o",
            "temperature=0.2",
            "-o",
            "seed=7",
            "-o",
            "stop=END",
            "-o",
            "extra.num_ctx=8192",
            "-o",
            "extra.logprobs=true",
            "-o",
            "extra.user=ada",
            "hi",
        ]
    )
    assert code == 0, capsys.readouterr().err
    body = lab.requests[0].json()
    assert body["temperature"] == 0.2 and body["seed"] == 7 and body["stop"] == ["END"]
    assert type(body["seed"]) is int
    assert (body["num_ctx"], body["logprobs"], body["user"]) == (8192, True, "ada")


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("temprature=0.2", "-o temprature=0.2: unknown option 'temprature'"),
        ("temprature=0.2", "-o extra.temprature=0.2 passes it to the provider"),
        ("temperature=hot", "-o temperature=hot: Input should be a valid number"),
        ("top_p=3", "-o top_p=3: Input should be less than or equal to 1"),
        ("temperature", "-o temperature: write -o KEY=VALUE"),
        ("extra.=1", "-o extra.=1: name the provider option"),
    ],
)
def test_a_wrong_option_is_refused_naming_it_before_any_call(
    lab: Any, capsys: pytest.CaptureFixture[str], option: str, words: str
) -> None:
    assert main(["chat", "-m", "lab/m", "-o", option, "hi"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert words in err
    assert lab.requests == []


def test_the_help_says_which_options_set_fields_and_which_go_to_the_provider(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "temperature, top_p, top_k, seed, max_tokens, stop, cache set that Request field" in text
    assert "extra.NAME passes NAME to the provider as is" in text
