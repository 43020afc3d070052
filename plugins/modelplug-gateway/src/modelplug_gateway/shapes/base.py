"""What every API shape gives the app: parse a body, build an answer, stream events,
and word an error the way that API's SDKs read it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from modelplug import Event, Request, Response

__all__ = ["Parsed", "Shape", "ShapeError"]


class ShapeError(Exception):
    """A request the caller's shape refuses (a 4xx in that shape's error body)."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        kind: str = "invalid_request_error",
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.param = param


@dataclass
class Parsed:
    """A caller's body read into modelplug's terms."""

    model: str
    """The spec, alias or role as the caller named it."""
    request: Request
    stream: bool
    include_usage: bool = True
    """OpenAI's ``stream_options.include_usage``; shapes that always report usage keep True."""
    passthrough: dict[str, Any] = field(default_factory=dict)
    """Top-level fields the shape does not read (a beta feature's), as sent: they go to
    an upstream of the shape's own type and are dropped for others
    (:mod:`modelplug_gateway.upstream_fit`)."""
    system_notes: tuple[tuple[int, str], ...] = ()
    """System messages sent inside the conversation, as ``(i, text)``: the text came
    just before ``request.messages[i]`` (``i`` may be its length: at the end)."""
    betas: tuple[str, ...] = ()
    """The caller's ``anthropic-beta`` header names, for an Anthropic upstream."""
    own_types: frozenset[str] = frozenset({"anthropic"})
    """The provider types that speak the caller's API: ``passthrough`` goes to them."""
    unserved: tuple[str, ...] = ()
    """What the Request could not carry (``tools.namespace``, ``input.custom_tool_call``,
    a field the shape does not know), named for an upstream not of ``own_types``; the
    caller's whole fields that held them are in ``passthrough``. Set, with
    ``name_all_drops``, by shapes that say everything they leave out (the Responses
    shape); the Messages shape names its passthrough fields."""
    name_all_drops: bool = False
    """Name, besides ``unserved``, web search sent to an upstream that runs none and
    reasoning written by another model than the route's (both left out)."""
    echo: dict[str, Any] = field(default_factory=dict)
    """What the shape's answer repeats of the request (the Responses API's response
    object restates its instructions, tools and options)."""


class Shape(Protocol):
    """One API's request and answer shapes; stateless, one instance per app."""

    name: str
    """``"openai"`` (chat completions), ``"responses"`` or ``"anthropic"``."""

    def parse(self, body: dict[str, Any]) -> Parsed:
        """Read a decoded JSON body; raise :class:`ShapeError` for what it refuses."""
        ...

    def response(
        self, response: Response, model: str, parsed: Parsed | None = None
    ) -> dict[str, Any]:
        """The non-streamed answer body for ``response``; ``model`` is the name to
        report (the caller's), ``parsed`` the request it answers."""
        ...

    def stream(
        self, events: AsyncIterator[Event], model: str, parsed: Parsed
    ) -> AsyncIterator[bytes]:
        """SSE frames, each as its event arrives. A ModelplugError raised by ``events``
        after the stream began becomes the shape's in-stream error frame (worded by
        :func:`modelplug_gateway.errors.failure_for`)."""
        ...

    def error_body(
        self, status: int, kind: str, message: str, code: str | None = None
    ) -> dict[str, Any]:
        """The error body this API's clients parse for ``status``: ``kind`` is its
        ``type``, ``code`` a string naming the cause where the shape has a field for it
        (see :mod:`modelplug_gateway.errors`)."""
        ...
