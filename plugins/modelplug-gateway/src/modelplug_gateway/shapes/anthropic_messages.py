"""The Anthropic Messages shape (``POST /v1/messages``): any Messages API client, any
provider.

The request is read by :mod:`.anthropic_request`, the answer written by
:mod:`.anthropic_answer`, the stream by :mod:`.anthropic_stream`; this module is the
:class:`~.base.Shape` the app holds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .anthropic_answer import error_body, message_json
from .anthropic_request import parse_request
from .anthropic_stream import write_stream

if TYPE_CHECKING:
    from modelplug import Event, Response

    from .base import Parsed

__all__ = ["SHAPE", "AnthropicMessages"]


class AnthropicMessages:
    """Stateless: one instance serves every request."""

    name = "anthropic"

    def parse(self, body: dict[str, Any]) -> Parsed:
        return parse_request(body)

    def response(
        self, response: Response, model: str, parsed: Parsed | None = None
    ) -> dict[str, Any]:
        return message_json(response, model)

    def stream(
        self, events: AsyncIterator[Event], model: str, parsed: Parsed
    ) -> AsyncIterator[bytes]:
        return write_stream(events, model)

    def error_body(
        self, status: int, kind: str, message: str, code: str | None = None
    ) -> dict[str, Any]:
        return error_body(status, kind, message)  # the Messages body has no code


SHAPE = AnthropicMessages()
