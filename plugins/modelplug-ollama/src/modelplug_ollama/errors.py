"""This plugin's errors, each born with its ErrorClass.

The kit's HTTP path makes them through :class:`OllamaErrors` (sending, statuses, a cut
or a stall); what is Ollama's own is here: its ``{"error": "..."}`` bodies and lines, the
``ollama pull`` and ``num_ctx`` hints. They derive from the kit's ModelError, so the
client passes them on unchanged (message, class and partial output) and
``Client.classify`` reads their class first. The plugin never retries: retries belong
to a policy, which reads ``retryable``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from modelplug import (
    ErrorClass,
    ModelError,
    Response,
    Route,
    class_for_status,
    redact,
    retry_after_from_headers,
)
from modelplug_kit import StatusError, WireErrors, error_body, error_message

__all__ = ["ERRORS", "OllamaError", "OllamaErrors", "OllamaStatusError", "error_line", "not_done"]

SECTION = "ollama"
PULL_HINT = "Run `ollama pull {model}` to download it (`ollama list` shows the installed models)."
CONTEXT_HINT = (
    "the conversation does not fit the context Ollama loaded (num_ctx {num_ctx}); shorten "
    'or compact it, or set context_window under [models."{name}"] to a larger window the '
    "machine can hold: the request then asks Ollama for it, and modelplug refuses a prompt "
    "surely too long for it before sending it"
)
EMBED_CONTEXT_HINT = (
    "an input is longer than the context {model} is loaded with ({limit}); cut the text "
    "into shorter pieces, or send extra={{'truncate': True}} to let Ollama cut it there"
)


class OllamaError(ModelError):
    """Any failure of a call to Ollama."""


class OllamaStatusError(StatusError, OllamaError):
    """Ollama answered with an error status, or said ``{"error": ...}`` where its stream
    should be (``status_code`` 200) or on a line of it (``status_code`` None); ``body``
    and ``headers`` are kept, redacted."""


class OllamaErrors(WireErrors):
    """The kit's HTTP path makes this plugin's errors. ``num_ctx``: the context window
    the call asked for, named by a context overflow's hint (None: not known, a probe)."""

    error = OllamaError
    status_error = OllamaStatusError

    def __init__(self, section: str, num_ctx: int | None = None, *, embed: bool = False) -> None:
        super().__init__(section)
        self.num_ctx = num_ctx
        self.embed = embed

    def for_call(self, num_ctx: int) -> OllamaErrors:
        return OllamaErrors(self.section, num_ctx)

    def for_embed(self, num_ctx: int | None) -> OllamaErrors:
        """An embedding call's errors: a context overflow names an input, not the
        conversation (``num_ctx``: the model's window when known)."""
        return OllamaErrors(self.section, num_ctx, embed=True)

    def nobody_at(self, route: Route, at: str) -> str:
        return f"Cannot reach Ollama at {at}. Is it running (ollama serve)?"

    def status(
        self, status: int, headers: Mapping[str, str], body: bytes, route: Route
    ) -> ModelError:
        """An error status from Ollama (``{"error": "..."}``), or such a body answered
        with 200, whose words are then all there is (as on an error line)."""
        data = error_body(body)  # redacted: a proxy may echo the key it refused
        message = error_message(data)
        code = status if status >= 300 else None
        error_class, hint = _classify(
            code, message, retry_after_from_headers(headers), route, self.num_ctx, self.embed
        )
        words = f"Ollama answered {status}: {message}" if message else f"Ollama answered {status}"
        if hint:
            words += f". {hint}"
        return self.make(words, error_class, route, status=status, headers=headers, body=data)


ERRORS = OllamaErrors(SECTION)


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


def _classify(
    status: int | None,
    message: str,
    retry_after: float | None,
    route: Route,
    num_ctx: int | None,
    embed: bool = False,
) -> tuple[ErrorClass, str]:
    """The ErrorClass and the hint to add, from core's table and Ollama's own words."""
    lowered = message.lower()
    error_class = class_for_status(status, text=message, retry_after=retry_after)
    if embed and "context length" in lowered and status == 500:
        # /api/embed with truncate: false passes the runner's "the input length exceeds
        # the context length" on as a 500: the same input fails every time.
        error_class = class_for_status(400, text=message)
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
    elif error_class.kind == "context_overflow" and embed:
        limit = f"num_ctx {num_ctx}" if num_ctx else "its num_ctx; `ollama show` tells it"
        hint = EMBED_CONTEXT_HINT.format(model=route.model, limit=limit)
        error_class = dataclasses.replace(
            error_class, reason="an input is longer than the model takes"
        )
    elif error_class.kind == "context_overflow":
        hint = CONTEXT_HINT.format(num_ctx=num_ctx or "unknown", name=route.name)
    elif error_class.kind == "transient" and status is not None:
        error_class = dataclasses.replace(error_class, reason=f"Ollama failed ({status})")
    return error_class, hint


def error_line(
    error: Any, route: Route, partial: Response | None, num_ctx: int | None = None
) -> OllamaStatusError:
    """The error for an ``{"error": ...}`` line in the stream (the status was already
    200, so the words are all there is)."""
    message = redact(error_message({"error": error}))
    error_class, hint = _classify(None, message, None, route, num_ctx)
    words = f"Ollama failed mid-stream: {message}"
    if hint:
        words += f". {hint}"
    return OllamaStatusError(
        words,
        status=None,
        error_class=error_class,
        route=route,
        body={"error": error},
        partial=partial,
    )
