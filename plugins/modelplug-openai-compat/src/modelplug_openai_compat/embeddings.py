"""Embeddings over ``POST {base}/embeddings``, the OpenAI shape every compatible server
speaks (OpenAI, llama.cpp, vLLM, Ollama's /v1, LM Studio, OpenRouter...).

A long list goes out in batches of the server's limit (``EMBED_BATCH``), at most
``embed_concurrency`` at once, and comes back in the inputs' order. Vectors arrive as
JSON floats, or as base64 of little-endian float32 when ``encoding_format`` asks for
it (smaller on the wire, decoded here).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from modelplug import Embeddings, EmbedRequest, RequestError, Route
from modelplug_kit import EmbeddingsBatch as Batch
from modelplug_kit import combine_embeddings, gather_batches, read_openai_embeddings
from modelplug_kit import embed_batches as split

from .errors import EMBED_ERRORS, ERRORS
from .http import HTTP, request_headers
from .providers import DEFAULT_EMBED_BATCH, EMBED_BATCH, NO_DIMENSIONS

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["EXTRA", "Batch", "embed", "embed_body", "read_batch"]

# The provider fields a call may pass in ``extra``, as the server names them.
EXTRA = {
    "encoding_format": "float (default) or base64: how the server sends the vectors",
    "user": "an id of the end user, for the provider's abuse monitoring",
}
FORMATS = ("float", "base64")
# OpenAI's first embedding model has one size: it refuses `dimensions`.
FIXED_SIZE_MODELS = ("text-embedding-ada-002",)


def check_request(route: Route, request: EmbedRequest) -> None:
    """Refuse what the server would refuse or ignore, before anything is sent."""
    unknown = sorted(set(request.extra) - set(EXTRA))
    if unknown:
        raise RequestError(
            f"{route.provider} embeddings take no {', '.join(unknown)} in extra; "
            f"known: {', '.join(EXTRA)}"
        )
    fmt = request.extra.get("encoding_format", "float")
    if fmt not in FORMATS:
        raise RequestError(f"encoding_format is {fmt!r}; {route.provider} takes float or base64")
    if request.dimensions is not None:
        server = route.endpoint.server or ""
        if server in NO_DIMENSIONS:
            raise RequestError(
                f"{route.provider} ({server}) answers the model's own vector size and "
                "takes no dimensions: leave it out"
            )
        if route.model.startswith(FIXED_SIZE_MODELS):
            raise RequestError(
                f"{route.model} has one vector size and takes no dimensions "
                "(text-embedding-3 models do)"
            )


def embed_body(route: Route, request: EmbedRequest, inputs: list[str]) -> dict[str, Any]:
    """The JSON body of one batch."""
    body: dict[str, Any] = {
        "model": route.model,
        "input": inputs,
        "encoding_format": request.extra.get("encoding_format", "float"),
    }
    if request.dimensions is not None:
        body["dimensions"] = request.dimensions
    if "user" in request.extra:
        body["user"] = request.extra["user"]
    return body


def read_batch(route: Route, raw: bytes, count: int, dimensions: int | None) -> Batch:
    """One answer's vectors, in the order of its ``count`` inputs; a classified error
    (this plugin's) for anything else."""
    return read_openai_embeddings(route, raw, count, dimensions, ERRORS)


async def embed(route: Route, request: EmbedRequest, client: CallContext) -> Embeddings:
    """The Embeddings of one call: its batches sent, read and put back in order."""
    check_request(route, request)
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    headers = request_headers(route, key, client.settings, accept="application/json")
    url = f"{route.endpoint.base_url}/embeddings"
    size = EMBED_BATCH.get(route.endpoint.server or "", DEFAULT_EMBED_BATCH)

    async def send(start: int, inputs: list[str]) -> Batch:
        payload = json.dumps(embed_body(route, request, inputs), ensure_ascii=False).encode()
        async with HTTP.stream(
            client, route, url, body=payload, headers=headers, errors=EMBED_ERRORS
        ) as answer:
            raw = answer.whole if answer.whole is not None else await answer.read()
        return read_batch(route, raw, len(inputs), request.dimensions)

    limit = HTTP.options(client).embed_concurrency
    batches = await gather_batches(split(request.inputs, size), send, limit=limit)
    return combine_embeddings(request, batches)
