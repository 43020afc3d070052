"""The policy around embedding calls: an embedding shows nothing before it answers, so
a retryable failure is retried, a failure that allows it falls back along the same
chain, and cooldowns apply as for chat."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pytest
from modelplug import Client, ModelError, hookimpl
from modelplug.contract.types import Embeddings, EmbedRequest, Endpoint, Provider, Route, Usage


class Embedder:
    """A provider ``name/...`` whose embedding calls play a script: an exception is
    raised, anything else answers one vector per input of that value."""

    def __init__(self, name: str, *script: object) -> None:
        self.name = name
        self.script = list(script)
        self.calls: list[list[str]] = []

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
    def modelplug_embed(
        self, route: Route, request: EmbedRequest, client: Client
    ) -> Awaitable[Embeddings] | None:
        if route.endpoint.type != self.name:
            return None
        return self._answer(request)

    async def _answer(self, request: EmbedRequest) -> Embeddings:
        self.calls.append(request.inputs)
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        value = float(step)  # type: ignore[arg-type]
        return Embeddings(
            vectors=[[value, value] for _ in request.inputs], usage=Usage(input=len(request.inputs))
        )


def test_modelplug_embed_retries_a_429_after_the_retry_after_it_asked_for(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first = Embedder("a", kit.rate_limited("2"), 1.0)
    client = client_with(first)

    result = client.embed("a/m", ["x", "y"])

    assert clock.sleeps == [2.0]
    assert first.calls == [["x", "y"], ["x", "y"]]
    assert result.vectors == [[1.0, 1.0], [1.0, 1.0]]
    assert result.model == "a/m"
    (notice,) = result.metadata["notices"]
    assert notice["kind"] == "retry" and notice["delay"] == 2.0


def test_modelplug_embed_falls_back_along_the_chain_and_names_the_model_that_answered(
    client_with: Any, clock: Any, kit: Any, store: Any
) -> None:
    first, backup = Embedder("a", kit.unavailable()), Embedder("b", 2.0)
    client = client_with(first, backup, config=kit_chain(), options={"retries": 0})

    result = client.embed("a/m", "x")

    assert result.vectors == [[2.0, 2.0]]
    assert result.model == "b/m"
    assert result.route is not None and result.route.name == "b/m"
    assert [n["kind"] for n in result.metadata["notices"]] == ["fallback"]
    assert store.remaining("a/m") > 0  # a/m cools down: the next call starts on b/m


def test_modelplug_embed_starts_on_the_fallback_while_the_model_cools_down(
    client_with: Any, clock: Any, kit: Any, store: Any
) -> None:
    first, backup = Embedder("a"), Embedder("b", 3.0)
    store.mark("a/m", 60.0)
    client = client_with(first, backup, config=kit_chain())

    result = client.embed("a/m", "x")

    assert first.calls == []  # the cooling model's call was never made
    assert result.model == "b/m" and result.vectors == [[3.0, 3.0]]


def test_modelplug_embed_never_retries_nor_falls_back_on_a_context_overflow(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, backup = Embedder("a", kit.context_overflow()), Embedder("b", 2.0)
    client = client_with(first, backup, config=kit_chain())

    with pytest.raises(ModelError) as caught:
        client.embed("a/m", "x")

    assert caught.value.error_class.kind == "context_overflow"
    assert len(first.calls) == 1 and backup.calls == []
    assert clock.sleeps == []


def test_modelplug_embed_raises_the_last_failure_naming_what_was_tried(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, backup = Embedder("a", kit.unavailable()), Embedder("b", kit.unavailable())
    client = client_with(first, backup, config=kit_chain(), options={"retries": 0})

    with pytest.raises(ModelError) as caught:
        client.embed("a/m", "x")

    assert caught.value.error_class.kind == "transient"
    assert "tried a/m, b/m" in str(caught.value)


def kit_chain() -> dict[str, Any]:
    return {"fallbacks": {"a/m": ["b/m"]}}
