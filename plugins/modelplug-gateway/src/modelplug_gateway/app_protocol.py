"""The Gateway as the endpoint modules beside the app see it.

:mod:`.embeddings` (``POST /v1/embeddings``) and :mod:`.models` (``GET /v1/models``)
take the app as :class:`GatewayApp`, a Protocol the Gateway satisfies, so
:mod:`.app` imports them and they never import it: the imports run one way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from modelplug import Client, Request

    from .asgi import Disconnected, Receive, Scope, Send
    from .auth import Refusal, Ticket
    from .metrics import Metrics
    from .route_cache import RouteCache
    from .settings import GatewaySettings
    from .shapes.base import Shape, ShapeError

__all__ = ["GatewayApp"]


class GatewayApp(Protocol):
    """What an endpoint reads of the app and asks of it: its settings, shapes, metrics
    and routes; the body, admission and the answers written in a caller's shape."""

    draining: bool
    shapes: dict[str, Shape]
    allowed: frozenset[str] | None
    options: GatewaySettings
    metrics: Metrics
    routes: RouteCache

    @property
    def client(self) -> Client:
        """The Client every call runs through."""
        ...

    def precheck(self, scope: Scope) -> None:
        """Refuse, before the body is read, a caller who cannot be admitted."""
        ...

    def check_served(self, model: str) -> None:
        """Refuse (a 404 ShapeError) a model outside the gateway's ``models`` list."""
        ...

    async def read_json(self, scope: Scope, receive: Receive) -> dict[str, Any]:
        """The request body as a JSON object (bounded in size and time)."""
        ...

    async def admit(self, scope: Scope, model: str, request: Request | None = None) -> Ticket:
        """Admit the caller for ``model``, or raise a Refusal."""
        ...

    async def send_json(
        self,
        send: Send,
        status: int,
        body: dict[str, Any],
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        """Write ``body`` as the whole JSON answer."""
        ...

    async def send_error(
        self,
        send: Send,
        shape: Shape,
        status: int,
        message: str,
        kind: str | None = None,
        retry_after: float | None = None,
        extra: list[tuple[bytes, bytes]] | None = None,
        code: str | None = None,
    ) -> None:
        """Write an error in ``shape``'s form."""
        ...

    async def send_refusal(
        self, send: Send, shape: Shape, exc: ShapeError | Refusal | Disconnected
    ) -> tuple[int, str | None]:
        """Answer a request refused before its call; the status to log and the refused
        key's name."""
        ...

    async def send_failure(
        self, send: Send, shape: Shape, exc: Exception, route: str | None = None
    ) -> int:
        """Write a failed call's error in ``shape``'s form; return its status."""
        ...
