"""Running one embedding call: the inputs checked, the plugin's answer awaited, the
Embeddings finished (answering model, route, cost) and failures turned into ModelError.

The embedding counterpart of :mod:`modelplug.calls`; apart from client.py for the same
reason (the pydantic types load here, not when a Client is made).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .calls import clean_error
from .errors import ErrorClass, ModelError, ModelplugError, RequestError, describe_error
from .redact import redact_data
from .types import Embeddings, EmbedRequest

if TYPE_CHECKING:
    from .client import Client
    from .routes import Route

__all__ = ["embed_request", "guarded_embed"]

_FIELDS = ("extra",)


def embed_request(
    inputs: str | Sequence[str], dimensions: int | None, fields: Mapping[str, Any]
) -> EmbedRequest:
    """The EmbedRequest for what the caller gave; RequestError names what is wrong."""
    unknown = sorted(set(fields) - set(_FIELDS))
    if unknown:
        raise RequestError(
            f"embed() takes no {', '.join(unknown)}: provider fields go in "
            f"extra={{...}} (e.g. extra={{{unknown[0]!r}: ...}})"
        )
    texts = _texts(inputs)
    try:
        return EmbedRequest(inputs=texts, dimensions=dimensions, **fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in exc.errors()
        )
        raise RequestError(f"invalid embedding request: {problems}") from None


def _texts(inputs: object) -> list[str]:
    if isinstance(inputs, str):
        texts = [inputs]
    elif isinstance(inputs, (bytes, bytearray)) or not isinstance(inputs, Sequence):
        raise RequestError(f"inputs must be a str or a list of str, not {type(inputs).__name__}")
    else:
        texts = list(inputs)
    if not texts:
        raise RequestError("inputs is an empty list: give at least one text to embed")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise RequestError(
                f"inputs[{index}] is {type(text).__name__}, not a str: embed text only"
            )
        if not text:
            raise RequestError(
                f"inputs[{index}] is an empty string: providers refuse it or return a "
                "meaningless vector; drop it before the call"
            )
    return texts


async def guarded_embed(
    client: Client,
    spec: str | None,
    inputs: str | Sequence[str],
    dimensions: int | None,
    fields: Mapping[str, Any],
) -> Embeddings:
    """:meth:`Client.aembed`'s body."""
    request = embed_request(inputs, dimensions, fields)
    route = client.resolve(spec)
    waiting = client.open_embed(route, request)
    failure: ModelplugError | None = None
    result: Embeddings | None = None
    try:
        result = await waiting
    except ModelplugError as exc:
        failure = exc
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        error_class = client.classify(exc, route)
        failure = ModelError(describe_error(exc, error_class), error_class=error_class, route=route)
        failure.__cause__ = exc
        failure.__suppress_context__ = True
    if failure is None and result is not None and len(result.vectors) != len(request.inputs):
        failure = ModelError(
            f"the {route.provider} plugin returned {len(result.vectors)} vectors for "
            f"{len(request.inputs)} inputs",
            error_class=ErrorClass(kind="other", reason="wrong number of vectors"),
            route=route,
        )
    if failure is not None:
        raise clean_error(failure)
    assert result is not None
    return _finish(client, route, result)


def _finish(client: Client, route: Route, result: Embeddings) -> Embeddings:
    answered = result.model or route.name
    answering = result.route if isinstance(result.route, type(route)) else route
    updates: dict[str, Any] = {"model": answered, "route": answering}
    metadata = redact_data(result.metadata)
    if metadata is not result.metadata:
        updates["metadata"] = metadata
    if result.cost is None:
        updates["cost"] = client.price(answering, result.usage)
    return result.model_copy(update=updates)
