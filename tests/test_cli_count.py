"""``modelplug count -m MODEL FILE``: the prompt's count on stdout (a JSON messages file
is that conversation, other text one user message; ``--text`` the text alone), and exit
status 3 with a line on stderr when the endpoint cannot count."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelplug.cli import main
from modelplug.cli.count import NO_COUNT, read_prompt
from modelplug_kit.testing import WireServer

TEMPLATE = {"prompt": "<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n"}


@pytest.fixture
def llama(modelplug_config_dir: Path) -> Iterator[WireServer]:
    """A wire server standing in for llama-server, as the user's provider ``llama``."""
    server = WireServer().start()
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.llama]\ntype = "openai-compatible"\nbase_url = "{server.url}/v1"\n'
        'server = "llamacpp"\n'
    )
    try:
        yield server
    finally:
        server.stop()


def test_a_text_file_is_counted_as_one_user_message(
    llama: WireServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llama.add_json(TEMPLATE, path="/apply-template")
    llama.add_json({"tokens": [2, 105, 2364, 107, 6018]}, path="/tokenize")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("hi")
    code = main(["count", "-m", "llama/gemma", str(prompt)])
    out, _ = capsys.readouterr()
    assert (code, out) == (0, "5\n")
    assert llama.requests[0].json()["messages"] == [{"role": "user", "content": "hi"}]


def test_a_json_conversation_is_counted_as_it_is(
    llama: WireServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llama.add_json(TEMPLATE, path="/apply-template")
    llama.add_json({"tokens": [1, 2, 3]}, path="/tokenize")
    conversation = {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "bye"},
        ],
    }
    prompt = tmp_path / "chat.json"
    prompt.write_text(json.dumps(conversation))
    code = main(["count", "-m", "llama/gemma", str(prompt), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out) == {"model": "llama/gemma", "tokens": 3, "what": "prompt"}
    sent = llama.requests[0].json()["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]


def test_text_alone_is_tokenized_without_a_template(
    llama: WireServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llama.add_json({"tokens": [6018]}, path="/tokenize")
    prompt = tmp_path / "word.txt"
    prompt.write_text("hi")
    code = main(["count", "-m", "llama/gemma", "--text", str(prompt)])
    out, _ = capsys.readouterr()
    assert (code, out) == (0, "1\n")
    assert [r.path for r in llama.requests] == ["/tokenize"]


def test_an_endpoint_that_cannot_count_exits_3(
    modelplug_config_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("hello")
    code = main(["count", "-m", "echo/e", str(prompt)])
    out, err = capsys.readouterr()
    assert code == NO_COUNT == 3
    assert out == ""
    assert "echo/e: this endpoint cannot count the prompt" in err


def test_a_missing_file_is_wrong_input(
    modelplug_config_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["count", "-m", "echo/e", str(tmp_path / "absent.txt")])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot read" in err


def test_what_a_file_holds() -> None:
    assert read_prompt("plain words") == ("plain words", None)
    assert read_prompt('[{"role": "user", "content": "x"}]') == (
        [{"role": "user", "content": "x"}],
        None,
    )
    assert read_prompt('{"messages": [], "system": "s"}') == ([], "s")
    assert read_prompt("[1, 2]") == ("[1, 2]", None)
    assert read_prompt('"just a string"') == ('"just a string"', None)
