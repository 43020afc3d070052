"""The OpenAI Responses shape (``POST /v1/responses``): any Responses API client (the
Codex CLI, the openai SDK's ``responses``), any provider.

The request is read by :mod:`.responses_request`, the answer written by
:mod:`.responses_answer`, the stream by :mod:`.responses_stream`; this module is the
:class:`~.base.Shape` the app holds. Errors have OpenAI's body, which the openai SDK
reads for every endpoint, with the chat shape's statuses (:mod:`modelplug_gateway.errors`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .responses_answer import answer_json, error_body
from .responses_request import parse_request
from .responses_stream import write_stream

if TYPE_CHECKING:
    from modelplug import Event, Response

    from .base import Parsed

__all__ = ["SHAPE", "OpenAIResponses"]


class OpenAIResponses:
    """Stateless: one instance serves every request."""

    name = "responses"

    def parse(self, body: dict[str, Any]) -> Parsed:
        return parse_request(body)

    def response(
        self, response: Response, model: str, parsed: Parsed | None = None
    ) -> dict[str, Any]:
        return answer_json(response, model, parsed)

    def stream(
        self, events: AsyncIterator[Event], model: str, parsed: Parsed
    ) -> AsyncIterator[bytes]:
        return write_stream(events, model, parsed)

    def error_body(
        self, status: int, kind: str, message: str, code: str | None = None
    ) -> dict[str, Any]:
        return error_body(status, kind, message, code)


SHAPE = OpenAIResponses()
