"""OpenAI's embeddings, ``POST {base}/embeddings`` (``/v1/embeddings``), within its
limits: 2,048 inputs and 300,000 tokens a request, 8,192 tokens an input.

A long list goes out in batches that keep under both request limits, at most
``embed_concurrency`` at once, and comes back in the inputs' order. No tokenizer is
loaded: a batch is bounded by the inputs' UTF-8 bytes (OpenAI's tokens are byte pairs,
never fewer than one byte each, so the bytes bound the tokens from above); an input is
refused before sending only when it is clearly over 8,192 tokens, else the server's 400
says so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from modelplug import Embeddings, EmbedRequest, ErrorClass, RequestError, Route
from modelplug_kit import EmbeddingsBatch as Batch
from modelplug_kit import combine_embeddings, gather_batches, read_openai_embeddings

from .errors import EMBED_ERRORS, ERRORS
from .http import HTTP, request_headers

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["EXTRA", "Batch", "batches", "embed", "embed_body", "read_batch"]

MAX_INPUTS = 2048
MAX_REQUEST_TOKENS = 300_000
MAX_INPUT_TOKENS = 8192
# English runs about four characters a token; twice that is more than any ordinary
# text reaches, so an input longer than this many characters a token is clearly over.
CLEARLY_OVER_CHARS_PER_TOKEN = 8
EXTRA = {
    "encoding_format": "float (default) or base64: how the server sends the vectors",
    "user": "an id of the end user, for OpenAI's abuse monitoring",
}
FORMATS = ("float", "base64")
# OpenAI's first embedding model has one size: it refuses `dimensions`.
FIXED_SIZE_MODELS = ("text-embedding-ada-002",)


def check_request(route: Route, request: EmbedRequest) -> None:
    """Refuse, before anything is sent, what OpenAI would refuse."""
    unknown = sorted(set(request.extra) - set(EXTRA))
    if unknown:
        raise RequestError(
            f"{route.provider} embeddings take no {', '.join(unknown)} in extra; "
            f"known: {', '.join(EXTRA)}"
        )
    fmt = request.extra.get("encoding_format", "float")
    if fmt not in FORMATS:
        raise RequestError(f"encoding_format is {fmt!r}; {route.provider} takes float or base64")
    if request.dimensions is not None and route.model.startswith(FIXED_SIZE_MODELS):
        raise RequestError(
            f"{route.model} has one vector size and takes no dimensions "
            "(text-embedding-3 models do)"
        )
    for index, text in enumerate(request.inputs):
        if len(text) > MAX_INPUT_TOKENS * CLEARLY_OVER_CHARS_PER_TOKEN:
            raise ERRORS.make(
                f"{route.provider}: input {index} ({len(text):,} characters) is far over "
                f"the {MAX_INPUT_TOKENS:,} tokens an OpenAI embedding input may hold; "
                "split it before embedding",
                ErrorClass(
                    kind="context_overflow",
                    reason=f"an input is longer than the model's {MAX_INPUT_TOKENS:,} tokens",
                ),
                route,
            )


def batches(inputs: list[str]) -> list[tuple[int, list[str]]]:
    """``inputs`` in runs of at most 2,048 whose UTF-8 bytes (at least their tokens)
    stay within 300,000, each with the index of its first input."""
    runs: list[tuple[int, list[str]]] = []
    run: list[str] = []
    start, size = 0, 0
    for index, text in enumerate(inputs):
        cost = len(text.encode())
        if run and (len(run) == MAX_INPUTS or size + cost > MAX_REQUEST_TOKENS):
            runs.append((start, run))
            start, run, size = index, [], 0
        run.append(text)
        size += cost
    runs.append((start, run))
    return runs


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

    async def send(start: int, inputs: list[str]) -> Batch:
        payload = json.dumps(embed_body(route, request, inputs), ensure_ascii=False).encode()
        async with HTTP.stream(
            client, route, url, body=payload, headers=headers, errors=EMBED_ERRORS
        ) as answer:
            raw = answer.whole if answer.whole is not None else await answer.read()
        return read_batch(route, raw, len(inputs), request.dimensions)

    limit = HTTP.options(client).embed_concurrency
    done = await gather_batches(batches(request.inputs), send, limit=limit)
    return combine_embeddings(request, done)
