"""This plugin's errors, each born with its ErrorClass.

They derive from :class:`modelplug.contract.errors.ModelError`, so the client passes them on
unchanged (message, class and partial output), and ``Client.classify`` reads their
class first (no classify hook is needed). The plugin never retries: retries belong to
the fallback policy, which reads ``retryable`` and ``retry_after``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from modelplug import ErrorClass, ModelError, Response, Route, retry_after_from_headers
from modelplug import class_for_status as core_class_for_status
from modelplug_kit import StatusError, WireErrors, error_body, error_message, error_type

__all__ = [
    "EMBED_ERRORS",
    "ERRORS",
    "CompatErrors",
    "EmbedErrors",
    "HTTPStatusError",
    "OpenAICompatError",
    "StreamBrokenError",
    "UnreachableError",
    "backpressure_text",
    "batch_overflow",
    "class_for_status",
    "context_hint",
    "http_error",
    "stream_broken",
    "unreachable",
]

# What a context overflow's message advises. Nothing compacts a conversation on its
# own: the caller shortens it, or the server loads a larger window. A window known from
# the settings or a probe already had core refuse a prompt surely too long; one that is
# unknown (or a plugin's guess) is worth setting, so core can do that next time.
KNOWN_WINDOW_HINT = (
    "the prompt does not fit {name}'s context window of {window:,} tokens ({said}); "
    "shorten or compact the conversation, or load the model with a larger window (e.g. "
    'llama-server -c, OLLAMA_CONTEXT_LENGTH) and set context_window under [models."{name}"] '
    "to match"
)
UNKNOWN_WINDOW_HINT = (
    "the prompt does not fit the model's context window; shorten or compact the "
    "conversation, or load the model with a larger window (e.g. llama-server -c, "
    'OLLAMA_CONTEXT_LENGTH). Set context_window under [models."{name}"] to what the server '
    "loaded (or run `modelplug resolve --probe {name}`), and modelplug refuses a prompt "
    "too long for it before sending it"
)
_WINDOW_SAID = {"settings": "as your settings say", "probe": "as a probe of the server found it"}


def context_hint(route: Route) -> str:
    """The advice for a prompt the server found too long for ``route``'s window."""
    window = route.info.context_window
    said = _WINDOW_SAID.get(route.info.context_window_source or "")
    if window is None or said is None:
        return UNKNOWN_WINDOW_HINT.format(name=route.name)
    return KNOWN_WINDOW_HINT.format(name=route.name, window=window, said=said)


# llama.cpp's server (tools/server/server.cpp) refuses an input longer than its physical
# batch with a 500 of type server_error; asking again gets the same refusal.
_BATCH_OVERFLOW = re.compile(
    r"input \((\d+) tokens\) is too large to process\. increase the physical batch size"
    r"(?: \(current batch size: (\d+)\))?"
)
BATCH_HINT = (
    "start llama-server with a physical batch at least that long (-b and -ub, e.g. "
    "-b 8192 -ub 8192), or send shorter inputs"
)


class OpenAICompatError(ModelError):
    """Any failure of an OpenAI-compatible call."""


class HTTPStatusError(StatusError, OpenAICompatError):
    """The server answered with an error status (or sent an error event mid-stream)."""


class UnreachableError(OpenAICompatError):
    """The connection was refused or could not be made."""


class StreamBrokenError(OpenAICompatError):
    """The stream dropped, stalled or sent something unreadable after it started."""


class CompatErrors(WireErrors):
    """The kit's HTTP path makes this plugin's errors: a status answer is an
    :class:`HTTPStatusError`, nothing listening an :class:`UnreachableError`, anything
    else a :class:`StreamBrokenError`."""

    error = StreamBrokenError
    status_error = HTTPStatusError
    #: what a context overflow's message advises (None: chat's context_window hint).
    overflow_hint: str | None = None

    def make(
        self,
        message: str,
        error_class: ErrorClass,
        route: Route,
        *,
        partial: Response | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> ModelError:
        if status is None and error_class.kind == "unreachable":
            return UnreachableError(message, error_class=error_class, route=route)
        return super().make(
            message, error_class, route, partial=partial, status=status, headers=headers, body=body
        )

    def status(
        self, status: int, headers: Mapping[str, str], body: bytes, route: Route
    ) -> HTTPStatusError:
        if status < 300:
            # A JSON error answered with 200 reads as the same error streamed: its own
            # code, when it has one, is its status.
            error = error_body(body)
            return http_error(
                status_in(error.get("error") if isinstance(error, dict) else None),
                headers,
                body,
                route,
                overflow_hint=self.overflow_hint,
            )
        return http_error(status, headers, body, route, overflow_hint=self.overflow_hint)


class EmbedErrors(CompatErrors):
    """An embedding call's errors: an input too long is not a conversation to compact."""

    overflow_hint = "shorten or split that input: it is longer than the model takes"


ERRORS = CompatErrors("openai-compat")
EMBED_ERRORS = EmbedErrors("openai-compat")


def unreachable(route: Route) -> ModelError:
    """Nothing listens at the route's base URL: another model may still answer."""
    return ERRORS.unreachable(route)


def stream_broken(
    route: Route,
    message: str,
    *,
    reason: str,
    partial: Response | None = None,
    fallback: bool = True,
) -> ModelError:
    """A transient failure of a call: the same request may succeed when tried again."""
    return ERRORS.transient(route, message, reason=reason, partial=partial, fallback=fallback)


def status_in(error: Any) -> int | None:
    """An HTTP status inside an error object (``status``, ``code``, ``status_code``)."""
    if isinstance(error, Mapping):
        for key in ("status", "code", "status_code"):
            value = error.get(key)
            if type(value) is int and 100 <= value < 600:
                return value
    return None


def backpressure_text(headers: Mapping[str, str], body: Any) -> str:
    """A fair-share proxy's queue shape (seed 004 Backpressure) as a phrase, or ""."""
    lower = {k.lower(): v for k, v in headers.items()}
    info = body.get("error", body) if isinstance(body, dict) else {}
    if not isinstance(info, dict):
        info = {}

    def number(header: str, key: str) -> int:
        for value in (
            lower.get(header),
            info.get(key),
            (body or {}).get(key) if isinstance(body, dict) else None,
        ):
            try:
                if value is not None and int(value) > 0:
                    return int(value)
            except (TypeError, ValueError):
                continue
        return 0

    capacity = number("x-ratelimit-capacity", "capacity")
    in_flight = number("x-ratelimit-inflight", "in_flight")
    waiting = number("x-ratelimit-waiting", "waiting")
    reason = info.get("reason") or (body.get("reason") if isinstance(body, dict) else None)
    parts = []
    if capacity:
        parts.append(f"{in_flight} of {capacity} slots busy")
    elif in_flight:
        parts.append(f"{in_flight} in flight")
    if waiting:
        parts.append(f"{waiting} waiting ahead")
    if isinstance(reason, str) and reason:
        parts.append(f"reason: {reason}")
    return ", ".join(parts)


def class_for_status(
    status: int | None,
    text: str,
    retry_after: float | None,
    reason: str = "",
    error_type: str | None = None,
) -> ErrorClass:
    """The ErrorClass of an HTTP status, the error's ``type`` and the server's message
    (core's table), with a fair-share proxy's queue in a rate limit's reason. An error
    event without a status or a known type in the middle of a stream is the server
    failing: transient."""
    overflow = batch_overflow(text, status)
    if overflow is not None:
        return overflow
    error_class = core_class_for_status(
        status, error_type=error_type, text=text, retry_after=retry_after
    )
    if error_class is None:
        return ErrorClass.transient("the server reported an error mid-stream", status=status)
    if error_class.kind == "rate_limit" and reason:
        return dataclasses.replace(error_class, reason=f"rate limited ({reason})")
    if error_class.kind == "not_found":
        return dataclasses.replace(error_class, reason="model or endpoint not found")
    if error_class.kind == "overloaded":
        return dataclasses.replace(error_class, reason="the server is overloaded")
    return error_class


def batch_overflow(text: str, status: int | None) -> ErrorClass | None:
    """llama.cpp's refusal of an input longer than its physical batch, as the
    context_overflow it is (not a server error worth retrying), naming the batch."""
    found = _BATCH_OVERFLOW.search(text)
    if found is None:
        return None
    tokens, batch = found.group(1), found.group(2)
    limit = f"the server's physical batch of {batch} tokens" if batch else "the server's batch"
    return ErrorClass(
        kind="context_overflow",
        status=status,
        reason=f"an input of {tokens} tokens is longer than {limit}",
    )


def http_error(
    status: int | None,
    headers: Mapping[str, str],
    raw: bytes,
    route: Route,
    partial: Response | None = None,
    *,
    overflow_hint: str | None = None,
) -> HTTPStatusError:
    """The error for a status answer (or an ``error`` event) from the server;
    ``overflow_hint`` replaces chat's advice for a context overflow."""
    body = error_body(raw)  # redacted: some servers echo the key they refused
    message = error_message(body)
    retry_after = retry_after_from_headers(headers)
    queue = backpressure_text(headers, body) if status == 429 else ""
    error_class = class_for_status(status, message, retry_after, queue, error_type(body))
    where = f"{route.provider} answered {status}" if status else f"{route.provider} failed"
    overflow = error_class.kind == "context_overflow"
    hint = (overflow_hint or context_hint(route)) if overflow else ""
    if overflow and _BATCH_OVERFLOW.search(message):
        hint = BATCH_HINT
    text = ERRORS.wording(where, message, detail=queue, hint=hint, retry_after=retry_after)
    return HTTPStatusError(
        text,
        status=status,
        error_class=error_class,
        route=route,
        headers=headers,
        body=body,
        partial=partial,
    )
