"""``POST /v1/messages/count_tokens`` in Anthropic's shape, on ``Client.acount_prompt``.

Claude Code asks here before a long request. The body is a Messages body without
``max_tokens`` (model, messages, system, tools, tool_choice, thinking); the answer is
``{"input_tokens": N}`` as the model's own server counted it. The count is exact or
not given: when the route's endpoint cannot count (a provider with no count API, a
server without the path), the answer is 501 in the Messages error shape saying so and
naming the route, with ``x-should-retry: false`` (asking again cannot change it). An
estimate is never passed off as the server's count."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .asgi import Disconnected
from .auth import Refusal
from .model_spec import check_model
from .request_log import log_request
from .shapes.base import ShapeError

if TYPE_CHECKING:
    from .app_protocol import GatewayApp
    from .asgi import Receive, Scope, Send
    from .shapes.base import Parsed

__all__ = ["handle", "parse_count_request"]

# A Messages body's max_tokens bounds the answer, which a count does not make: the
# parser asks for one, so a count body without it is read with this stand-in.
_NO_ANSWER_BOUND = 1 << 20
_NOT_COUNTED = 501


def parse_count_request(body: dict[str, Any]) -> Parsed:
    """Read a count_tokens body as the Messages route reads its body (ShapeError for
    what it refuses); ``stream`` has no meaning here and is refused."""
    from .shapes.anthropic_request import parse_request

    if "stream" in body:
        raise ShapeError("stream: Extra inputs are not permitted", param="stream")
    if body.get("max_tokens") is None:
        body = {**body, "max_tokens": _NO_ANSWER_BOUND}
    return parse_request(body)


async def handle(gateway: GatewayApp, scope: Scope, receive: Receive, send: Send) -> None:
    from modelplug import ModelError

    shape = gateway.shapes["anthropic"]
    started = time.perf_counter()
    status = 200
    ticket = None
    model: str | None = None
    answered: str | None = None
    refused_key: str | None = None
    try:
        if gateway.draining:
            status = 503
            await gateway.send_error(
                send, shape, 503, "the gateway is shutting down", "overloaded_error"
            )
            return
        try:
            gateway.precheck(scope)  # who cannot be admitted: refused before the body
            parsed = parse_count_request(await gateway.read_json(scope, receive))
            model = parsed.model
            check_model(model)
            gateway.check_served(model)
            ticket = await gateway.admit(scope, model)
        except (ShapeError, Refusal, Disconnected) as exc:
            status, refused_key = await gateway.send_refusal(send, shape, exc)
            return
        try:
            route = gateway.routes.get(model)
            answered = route.name
            counted = await gateway.client.acount_prompt(route, parsed.request)
        except ModelError as exc:
            status = await gateway.send_failure(send, shape, exc)
            return
        except Exception as exc:  # a bad spec or settings: before any upstream call
            status = await gateway.send_failure(send, shape, exc)
            return
        headers = [(b"x-modelplug-route", route.name.encode())]
        if counted is None:
            status = _NOT_COUNTED
            await gateway.send_error(
                send,
                shape,
                _NOT_COUNTED,
                f"the upstream of {model!r} (route {route.name}, provider type "
                f"{route.provider}) cannot count tokens: no exact count is given for it",
                "api_error",
                extra=[*headers, (b"x-should-retry", b"false")],
            )
            return
        await gateway.send_json(send, 200, {"input_tokens": counted}, headers)
    finally:
        if ticket is not None:
            await ticket.settle(None, None, None)
        took = time.perf_counter() - started
        gateway.metrics.request(
            "count_tokens", status, took, gateway.metrics.route(model, answered)
        )
        log_request(
            method=scope["method"],
            path=scope["path"],
            status=status,
            key_name=ticket.key_name if ticket else refused_key,
            route=answered,
            usage=None,
            cost=None,
            latency_ms=took * 1000,
            overhead_ms=None,
        )
