"""What the endpoints that answer with one body (``/v1/embeddings``,
``/v1/audio/transcriptions``) share after their call: the answer's route and cost
headers, and the request's end, whatever it was (settled with the gate, counted in the
metrics, one log line)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .request_log import log_request

if TYPE_CHECKING:
    from modelplug import Cost, Route, Usage

    from .app_protocol import GatewayApp
    from .asgi import Disconnected, Scope, Send
    from .auth import Refusal, Ticket
    from .shapes.base import Shape, ShapeError

__all__ = ["Answered", "OneAnswer", "answer_headers"]


class Answered(Protocol):
    """What such a call returns (Embeddings, Transcript): who answered, at what cost."""

    @property
    def route(self) -> Route | None: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def cost(self) -> Cost | None: ...

    @property
    def model(self) -> str | None: ...


def answer_headers(result: Answered) -> list[tuple[bytes, bytes]]:
    """``x-modelplug-route`` (the route that answered) and ``x-modelplug-cost`` (USD)."""
    headers = []
    if result.model:
        headers.append((b"x-modelplug-route", result.model.encode()))
    if result.cost is not None and result.cost.currency == "USD":
        headers.append((b"x-modelplug-cost", str(result.cost.amount).encode()))
    return headers


@dataclass
class OneAnswer:
    """One request to such an endpoint, as its handler learns it: the status to log,
    the gate's ticket once admitted (or the refused key's name), the model asked, the
    route a failure named and the call's result."""

    endpoint: str  # the metrics' label: "embeddings", "transcriptions"
    started: float
    status: int = 200
    ticket: Ticket | None = None
    refused_key: str | None = None
    model: str | None = None
    failed: str | None = None
    result: Answered | None = None

    async def refused(
        self,
        gateway: GatewayApp,
        send: Send,
        shape: Shape,
        exc: ShapeError | Refusal | Disconnected,
    ) -> None:
        """Answer a request refused before its call (see ``send_refusal``)."""
        self.status, self.refused_key = await gateway.send_refusal(send, shape, exc)

    async def call_failed(
        self, gateway: GatewayApp, send: Send, shape: Shape, exc: Exception
    ) -> None:
        """Answer a call that failed; a ModelError's route is the metrics' label."""
        from modelplug import ModelError

        if isinstance(exc, ModelError) and exc.route is not None:
            self.failed = exc.route.name
        self.status = await gateway.send_failure(send, shape, exc)

    async def end(self, gateway: GatewayApp, scope: Scope) -> None:
        """Settle with the gate what the call spent, count it and log its line."""
        result = self.result
        if self.ticket is not None:
            await self.ticket.settle(
                result.route if result else None,
                result.usage if result else None,
                result.cost if result else None,
            )
        answered = result.model if result is not None and result.model else self.failed
        took = time.perf_counter() - self.started
        route = gateway.metrics.route(self.model, answered)
        gateway.metrics.request(self.endpoint, self.status, took, route)
        log_request(
            method=scope["method"],
            path=scope["path"],
            status=self.status,
            key_name=self.ticket.key_name if self.ticket else self.refused_key,
            route=answered,
            usage=result.usage if result else None,
            cost=result.cost if result else None,
            latency_ms=took * 1000,
            overhead_ms=None,
        )
