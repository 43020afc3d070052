"""``modelplug embed -m SPEC TEXT...``: a line per input (its dimensions and first
values), usage and cost on stderr; ``--json`` prints ``{"model", "vectors", "usage"}``;
a provider without embeddings is one line and exit code 1."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from modelplug.builtin.echo import echo_vector
from modelplug.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["embed", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_embed_json_prints_the_model_vectors_and_usage(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "-m", "echo/e", "red fox", "blue sky", "--json")

    assert code == 0
    data = json.loads(out)
    assert set(data) == {"model", "vectors", "usage"}
    assert data["model"] == "echo/e"
    assert data["vectors"] == [echo_vector("red fox"), echo_vector("blue sky")]
    assert data["usage"] == {"input": 4, "reported": True}


def test_embed_prints_a_line_per_input_then_usage_and_cost(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "-m", "echo/e", "--dimensions", "3", "one", "two words")

    assert code == 0
    first, second = out.splitlines()
    vector = echo_vector("one", 3)
    assert first == f'0: 3 dims [{", ".join(f"{v:.4f}" for v in vector)}]  "one"'
    assert second.startswith("1: 3 dims [") and second.endswith('"two words"')
    assert err.strip() == "echo/e: input 3 cost $0"


def test_embed_reads_a_dash_from_stdin(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("piped text"))

    code, out, _ = run(capsys, "-m", "echo/e", "-", "--json")

    assert code == 0
    assert json.loads(out)["vectors"] == [echo_vector("piped text")]


def test_embed_on_a_provider_without_embeddings_is_one_line(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.chatonly]\ntype = "nothing-embeds-this"\n'
    )

    code, out, err = run(capsys, "-m", "chatonly/m", "hello")

    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
