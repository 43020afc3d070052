"""Embeddings over ``POST {base}/embeddings``, the OpenAI shape every compatible server
speaks (OpenAI, llama.cpp, vLLM, Ollama's /v1, LM Studio, OpenRouter...).

A long list goes out in batches of the server's limit (``EMBED_BATCH``), at most
``embed_concurrency`` at once, and comes back in the inputs' order. Vectors arrive as
JSON floats, or as base64 of little-endian float32 when ``encoding_format`` asks for
it (smaller on the wire, decoded here).
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
from modelplug.plugin import embed_batches as split
from modelplug.types import Embeddings, EmbedRequest, Route, Usage

from .errors import EMBED_ERRORS, ERRORS, stream_broken
from .http import HTTP, request_headers
from .providers import DEFAULT_EMBED_BATCH, EMBED_BATCH, NO_DIMENSIONS

if TYPE_CHECKING:
    from modelplug.plugin import Client

__all__ = ["EXTRA", "Batch", "embed", "embed_body", "read_batch"]

# The provider fields a call may pass in ``extra``, as the server names them.
EXTRA = {
    "encoding_format": "float (default) or base64: how the server sends the vectors",
    "user": "an id of the end user, for the provider's abuse monitoring",
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


def _vector(value: Any) -> list[float] | None:
    """One embedding as floats: a JSON list of numbers, or base64 of float32 (little
    endian, what OpenAI and llama.cpp send); None when it is neither."""
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
    ``index`` when every item has one); a classified error for anything else."""

    def bad(what: str) -> ModelError:
        return stream_broken(
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
    return combine(request, batches)


def combine(request: EmbedRequest, batches: list[Batch]) -> Embeddings:
    """One Embeddings of the batches: the server's token counts, or an estimate
    (``reported=False``) when any batch said none."""
    vectors = [vector for batch in batches for vector in batch.vectors]
    counted = [batch.tokens for batch in batches]
    if all(tokens is not None for tokens in counted):
        usage = Usage(input=sum(t for t in counted if t is not None))
    else:
        usage = estimated_usage(sum(len(text) for text in request.inputs), 0)
    metadata: dict[str, Any] = {"batches": len(batches)}
    model = next((batch.model for batch in batches if batch.model), None)
    if model is not None:
        metadata["response_model"] = model
    return Embeddings(vectors=vectors, usage=usage, metadata=metadata)
