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
from .request_log import log_request
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
    from modelplug import ModelError

    shape = gateway.shapes["openai"]
    started = time.perf_counter()
    status = 200
    ticket = None
    result = None
    model: str | None = None
    failed: str | None = None  # the route a ModelError named, for the metrics' label
    refused_key: str | None = None
    try:
        if gateway.draining:
            status = 503
            await gateway.send_error(send, shape, 503, "the gateway is shutting down")
            return
        try:
            gateway.precheck(scope)  # who cannot be admitted: refused before the body
            body = await gateway.read_json(scope, receive)
            model, inputs, dimensions, encoding = parse_embeddings(body)
            gateway.check_served(model)
            ticket = await gateway.admit(scope, model)
        except (ShapeError, Refusal, Disconnected) as exc:
            status, refused_key = await gateway.send_refusal(send, shape, exc)
            return
        try:
            result = await gateway.client.aembed(
                gateway.routes.get(model), inputs, dimensions=dimensions
            )
        except ModelError as exc:
            failed = exc.route.name if exc.route is not None else None
            status = await gateway.send_failure(send, shape, exc)
            return
        except Exception as exc:
            status = await gateway.send_failure(send, shape, exc)
            return
        tokens = result.usage.input
        answer = {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": _encode(v, encoding)}
                for i, v in enumerate(result.vectors)
            ],
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        headers = []
        if result.model:
            headers.append((b"x-modelplug-route", result.model.encode()))
        if result.cost is not None and result.cost.currency == "USD":
            headers.append((b"x-modelplug-cost", str(result.cost.amount).encode()))
        await gateway.send_json(send, 200, answer, headers)
        gateway.metrics.usage(tokens, 0, result.cost.amount if result.cost else None)
    finally:
        if ticket is not None:
            await ticket.settle(
                result.route if result else None,
                result.usage if result else None,
                result.cost if result else None,
            )
        answered = result.model if result is not None and result.model else failed
        route = gateway.metrics.route(model, answered)
        took = time.perf_counter() - started
        gateway.metrics.request("embeddings", status, took, route)
        log_request(
            method=scope["method"],
            path=scope["path"],
            status=status,
            key_name=ticket.key_name if ticket else refused_key,
            route=answered,
            usage=result.usage if result else None,
            cost=result.cost if result else None,
            latency_ms=took * 1000,
            overhead_ms=None,
        )
