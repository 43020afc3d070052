"""This plugin's errors, each born with its ErrorClass.

They derive from the kit's ModelError, so the client passes them on unchanged (message,
class and partial output); ``modelplug_classify_error`` answers for them too. The
plugin never retries: retries belong to a policy, which reads ``retryable``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from modelplug.plugin import (
    ErrorClass,
    ModelError,
    Route,
    class_for_status,
    redact,
    retry_after_from_headers,
)
from modelplug.types import Response

__all__ = [
    "OllamaError",
    "error_answer",
    "error_line",
    "not_done",
    "stream_broken",
    "unreachable",
]

PULL_HINT = "Run `ollama pull {model}` to download it (`ollama list` shows the installed models)."
CONTEXT_HINT = (
    "the conversation does not fit the context Ollama loaded (num_ctx {num_ctx}); set "
    'context_window under [models."{name}"] to a larger window the machine can hold, '
    "so the request asks Ollama for it and the conversation is compacted before it overflows"
)


class OllamaError(ModelError):
    """Any failure of a call to Ollama."""

    def __init__(
        self,
        message: str,
        *,
        error_class: ErrorClass,
        route: Route | None,
        partial: Response | None = None,
        body: Any = None,
    ) -> None:
        self.body = body
        super().__init__(message, error_class=error_class, route=route, partial=partial)


def unreachable(route: Route) -> OllamaError:
    """Nothing listens at the base URL: another model may still answer."""
    return OllamaError(
        f"Cannot reach Ollama at {route.endpoint.base_url}. Is it running (ollama serve)?",
        error_class=ErrorClass(kind="unreachable", fallback=True, reason="connection refused"),
        route=route,
    )


def stream_broken(
    route: Route, message: str, *, reason: str, partial: Response | None = None
) -> OllamaError:
    """A transient failure: the same request may succeed when sent again."""
    return OllamaError(
        message,
        error_class=ErrorClass(kind="transient", retryable=True, fallback=True, reason=reason),
        route=route,
        partial=partial,
    )


def not_done(route: Route, reason: str, partial: Response | None) -> OllamaError:
    """A final line whose done_reason says Ollama generated nothing (``load``,
    ``unload``): the request had no messages to answer."""
    return OllamaError(
        f"Ollama answered with done_reason {reason!r} for {route.model}: it only "
        f"{'loaded' if reason == 'load' else 'unloaded'} the model and generated nothing",
        error_class=ErrorClass(kind="other", reason=f"the model was {reason}ed, not run"),
        route=route,
        partial=partial,
    )


def _message_of(body: Any) -> str:
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, str):
            return error
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        return json.dumps(body)[:500]
    return str(body or "").strip()[:500]


def _classify(
    status: int | None, message: str, retry_after: float | None, route: Route, num_ctx: int | None
) -> tuple[ErrorClass, str]:
    """The ErrorClass and the hint to add, from core's table and Ollama's own words."""
    lowered = message.lower()
    error_class = class_for_status(status, text=message, retry_after=retry_after)
    if error_class is None:
        # An error line mid-stream, with no status and no known words: the runner
        # failed ("an error was encountered while running the model").
        error_class = ErrorClass(
            kind="transient",
            retryable=True,
            fallback=True,
            reason="Ollama reported an error mid-stream",
        )
    hint = ""
    if error_class.kind == "not_found" or (status is None and "not found" in lowered):
        error_class = ErrorClass(
            kind="not_found", fallback=True, status=status, reason="model not found"
        )
        hint = PULL_HINT.format(model=route.model)
    elif error_class.kind == "context_overflow":
        hint = CONTEXT_HINT.format(num_ctx=num_ctx or "unknown", name=route.name)
    elif error_class.kind == "transient" and status is not None:
        error_class = dataclasses.replace(error_class, reason=f"Ollama failed ({status})")
    return error_class, hint


def error_answer(
    status: int,
    headers: Mapping[str, str],
    raw: bytes,
    route: Route,
    num_ctx: int | None = None,
) -> OllamaError:
    """The error for an error status from Ollama (``{"error": "..."}``)."""
    # Redacted before anything keeps it: a proxy may echo the key it refused.
    text = redact(raw.decode("utf-8", "replace"))
    try:
        body: Any = json.loads(text) if text.strip() else None
    except ValueError:
        body = text
    message = _message_of(body)
    error_class, hint = _classify(
        status, message, retry_after_from_headers(headers), route, num_ctx
    )
    words = f"Ollama answered {status}: {message}" if message else f"Ollama answered {status}"
    if hint:
        words += f". {hint}"
    return OllamaError(words, error_class=error_class, route=route, body=body)


def error_line(
    error: Any, route: Route, partial: Response | None, num_ctx: int | None = None
) -> OllamaError:
    """The error for an ``{"error": ...}`` line in the stream (the status was already
    200, so the words are all there is)."""
    message = redact(_message_of({"error": error}))
    error_class, hint = _classify(None, message, None, route, num_ctx)
    words = f"Ollama failed mid-stream: {message}"
    if hint:
        words += f". {hint}"
    return OllamaError(
        words, error_class=error_class, route=route, partial=partial, body={"error": error}
    )
