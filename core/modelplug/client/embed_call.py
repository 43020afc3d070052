"""Running one embedding call: the inputs checked, the plugin's answer awaited, the
Embeddings finished (answering model, route, cost) and failures turned into ModelError.

The embedding counterpart of :mod:`modelplug.client.calls`; apart from client.py for the same
reason (the pydantic types load here, not when a Client is made).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from modelplug.client.calls import clean_error
from modelplug.client.plugin_answer import plugin_answer
from modelplug.contract.errors import (
    ErrorClass,
    ModelError,
    RequestError,
)
from modelplug.contract.secrets import redact_data
from modelplug.contract.types import Embeddings, EmbedRequest

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route

__all__ = ["embed_request", "guarded_embed", "overlong_input"]

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
    client: ClientSurface,
    spec: str | Route | None,
    inputs: str | Sequence[str],
    dimensions: int | None,
    fields: Mapping[str, Any],
) -> Embeddings:
    """:meth:`Client.aembed`'s body."""
    request = embed_request(inputs, dimensions, fields)
    route = client.route_for(spec)
    too_long = overlong_input(route, request)
    if too_long is not None:
        raise too_long
    result = await plugin_answer(client, route, client.open_embed(route, request))
    if len(result.vectors) != len(request.inputs):
        raise clean_error(
            ModelError(
                f"the {route.provider} plugin returned {len(result.vectors)} vectors for "
                f"{len(request.inputs)} inputs",
                error_class=ErrorClass(kind="other", reason="wrong number of vectors"),
                route=route,
            )
        )
    return _finish(client, route, result)


# Switches by which a caller asks the server to cut a long input instead of refusing it
# (Ollama's truncate, Vertex's autoTruncate, Cohere's truncate).
_TRUNCATE_FIELDS = ("truncate", "auto_truncate", "autoTruncate")


def overlong_input(route: Route, request: EmbedRequest) -> ModelError | None:
    """A context_overflow for an input that the model is sure to refuse, before sending.

    Only for a model whose info says it refuses (``embedding_truncates`` False) rather
    than cuts a long text, off this machine (a local server loads what it loads), and
    only when the input has more whitespace-separated words than the limit has tokens:
    the tokenizers of these models never join two words into one token, so a word count
    is never more than the token count, and an input the model would take is never
    refused here. A long text without spaces is left to the server to judge.
    """
    info = route.info
    limit = info.context_window
    if limit is None or info.embedding_truncates is not False or route.endpoint.local:
        return None
    if any(request.extra.get(name) not in (None, False, "NONE") for name in _TRUNCATE_FIELDS):
        return None
    for index, text in enumerate(request.inputs):
        # A text cannot have more words than half its characters, plus one.
        if len(text) // 2 + 1 > limit and len(text.split()) > limit:
            return ModelError(
                f"inputs[{index}] is longer than {route.name} takes: at least "
                f"{len(text.split()):,} tokens, over its input limit of {limit:,} tokens "
                "per text; split it, or shorten it",
                error_class=ErrorClass(
                    kind="context_overflow", reason="an input is over the model's limit"
                ),
                route=route,
            )
    return None


def _finish(client: ClientSurface, route: Route, result: Embeddings) -> Embeddings:
    answered = result.model or route.name
    answering = result.route if isinstance(result.route, type(route)) else route
    updates: dict[str, Any] = {"model": answered, "route": answering}
    metadata = redact_data(result.metadata)
    if metadata is not result.metadata:
        updates["metadata"] = metadata
    if result.cost is None:
        updates["cost"] = client.price(answering, result.usage)
    return result.model_copy(update=updates)
