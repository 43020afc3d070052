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

import array
import base64
import binascii
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from modelplug.plugin import (
    ErrorClass,
    ModelError,
    RequestError,
    estimated_usage,
    gather_batches,
)
from modelplug.types import Embeddings, EmbedRequest, Route, Usage

from .errors import EMBED_ERRORS, ERRORS
from .http import HTTP, request_headers

if TYPE_CHECKING:
    from modelplug.plugin import Client

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


class Batch:
    """What one request answered: its vectors in order, its tokens (None: not said)
    and the model the server named."""

    __slots__ = ("model", "tokens", "vectors")

    def __init__(self, vectors: list[list[float]], tokens: int | None, model: str | None):
        self.vectors = vectors
        self.tokens = tokens
        self.model = model


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


def _vector(value: Any) -> list[float] | None:
    """One embedding as floats: a JSON list of numbers, or base64 of little-endian
    float32 (what ``encoding_format: base64`` sends); None when it is neither."""
    if isinstance(value, list):
        if all(type(x) is float for x in value):
            good = value
        elif all(type(x) in (float, int) for x in value):
            good = [float(x) for x in value]
        else:
            return None
        return good if all(map(math.isfinite, good)) else None
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(raw) % 4:
            return None
        floats = array.array("f")
        floats.frombytes(raw)
        if sys.byteorder == "big":
            floats.byteswap()
        decoded = floats.tolist()
        return decoded if all(map(math.isfinite, decoded)) else None
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def read_batch(route: Route, raw: bytes, count: int, dimensions: int | None) -> Batch:
    """One answer's vectors, in the order of its ``count`` inputs (by each item's
    ``index``); a classified error for anything else."""

    def bad(what: str) -> ModelError:
        return ERRORS.transient(
            route,
            f"{route.provider} answered embeddings that cannot be read: {what}",
            reason="malformed embeddings answer",
        )

    try:
        # NaN and Infinity are not JSON, whatever json.loads allows by default.
        whole = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise bad("not JSON") from None
    if not isinstance(whole, dict):
        raise bad("not a JSON object")
    items = whole.get("data")
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise bad("no data list")
    if len(items) != count:
        raise bad(f"{len(items)} vectors for {count} inputs")
    indexes = [item.get("index") for item in items]
    if all(type(i) is int for i in indexes):
        if sorted(indexes) != list(range(count)):
            raise bad(f"indexes {indexes[:8]} are not 0..{count - 1}")
        items = sorted(items, key=lambda item: item["index"])
    elif any(i is not None for i in indexes):
        raise bad("some items have no integer index")
    vectors = []
    for position, item in enumerate(items):
        vector = _vector(item.get("embedding"))
        if not vector:
            raise bad(f"item {position} holds no vector of finite numbers")
        vectors.append(vector)
    sizes = {len(v) for v in vectors}
    if len(sizes) > 1:
        raise bad(f"vectors of different lengths {sorted(sizes)}")
    if dimensions is not None and sizes != {dimensions}:
        # Asking again gets the same size; another model may take dimensions.
        raise ERRORS.make(
            f"{route.provider} answered vectors of {sizes.pop()} numbers where "
            f"{dimensions} were asked: the server ignored dimensions",
            ErrorClass(kind="other", fallback=True, reason="the server ignored dimensions"),
            route,
        )
    usage = whole.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    model = whole.get("model")
    return Batch(
        vectors,
        tokens if type(tokens) is int and tokens >= 0 else None,
        model if isinstance(model, str) and model else None,
    )


async def embed(route: Route, request: EmbedRequest, client: Client) -> Embeddings:
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
    vectors = [vector for batch in done for vector in batch.vectors]
    counted = [batch.tokens for batch in done]
    if all(tokens is not None for tokens in counted):
        usage = Usage(input=sum(t for t in counted if t is not None))
    else:
        usage = estimated_usage(sum(len(text) for text in request.inputs), 0)
    metadata: dict[str, Any] = {"batches": len(done)}
    model = next((batch.model for batch in done if batch.model), None)
    if model is not None:
        metadata["response_model"] = model
    return Embeddings(vectors=vectors, usage=usage, metadata=metadata)
