"""The policy around transcription calls, as around embedding calls: a retryable
failure is retried after the wait the server asked for, a failure that allows it falls
back along the chain (the answer names the model that gave it), a failure that cannot
succeed (a context overflow) is neither retried nor sent elsewhere."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pytest
from modelplug import Client, ModelError, TranscribeRequest, Transcript, hookimpl
from modelplug.contract.types import Endpoint, Provider, Route, Usage


class Listener:
    """A provider ``name/...`` whose transcription calls play a script: an exception is
    raised, a str is the text answered."""

    def __init__(self, name: str, *script: object) -> None:
        self.name = name
        self.script = list(script)
        self.calls: list[str] = []

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != self.name:
            return None
        return Route(provider=provider, model=model, endpoint=Endpoint(type=self.name, local=True))

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name=self.name, type=self.name)]

    @hookimpl
    def modelplug_transcribe(
        self, route: Route, request: TranscribeRequest, client: Client
    ) -> Awaitable[Transcript] | None:
        if route.endpoint.type != self.name:
            return None
        return self._answer(request)

    async def _answer(self, request: TranscribeRequest) -> Transcript:
        self.calls.append(request.filename)
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return Transcript(text=str(step), usage=Usage(input=3, output=2))


def test_modelplug_transcribe_retries_a_429_after_the_wait_asked_for(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first = Listener("a", kit.rate_limited("2"), "hello")
    result = client_with(first).transcribe("a/m", b"RIFF", filename="clip.wav")
    assert clock.sleeps == [2.0]
    assert first.calls == ["clip.wav", "clip.wav"]
    assert result.text == "hello" and result.model == "a/m"
    (notice,) = result.metadata["notices"]
    assert notice["kind"] == "retry"


def test_modelplug_transcribe_falls_back_and_names_the_model_that_answered(
    client_with: Any, clock: Any, kit: Any, store: Any
) -> None:
    first, backup = Listener("a", kit.unavailable()), Listener("b", "from b")
    client = client_with(
        first, backup, config={"fallbacks": {"a/m": ["b/m"]}}, options={"retries": 0}
    )
    result = client.transcribe("a/m", b"RIFF", filename="clip.wav")
    assert result.text == "from b" and result.model == "b/m"
    assert result.route is not None and result.route.name == "b/m"
    assert store.remaining("a/m") > 0


def test_modelplug_transcribe_never_retries_what_cannot_succeed(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, backup = Listener("a", kit.context_overflow()), Listener("b", "no")
    client = client_with(first, backup, config={"fallbacks": {"a/m": ["b/m"]}})
    with pytest.raises(ModelError) as caught:
        client.transcribe("a/m", b"RIFF", filename="clip.wav")
    assert caught.value.error_class.kind == "context_overflow"
    assert first.calls == ["clip.wav"] and backup.calls == [] and clock.sleeps == []
