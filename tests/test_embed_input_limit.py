"""The check before an embedding call is sent: an input with more words than the
model's limit has tokens is a context_overflow naming the limit, but only for a model
known to refuse long texts, off this machine, and without a truncation asked for; any
input the model might take goes to the server."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pytest
from modelplug import ModelError, hookimpl
from modelplug.contract.routes import ModelInfo
from modelplug.contract.types import Embeddings, EmbedRequest, Endpoint, Provider, Route, Usage


class Limited:
    """``lim/...`` (hosted) and ``here/...`` (local): a 10-token input limit, and an
    embedding that counts its calls."""

    def __init__(self, truncates: bool | None = False) -> None:
        self.truncates = truncates
        self.calls = 0

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider not in ("lim", "here"):
            return None
        info = ModelInfo(
            context_window=10, embedding_dimensions=2, embedding_truncates=self.truncates
        )
        endpoint = Endpoint(type="lim", local=provider == "here")
        return Route(provider=provider, model=model, endpoint=endpoint, info=info)

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name="lim", type="lim"), Provider(name="here", type="lim")]

    @hookimpl
    def modelplug_embed(self, route: Route, request: EmbedRequest) -> Awaitable[Embeddings]:
        return self._answer(request)

    async def _answer(self, request: EmbedRequest) -> Embeddings:
        self.calls += 1
        return Embeddings(vectors=[[1.0, 0.0] for _ in request.inputs], usage=Usage(input=1))


ELEVEN_WORDS = " ".join(["word"] * 11)


def test_an_input_with_more_words_than_the_limit_is_refused_before_sending(
    make_client: Any,
) -> None:
    plugin = Limited()
    client = make_client(plugin)

    with pytest.raises(ModelError) as caught:
        client.embed("lim/e", ["short", ELEVEN_WORDS])

    assert plugin.calls == 0
    assert caught.value.error_class.kind == "context_overflow"
    assert not caught.value.error_class.fallback
    assert "inputs[1]" in str(caught.value) and "input limit of 10 tokens" in str(caught.value)


def test_a_long_text_without_spaces_goes_to_the_server(make_client: Any) -> None:
    plugin = Limited()
    client = make_client(plugin)

    # 200 characters may be fewer tokens than 10 (one long run): the server judges.
    result = client.embed("lim/e", "x" * 200)

    assert plugin.calls == 1 and len(result.vectors) == 1


@pytest.mark.parametrize(
    ("spec", "truncates", "extra"),
    [
        ("lim/e", True, {}),  # the server cuts the text
        ("lim/e", None, {}),  # nobody knows: the server decides
        ("here/e", False, {}),  # a local server loads what it loads
        ("lim/e", False, {"truncate": True}),  # the caller asked for a cut
    ],
)
def test_no_refusal_where_the_model_may_take_the_input(
    make_client: Any, spec: str, truncates: bool | None, extra: dict[str, object]
) -> None:
    plugin = Limited(truncates)
    client = make_client(plugin)

    client.embed(spec, ELEVEN_WORDS, extra=extra)

    assert plugin.calls == 1
