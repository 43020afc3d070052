"""Reading the OpenAI embeddings answer, ``{"data": [{"embedding": ..., "index": i}],
"usage": {"prompt_tokens": n}, "model": ...}``: the shape OpenAI and every compatible
server (llama.cpp, vLLM, Ollama's /v1, LM Studio, OpenRouter...) answer
``POST /embeddings`` with, so each plugin that sends it reads it the same way.

A vector is a JSON list of numbers or, when ``encoding_format`` is ``base64``, base64 of
little-endian float32. Anything else (not JSON, a vector missing or not finite, too
few or too many, mixed sizes) is the plugin's classified error, never a stray exception.
"""

from __future__ import annotations

import array
import base64
import binascii
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from modelplug import Embeddings, EmbedRequest, ErrorClass, ModelError, Usage, estimated_usage

if TYPE_CHECKING:
    from modelplug import Route

    from modelplug_kit.http import WireErrors

__all__ = ["EmbeddingsBatch", "combine_embeddings", "decode_vector", "read_openai_embeddings"]


class EmbeddingsBatch:
    """What one request answered: its vectors in order, its tokens (None: not said)
    and the model the server named (None: not said)."""

    __slots__ = ("model", "tokens", "vectors")

    def __init__(self, vectors: list[list[float]], tokens: int | None, model: str | None):
        self.vectors = vectors
        self.tokens = tokens
        self.model = model


def decode_vector(value: Any) -> list[float] | None:
    """One embedding as floats: a JSON list of numbers, or base64 of little-endian
    float32; None when it is neither or holds a number that is not finite."""
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


def read_openai_embeddings(
    route: Route, raw: bytes, count: int, dimensions: int | None, errors: WireErrors
) -> EmbeddingsBatch:
    """One answer's vectors, in the order of its ``count`` inputs (by each item's
    ``index`` when every item has one). An answer that cannot be read is
    ``errors.transient`` (asking again may do); vectors of another size than the
    ``dimensions`` asked are an error another model may avoid (asking again gets the
    same size)."""

    def bad(what: str) -> ModelError:
        return errors.transient(
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
        vector = decode_vector(item.get("embedding"))
        if not vector:
            raise bad(f"item {position} holds no vector of finite numbers")
        vectors.append(vector)
    sizes = {len(v) for v in vectors}
    if len(sizes) > 1:
        raise bad(f"vectors of different lengths {sorted(sizes)}")
    if dimensions is not None and sizes != {dimensions}:
        raise errors.make(
            f"{route.provider} answered vectors of {sizes.pop()} numbers where "
            f"{dimensions} were asked: the server ignored dimensions",
            ErrorClass(kind="other", fallback=True, reason="the server ignored dimensions"),
            route,
        )
    usage = whole.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    model = whole.get("model")
    return EmbeddingsBatch(
        vectors,
        tokens if type(tokens) is int and tokens >= 0 else None,
        model if isinstance(model, str) and model else None,
    )


def combine_embeddings(request: EmbedRequest, batches: list[EmbeddingsBatch]) -> Embeddings:
    """One call's Embeddings from its batches in order: the servers' token counts, or an
    estimate (``reported=False``) when any batch said none; ``metadata`` holds the
    number of batches and, when a server named it, ``response_model``."""
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
