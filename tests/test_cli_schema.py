"""``modelplug chat --schema``: a JSON Schema given in a file or inline, the answer
printed as validated JSON; a value that is neither says which it tried and what to give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from modelplug.cli import main

SCHEMA = '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}'


def chat(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["chat", "-m", "echo", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_inline_schema_is_used_as_the_schema(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = chat(capsys, "--schema", SCHEMA, "Paris")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"city": "Paris"}  # echo fills the schema's string


def test_a_schema_file_is_still_read(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "city.json"
    path.write_text(SCHEMA)
    code, out, _ = chat(capsys, "--schema", str(path), "Lyon")
    assert (code, json.loads(out)) == (0, {"city": "Lyon"})


def test_a_value_that_is_neither_a_file_nor_json_says_both(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = chat(capsys, "--schema", "city.json", "Paris")
    assert (code, out) == (2, "")
    assert err.startswith("modelplug: --schema city.json: neither a file (cannot read it: ")
    assert "nor inline JSON (which starts with {); give a schema file or the schema itself" in err


def test_broken_inline_json_is_named_as_such_with_how_to_quote_it(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = chat(capsys, "--schema", '{"type": object}', "Paris")
    assert (code, out) == (2, "")
    assert err.startswith("modelplug: --schema: the inline schema is not JSON (Expecting value")
    assert '--schema \'{"type": "object"}\', or give a file' in err


def test_a_schema_file_that_is_not_json_names_the_file(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "broken.json"
    path.write_text("type: object")
    code, _, err = chat(capsys, "--schema", str(path), "Paris")
    assert code == 2
    assert err.startswith(f"modelplug: --schema {path}: the file is not JSON (")
