"""``modelplug transcribe FILE``: the text on stdout and a usage line on stderr, or
``--json``; a file that cannot be read and a provider without speech to text are one
line each and exit code 2 and 1. The upstream is an OpenAI-compatible server on the
loopback WireServer answering OpenAI's API reference examples (modelplug-openai-compat's
tests/recordings/openai_transcription*.json); the audio is a WAV of silence written
with the stdlib ``wave`` module."""

from __future__ import annotations

import json
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelplug.cli import main
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent.parent / "plugins/modelplug-openai-compat/tests/recordings"


@pytest.fixture
def wire(modelplug_config_dir: Path) -> Iterator[WireServer]:
    server = WireServer().start()
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.wire]\ntype = "openai-compatible"\nbase_url = "{server.url}/v1"\n'
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def clip(tmp_path: Path) -> Path:
    path = tmp_path / "clip.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(b"\0\0" * 800)
    return path


def test_the_text_then_the_usage(
    wire: WireServer, clip: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wire.add_file(RECORDINGS / "openai_transcription.json", content_type="application/json")
    code = main(["transcribe", "-m", "wire/gpt-4o-transcribe", str(clip), "--language", "en"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.startswith("Imagine the wildest idea")
    # A server on this machine costs nothing: the usage is priced as any local call's.
    assert err.strip() == "wire/gpt-4o-transcribe: input 14, output 45 cost $0"
    sent = wire.requests[-1]
    assert sent.path == "/v1/audio/transcriptions"
    assert b'filename="clip.wav"' in sent.body and clip.read_bytes() in sent.body


def test_json_has_the_language_and_duration(
    wire: WireServer, clip: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wire.add_file(RECORDINGS / "openai_transcription_verbose.json", content_type="application/json")
    code = main(["transcribe", "-m", "wire/whisper-1", str(clip), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["text"].startswith("The beach was")
    assert data["language"] == "english" and data["duration_s"] == pytest.approx(8.47)
    assert data["model"] == "wire/whisper-1"
    assert data["usage"] == {"input": 0, "output": 0, "reported": False}


def test_a_missing_file_is_one_line_and_exit_2(
    wire: WireServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["transcribe", "-m", "wire/whisper-1", str(tmp_path / "none.wav")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("modelplug: cannot read") and len(err.strip().splitlines()) == 1
    assert wire.requests == []


def test_a_provider_without_speech_to_text_is_one_line(
    wire: WireServer, clip: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["transcribe", "-m", "echo/echo", str(clip)])
    err = capsys.readouterr().err
    assert code != 0
    assert "does not transcribe speech" in err and len(err.strip().splitlines()) == 1
