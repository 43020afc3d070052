"""Client.transcribe / atranscribe: the request checked before any plugin is asked, the
plugin's Transcript finished (the answering model, the route, a price for reported
tokens), a plugin's failure classified, a route nobody transcribes for refused."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from decimal import Decimal
from typing import Any

import pytest
from modelplug import (
    Client,
    Cost,
    ModelError,
    NoProviderError,
    RequestError,
    Route,
    TranscribeRequest,
    Transcript,
    Usage,
    audio_mime_type,
    hookimpl,
)


class Listener:
    """Transcribes for the echo provider type: what it was asked, and a fixed text."""

    def __init__(self, usage: Usage | None = None, fail: Exception | None = None) -> None:
        self.asked: list[TranscribeRequest] = []
        self.usage = usage or Usage(reported=False)
        self.fail = fail

    @hookimpl
    def modelplug_transcribe(
        self, route: Route, request: TranscribeRequest, client: Any
    ) -> Awaitable[Transcript] | None:
        if route.endpoint.type != "echo":
            return None
        self.asked.append(request)
        return self._answer()

    async def _answer(self) -> Transcript:
        if self.fail is not None:
            raise self.fail
        return Transcript(text="hello there", language="en", duration_s=1.5, usage=self.usage)


class Priced:
    @hookimpl(tryfirst=True)
    def modelplug_price(self, route: Route, usage: Usage, **_: Any) -> Cost | None:
        return Cost(amount=Decimal(usage.input + usage.output) / 1000, source="test")


def test_the_plugin_gets_the_request_and_the_transcript_is_finished(make_client: Any) -> None:
    listener = Listener()
    client = make_client(listener)
    transcript = client.transcribe(
        "echo/echo", b"RIFF....WAVE", filename="memo.m4a", language="en", temperature=0
    )
    assert transcript.text == "hello there" and transcript.duration_s == 1.5
    assert transcript.model == "echo/echo" and transcript.route is not None
    assert transcript.cost is None  # nothing counted: nothing priced
    asked = listener.asked[0]
    assert (asked.audio, asked.filename, asked.language) == (b"RIFF....WAVE", "memo.m4a", "en")
    assert audio_mime_type(asked.filename) == "audio/mp4"


def test_reported_tokens_are_priced(make_client: Any) -> None:
    client = make_client(Listener(usage=Usage(input=14, output=45)), Priced())
    transcript = asyncio.run(client.atranscribe("echo/echo", b"x", filename="a.wav"))
    assert transcript.cost is not None and transcript.cost.amount == Decimal("0.059")


@pytest.mark.parametrize(
    ("audio", "filename", "fields", "words"),
    [
        (b"", "a.wav", {}, "empty"),
        ("a.wav", "a.wav", {}, "bytes"),
        (b"x", "noext", {}, "extension"),
        (b"x", "a.wav", {"speed": 2}, "extra"),
        (b"x", "a.wav", {"temperature": 3}, "temperature"),
    ],
)
def test_a_bad_request_is_refused_before_any_plugin(
    make_client: Any, audio: Any, filename: str, fields: dict[str, Any], words: str
) -> None:
    listener = Listener()
    with pytest.raises(RequestError, match=words):
        make_client(listener).transcribe("echo/echo", audio, filename=filename, **fields)
    assert listener.asked == []


def test_a_plugin_failure_is_a_classified_model_error(make_client: Any) -> None:
    client = make_client(Listener(fail=ConnectionResetError("reset by peer")))
    with pytest.raises(ModelError) as raised:
        client.transcribe("echo/echo", b"x", filename="a.wav")
    assert raised.value.route is not None and raised.value.route.name == "echo/echo"


def test_a_route_nobody_transcribes_for_is_no_provider(make_client: Any) -> None:
    client: Client = make_client()
    with pytest.raises(NoProviderError, match="does not transcribe"):
        client.transcribe("echo/echo", b"x", filename="a.wav")
