"""The ``echo`` model: streams the last user message back word by word.

Deterministic and free, it needs no key and no network: the README's first command runs
on it when no model is configured. Its tokens are words (a run of non-space characters
with the spaces before it), so its usage is exact: input counts the system prompt and
every text block sent, output counts the words echoed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import TYPE_CHECKING

from modelplug.contract.hookspecs import hookimpl
from modelplug.contract.routes import Endpoint, ModelInfo, Price, Provider, Route

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from modelplug.contract.types import Embeddings, EmbedRequest, Event, Request

PROVIDER = "echo"
_WORD = re.compile(r"\s*\S+|\s+$")
# The size of echo's vectors unless a call asks for another.
ECHO_DIMENSIONS = 16


def words(text: str) -> list[str]:
    """Split text into echo tokens; joining them gives the text back."""
    return _WORD.findall(text)


def _count_request(request: Request) -> int:
    from modelplug.contract.types import TextBlock, ToolResultBlock

    total = len(words(request.system or ""))
    for message in request.messages:
        for block in message.content:
            if isinstance(block, (TextBlock, ToolResultBlock)):
                total += len(words(block.text))
    return total


@hookimpl(trylast=True)
def modelplug_resolve(spec: str, provider_type: str | None) -> Route | None:
    provider, _, model = spec.partition("/")
    if provider != PROVIDER or provider_type not in (None, PROVIDER):
        return None
    return Route(
        provider=PROVIDER,
        model=model or "echo",
        endpoint=Endpoint(type="echo", local=True),
        info=ModelInfo(
            context_window=1_000_000,
            max_output_tokens=1_000_000,
            supports_tools=False,
            structured_output="native",
            price=Price(input=Decimal(0), output=Decimal(0)),
            price_source="echo (free)",
        ),
    )


@hookimpl(trylast=True)
def modelplug_providers() -> list[Provider]:
    # Not native: core's default steps aside for any plugin that declares the name.
    return [Provider(name=PROVIDER, type=PROVIDER, example="any")]


async def _echo(route: Route, request: Request) -> AsyncIterator[Event]:
    # Imported here: resolving the echo model must not load pydantic.
    from modelplug.contract.types import Done, Message, Response, TextBlock, TextDelta, Usage

    last = next((m for m in reversed(request.messages) if m.role == "user"), None)
    reply = last.text if last is not None else ""
    if request.output_schema is not None:
        # A structured request: the simplest JSON that fits, strings from the prompt.
        import json

        from modelplug.builtin.schema_example import example_for

        value = example_for(request.output_schema.json_schema, reply)
        reply = json.dumps(value, ensure_ascii=False)
    pieces = words(reply)
    if request.max_tokens is not None and len(pieces) > request.max_tokens:
        pieces = pieces[: request.max_tokens]
        stop = "max_tokens"
    else:
        stop = "end_turn"
    for piece in pieces:
        yield TextDelta(text=piece)
    text = "".join(pieces)
    yield Done(
        response=Response(
            message=Message(
                role="assistant", content=[TextBlock(text=text)] if text else [], model=route.name
            ),
            stop_reason=stop,  # type: ignore[arg-type]
            usage=Usage(input=_count_request(request), output=len(pieces)),
            model=route.name,
        )
    )


@hookimpl(trylast=True)
def modelplug_stream(route: Route, request: Request) -> AsyncIterator[Event] | None:
    if route.endpoint.type != PROVIDER:
        return None
    return _echo(route, request)


def echo_vector(text: str, dimensions: int = ECHO_DIMENSIONS) -> list[float]:
    """Echo's embedding of ``text``: its words hashed into ``dimensions`` buckets,
    scaled to length 1. Deterministic, so a test can compute the expected vector; texts
    with the same words get the same vector, as a real model's would be close."""
    import hashlib
    import math

    counts = [0.0] * dimensions
    for word in text.split():
        digest = hashlib.blake2b(word.lower().encode(), digest_size=8).digest()
        counts[int.from_bytes(digest, "big") % dimensions] += 1.0
    norm = math.sqrt(sum(c * c for c in counts))
    return [c / norm for c in counts] if norm else counts


async def _embed(route: Route, request: EmbedRequest) -> Embeddings:
    from modelplug.contract.types import Embeddings, Usage

    size = request.dimensions or ECHO_DIMENSIONS
    return Embeddings(
        vectors=[echo_vector(text, size) for text in request.inputs],
        model=route.name,
        usage=Usage(input=sum(len(words(text)) for text in request.inputs)),
    )


@hookimpl(trylast=True)
def modelplug_embed(route: Route, request: EmbedRequest) -> Awaitable[Embeddings] | None:
    if route.endpoint.type != PROVIDER:
        return None
    return _embed(route, request)
