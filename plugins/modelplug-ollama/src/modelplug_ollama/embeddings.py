"""Embed texts through ``POST /api/embed``: the body, the batches, the answer read.

Ollama takes a list of inputs in one request and sets no limit on its length; the
plugin still sends at most :data:`BATCH` inputs a request (so one failure names a
bounded run of inputs and one answer stays small) and :data:`CONCURRENCY` requests at
once (Ollama runs a model's requests a few at a time, ``OLLAMA_NUM_PARALLEL``).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from modelplug import Embeddings, EmbedRequest, RequestError, Usage, estimated_usage
from modelplug_kit import embed_batches, gather_batches

from .errors import ERRORS
from .http import HTTP, request_headers
from .probe import known_for

if TYPE_CHECKING:
    from modelplug import CallContext, Route

__all__ = ["BATCH", "CONCURRENCY", "EXTRA_FIELDS", "embed", "read_answer"]

BATCH = 256
CONCURRENCY = 2
#: ``extra`` fields sent as they are: ``truncate`` (Ollama's default true cuts an input
#: at the context length; false makes a too-long input an error), ``keep_alive`` (this
#: call's, over ``[ollama] keep_alive``), ``options`` (model parameters, ``num_ctx``...).
EXTRA_FIELDS = ("truncate", "keep_alive", "options")


def request_body(
    route: Route, request: EmbedRequest, inputs: list[str], keep_alive: str | int | None
) -> dict[str, Any]:
    """The JSON body of one batch."""
    unknown = sorted(set(request.extra) - set(EXTRA_FIELDS))
    if unknown:
        raise RequestError(
            f"ollama embeddings take no extra field {', '.join(map(repr, unknown))}: "
            f"the fields are {', '.join(EXTRA_FIELDS)}"
        )
    body: dict[str, Any] = {"model": route.model, "input": inputs}
    if request.dimensions is not None:
        body["dimensions"] = request.dimensions
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    body.update(request.extra)
    return body


def read_answer(
    route: Route, answer: dict[str, Any], count: int
) -> tuple[list[list[float]], int | None, str | None]:
    """The vectors of one batch, its ``prompt_eval_count`` (None when not said) and the
    model that answered; a classified error for an answer that is not one."""
    vectors = answer.get("embeddings")
    if not isinstance(vectors, list) or len(vectors) != count:
        got = len(vectors) if isinstance(vectors, list) else "no"
        raise _malformed(route, f"{got} embeddings for {count} inputs")
    read = [vector_of(vector) for vector in vectors]
    if None in read:
        raise _malformed(route, "an embedding that is not a list of numbers")
    counted = answer.get("prompt_eval_count")
    tokens = counted if type(counted) is int and counted >= 0 else None
    model = answer.get("model")
    return (
        [vector for vector in read if vector is not None],
        tokens,
        model if isinstance(model, str) else None,
    )


_NUMBERS = frozenset((float, int))


def vector_of(values: Any) -> list[float] | None:
    """``values`` as a vector of finite floats, or None when it is not one. Checked in
    C loops (a type set, one fsum), not a Python step per number: an answer of 256
    vectors of 768 numbers is 200,000 of them."""
    if type(values) is not list or not values:
        return None
    kinds = set(map(type, values))
    if not kinds <= _NUMBERS:
        return None  # a string, a bool, null, a nested list...
    try:
        finite = math.isfinite(math.fsum(values))
    except OverflowError:  # finite numbers whose sum is too large for a float
        finite = all(map(math.isfinite, values))
    if not finite:
        return None
    return values if kinds == {float} else [float(x) for x in values]


def _malformed(route: Route, what: str) -> Exception:
    return ERRORS.transient(
        route, f"Ollama's /api/embed answer was not readable: {what}", reason="malformed answer"
    )


async def embed(
    route: Route, request: EmbedRequest, client: CallContext, key: str | None
) -> Embeddings:
    """The vectors of ``request.inputs``, in order, one request per batch."""
    options = HTTP.options(client)
    # Checked before anything is sent (the first batch would refuse it anyway).
    request_body(route, request, [], options.keep_alive)
    headers = request_headers(route, key, client.settings, accept="application/json")
    headers["content-type"] = "application/json"
    url = f"{route.endpoint.base_url}/api/embed"
    extra_options = request.extra.get("options")
    num_ctx = extra_options.get("num_ctx") if isinstance(extra_options, dict) else None
    known = known_for(client, route)
    if num_ctx is None and known is not None:
        num_ctx = known.parameter
    errors = ERRORS.for_embed(num_ctx if isinstance(num_ctx, int) else None)

    async def send(
        start: int, inputs: list[str]
    ) -> tuple[list[list[float]], int | None, str | None]:
        body = request_body(route, request, inputs, options.keep_alive)
        payload = json.dumps(body, ensure_ascii=False).encode()
        async with HTTP.stream(
            client, route, url, body=payload, headers=headers, errors=errors
        ) as answer:
            raw = answer.whole if answer.whole is not None else await answer.read()
        try:
            data = json.loads(raw)
        except ValueError:
            raise _malformed(route, "not JSON") from None
        if not isinstance(data, dict):
            raise _malformed(route, "not a JSON object")
        return read_answer(route, data, len(inputs))

    results = await gather_batches(embed_batches(request.inputs, BATCH), send, limit=CONCURRENCY)
    vectors = [vector for batch, _, _ in results for vector in batch]
    counts = [tokens for _, tokens, _ in results]
    if all(tokens is not None for tokens in counts):
        usage = Usage(input=sum(t for t in counts if t is not None))
    else:
        # An older server or a proxy that drops prompt_eval_count.
        usage = estimated_usage(sum(len(text) for text in request.inputs), 0)
    metadata: dict[str, Any] = {}
    served = next((model for _, _, model in results if model), None)
    if served is not None:
        metadata["response_model"] = served
    return Embeddings(vectors=vectors, usage=usage, metadata=metadata)
