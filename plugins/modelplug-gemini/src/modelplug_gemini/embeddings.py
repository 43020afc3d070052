"""Embed texts: the Gemini API's ``batchEmbedContents`` and Vertex AI's ``predict``.

Both take a list of inputs per request, up to a limit of their own: 100 requests in one
``batchEmbedContents`` (a 101st is a 400 "at most 100 requests can be in one batch");
on Vertex 250 instances for the text-embedding models and a single one for
``gemini-embedding-*`` there. Longer lists go as several requests, :data:`CONCURRENCY`
at once, the vectors put back in the inputs' order.

The Gemini API reports no token count for embeddings: usage is estimated (4 characters
a token, ``reported=False``). Vertex reports each input's ``statistics.token_count``.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from modelplug import Embeddings, EmbedRequest, RequestError, Usage, estimated_usage, redact_data
from modelplug_kit import embed_batches, gather_batches

from .errors import ERRORS, google_error
from .http import HTTP, prepare
from .routes import VERTEX

if TYPE_CHECKING:
    from modelplug import CallContext, Route

__all__ = [
    "CONCURRENCY",
    "GEMINI_BATCH",
    "VERTEX_BATCH",
    "batch_size",
    "embed",
    "gemini_body",
    "read_gemini",
    "read_vertex",
    "vertex_body",
]

GEMINI_BATCH = 100
VERTEX_BATCH = 250
CONCURRENCY = 4
# The extra fields each API takes, by the caller's spelling and the wire's. Both
# spellings are accepted: Google's SDKs say task_type, its REST API taskType.
GEMINI_FIELDS = {"task_type": "taskType", "taskType": "taskType", "title": "title"}
VERTEX_FIELDS = {
    "task_type": "task_type",
    "taskType": "task_type",
    "title": "title",
    "auto_truncate": "autoTruncate",
    "autoTruncate": "autoTruncate",
}

Batch = tuple[list[list[float]], int | None]


def batch_size(route: Route) -> int:
    """How many inputs one request of this route takes."""
    if route.endpoint.type != VERTEX:
        return GEMINI_BATCH
    # Vertex's gemini-embedding models take one input per request.
    return 1 if route.model.startswith("gemini-embedding") else VERTEX_BATCH


def _fields(route: Route, request: EmbedRequest) -> dict[str, Any]:
    """``request.extra`` in the wire's spelling; unknown fields refused."""
    known = VERTEX_FIELDS if route.endpoint.type == VERTEX else GEMINI_FIELDS
    unknown = sorted(set(request.extra) - set(known))
    if unknown:
        raise RequestError(
            f"{route.provider} embeddings take no extra field "
            f"{', '.join(map(repr, unknown))}: the fields are {', '.join(known)}"
        )
    fields: dict[str, Any] = {}
    for name, value in request.extra.items():
        wire = known[name]
        if wire in fields and fields[wire] != value:
            raise RequestError(f"extra gives {wire} twice, with different values")
        fields[wire] = value
    return fields


def gemini_body(route: Route, request: EmbedRequest, inputs: list[str]) -> dict[str, Any]:
    """One ``batchEmbedContents`` body: a request per input."""
    fields = _fields(route, request)
    if request.dimensions is not None:
        fields["outputDimensionality"] = request.dimensions
    model = f"models/{route.model}"
    return {
        "requests": [
            {"model": model, "content": {"parts": [{"text": text}]}, **fields} for text in inputs
        ]
    }


def vertex_body(route: Route, request: EmbedRequest, inputs: list[str]) -> dict[str, Any]:
    """One ``predict`` body: an instance per input, the parameters once."""
    fields = _fields(route, request)
    parameters: dict[str, Any] = {}
    if "autoTruncate" in fields:
        parameters["autoTruncate"] = fields.pop("autoTruncate")
    if request.dimensions is not None:
        parameters["outputDimensionality"] = request.dimensions
    body: dict[str, Any] = {"instances": [{"content": text, **fields} for text in inputs]}
    if parameters:
        body["parameters"] = parameters
    return body


_NUMBERS = frozenset((float, int))


def _vector(route: Route, values: Any) -> list[float]:
    """``values`` as a vector of finite floats, else a classified error. Checked in C
    loops (a type set, one fsum), not a Python step per number: an answer of 100
    vectors of 3,072 numbers is 300,000 of them."""
    kinds = set(map(type, values)) if type(values) is list and values else None
    if kinds is None or not kinds <= _NUMBERS:
        raise _malformed(route, "an embedding that is not a list of numbers")
    try:
        finite = math.isfinite(math.fsum(values))
    except OverflowError:  # finite numbers whose sum is too large for a float
        finite = all(map(math.isfinite, values))
    if not finite:
        raise _malformed(route, "an embedding with a number that is not finite")
    return values if kinds == {float} else [float(x) for x in values]


def read_gemini(route: Route, answer: dict[str, Any], count: int) -> Batch:
    """The vectors of a ``batchEmbedContents`` answer (``embeddings[i].values``)."""
    items = answer.get("embeddings")
    if not isinstance(items, list) or len(items) != count:
        got = len(items) if isinstance(items, list) else "no"
        raise _malformed(route, f"{got} embeddings for {count} inputs")
    return [
        _vector(route, item.get("values") if isinstance(item, dict) else None) for item in items
    ], None


def read_vertex(route: Route, answer: dict[str, Any], count: int) -> Batch:
    """The vectors of a ``predict`` answer (``predictions[i].embeddings.values``) and
    the sum of their ``statistics.token_count`` (None when one is missing)."""
    predictions = answer.get("predictions")
    if not isinstance(predictions, list) or len(predictions) != count:
        got = len(predictions) if isinstance(predictions, list) else "no"
        raise _malformed(route, f"{got} predictions for {count} inputs")
    vectors: list[list[float]] = []
    tokens: int | None = 0
    for prediction in predictions:
        embedding = prediction.get("embeddings") if isinstance(prediction, dict) else None
        if not isinstance(embedding, dict):
            raise _malformed(route, "a prediction without embeddings")
        vectors.append(_vector(route, embedding.get("values")))
        statistics = embedding.get("statistics")
        counted = statistics.get("token_count") if isinstance(statistics, dict) else None
        tokens = _add_count(tokens, counted)
    return vectors, tokens


def _add_count(total: int | None, counted: Any) -> int | None:
    """``total`` plus one input's token count; None once a count is missing or not a
    whole number (a float in the JSON: the proto field is a double)."""
    if total is None or isinstance(counted, bool) or not isinstance(counted, (int, float)):
        return None
    if not math.isfinite(counted) or counted < 0 or counted != int(counted):
        return None
    return total + int(counted)


def _malformed(route: Route, what: str) -> Exception:
    return ERRORS.transient(
        route,
        f"{route.provider}'s embedding answer was not readable: {what}",
        reason="malformed answer",
    )


async def embed(route: Route, request: EmbedRequest, client: CallContext) -> Embeddings:
    """The vectors of ``request.inputs``, in order, one request per batch."""
    vertex = route.endpoint.type == VERTEX
    make_body = vertex_body if vertex else gemini_body
    read = read_vertex if vertex else read_gemini
    make_body(route, request, [])  # unknown extra fields refused before anything is sent
    target, headers = await prepare(route, client)
    url = f"{target.model_url}:{'predict' if vertex else 'batchEmbedContents'}"

    async def send(start: int, inputs: list[str]) -> Batch:
        payload = json.dumps(make_body(route, request, inputs), ensure_ascii=False).encode()
        answer = await HTTP.call_json(
            client, route, url, headers=headers, method="POST", body=payload
        )
        if answer.get("error"):
            # A Google error answered with 200: classified by its own code.
            raise google_error(None, redact_data(answer), route)
        return read(route, answer, len(inputs))

    batches = embed_batches(request.inputs, batch_size(route))
    results = await gather_batches(batches, send, limit=CONCURRENCY)
    vectors = [vector for batch, _ in results for vector in batch]
    counts = [tokens for _, tokens in results]
    if all(tokens is not None for tokens in counts):
        usage = Usage(input=sum(t for t in counts if t is not None))
    else:
        usage = estimated_usage(sum(len(text) for text in request.inputs), 0)
    return Embeddings(vectors=vectors, usage=usage)
