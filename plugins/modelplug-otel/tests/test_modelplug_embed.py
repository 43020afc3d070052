"""modelplug_embed: a CLIENT span ``embeddings {model}`` per call, its usage and errors."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import modelplug_otel
import pytest
from modelplug import ModelError, hookimpl
from modelplug.contract.types import Embeddings, EmbedRequest, Route
from opentelemetry.trace import SpanKind, StatusCode


class Refusing:
    """The echo provider's embeddings, refused with a 429 (tried before echo's own)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    @hookimpl(tryfirst=True)
    def modelplug_embed(self, route: Route, request: EmbedRequest) -> Awaitable[Embeddings]:
        async def fail() -> Embeddings:
            raise self.error

        return fail()


def test_an_embedding_call_is_one_client_span_named_embeddings(
    make_client: Any, spans: Any, points: Any
) -> None:
    client = make_client(modelplug_otel)

    result = client.embed("echo", ["one two", "three"], dimensions=8)

    assert len(result.vectors) == 2
    (span,) = spans()
    assert span.name == f"embeddings {result.route.model}" and span.kind is SpanKind.CLIENT
    a = span.attributes
    assert a["gen_ai.operation.name"] == "embeddings"
    assert a["gen_ai.request.model"] == result.route.model
    assert a["gen_ai.embeddings.dimension.count"] == 8
    assert a["gen_ai.usage.input_tokens"] == result.usage.input == 3
    assert a["modelplug.embed.inputs"] == 2
    (duration,) = points("gen_ai.client.operation.duration")
    assert duration.attributes["gen_ai.operation.name"] == "embeddings"
    (tokens,) = points("gen_ai.client.token.usage")
    assert tokens.sum == 3 and tokens.attributes["gen_ai.token.type"] == "input"


def test_a_failed_embedding_call_sets_error_type(
    make_client: Any, spans: Any, http_error: Any
) -> None:
    client = make_client(modelplug_otel, Refusing(http_error(429)))

    with pytest.raises(ModelError):
        client.embed("echo", ["one"])

    (span,) = spans()
    assert span.attributes["error.type"] == "rate_limit"
    assert span.status.status_code is StatusCode.ERROR
