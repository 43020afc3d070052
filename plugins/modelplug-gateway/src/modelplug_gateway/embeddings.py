"""``POST /v1/embeddings`` in OpenAI's shape, on ``Client.aembed``.

OpenAI's SDK asks for ``encoding_format: "base64"`` unless told otherwise (little-endian
float32, base64): it is served that way, and as plain floats when asked."""

from __future__ import annotations

import base64
import sys
import time
from array import array
from typing import TYPE_CHECKING, Any

from .asgi import Disconnected
from .auth import Refusal
from .model_spec import check_model
from .one_answer import OneAnswer, answer_headers
from .shapes.base import ShapeError

if TYPE_CHECKING:
    from .app_protocol import GatewayApp
    from .asgi import Receive, Scope, Send

__all__ = ["handle", "parse_embeddings"]

_FIELDS = frozenset({"model", "input", "dimensions", "encoding_format", "user"})


def parse_embeddings(body: dict[str, Any]) -> tuple[str, list[str], int | None, str]:
    unknown = sorted(k for k in body if k not in _FIELDS)
    if unknown:
        raise ShapeError(f"unknown field(s): {', '.join(unknown)}", param=unknown[0])
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ShapeError("'model' must be a non-empty string", param="model")
    check_model(model)
    raw = body.get("input")
    inputs = [raw] if isinstance(raw, str) else raw
    if not isinstance(inputs, list) or not inputs:
        raise ShapeError("'input' must be a string or a non-empty list of strings", param="input")
    if not all(isinstance(i, str) and i for i in inputs):
        raise ShapeError(
            "'input' items must be non-empty strings (token arrays are not supported)",
            param="input",
        )
    dimensions = body.get("dimensions")
    if dimensions is not None and (
        not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions <= 0
    ):
        raise ShapeError("'dimensions' must be a positive integer", param="dimensions")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise ShapeError("'encoding_format' must be float or base64", param="encoding_format")
    return model, inputs, dimensions, encoding


def _encode(vector: list[float], encoding: str) -> list[float] | str:
    if encoding == "float":
        return vector
    packed = array("f", vector)
    if sys.byteorder != "little":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode()


async def handle(gateway: GatewayApp, scope: Scope, receive: Receive, send: Send) -> None:
    shape = gateway.shapes["openai"]
    one = OneAnswer("embeddings", time.perf_counter())
    try:
        if gateway.draining:
            one.status = 503
            await gateway.send_error(send, shape, 503, "the gateway is shutting down")
            return
        try:
            gateway.precheck(scope)  # who cannot be admitted: refused before the body
            body = await gateway.read_json(scope, receive)
            one.model, inputs, dimensions, encoding = parse_embeddings(body)
            gateway.check_served(one.model)
            one.ticket = await gateway.admit(scope, one.model)
        except (ShapeError, Refusal, Disconnected) as exc:
            await one.refused(gateway, send, shape, exc)
            return
        try:
            result = await gateway.client.aembed(
                gateway.routes.get(one.model), inputs, dimensions=dimensions
            )
        except Exception as exc:  # a ModelError, a RequestError, a bad spec or settings
            await one.call_failed(gateway, send, shape, exc)
            return
        one.result = result
        tokens = result.usage.input
        answer = {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": _encode(v, encoding)}
                for i, v in enumerate(result.vectors)
            ],
            "model": one.model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        await gateway.send_json(send, 200, answer, answer_headers(result))
        gateway.metrics.usage(tokens, 0, result.cost.amount if result.cost else None)
    finally:
        await one.end(gateway, scope)
