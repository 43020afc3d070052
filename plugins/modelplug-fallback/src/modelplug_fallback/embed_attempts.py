"""One embedding (or transcription) call's attempts: the same decisions as a stream's,
without output.

An embedding or transcription call shows nothing before it answers, so every retryable
failure may be retried and every failure that allows it may fall back; the decisions (wait, switch,
raise, cool down) are :class:`~modelplug_fallback.attempts.Attempts`' own. There is no
stream to carry notices, so what the caller would have heard (a retry wait, a switch)
is kept in the answer's ``metadata["notices"]``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from inspect import iscoroutine
from typing import TYPE_CHECKING, Any, TypeVar

from modelplug import Embeddings, EmbedRequest, Notice, Route, TranscribeRequest, Transcript

from .attempts import Attempts, _settled

if TYPE_CHECKING:
    from modelplug import CallContext

    from .policy_protocol import AttemptsPolicy

__all__ = ["embed_with_fallbacks", "transcribe_with_fallbacks"]

# What a call without output answers: both are finished the same way (model, route,
# cost, notices in metadata).
Answer = TypeVar("Answer", Embeddings, Transcript)


async def embed_with_fallbacks(
    policy: AttemptsPolicy,
    route: Route,
    request: EmbedRequest,
    client: CallContext,
    waiting: Awaitable[Embeddings] | None,
    first_error: Exception | None = None,
) -> Embeddings:
    """The answer of ``waiting`` (or after ``first_error``, what opening it raised) on
    ``route``, else of the retries and fallbacks the options allow."""
    call = Attempts(policy, policy.options_for(client), route, request, client)
    return await _with_fallbacks(call, Attempts.open_embed, waiting, first_error)


async def transcribe_with_fallbacks(
    policy: AttemptsPolicy,
    route: Route,
    request: TranscribeRequest,
    client: CallContext,
    waiting: Awaitable[Transcript] | None,
    first_error: Exception | None = None,
) -> Transcript:
    """As :func:`embed_with_fallbacks`, for a transcription call."""
    call = Attempts(policy, policy.options_for(client), route, request, client)
    return await _with_fallbacks(call, Attempts.open_transcribe, waiting, first_error)


async def _with_fallbacks(
    call: Attempts,
    open_call: Callable[[Attempts, Route], Awaitable[Awaitable[Answer]]],
    waiting: Awaitable[Answer] | None,
    first_error: Exception | None,
) -> Answer:
    policy, route, client = call.policy, call.route, call.client
    call.started = policy.clock()
    said: list[Notice] = []
    index, current = 0, route
    try:
        if await call.remaining(route.name) > 0:  # failed lately: start elsewhere if we can
            index, current, moved = await call.begin_elsewhere()
            said += moved
            if index:
                _discard(waiting)
                waiting, first_error = None, None
        else:
            call.start_here(False)
        while True:
            try:
                if first_error is not None:
                    opening_error, first_error = first_error, None
                    raise opening_error
                if waiting is None:
                    waiting = await open_call(call, current)
                answer, waiting = waiting, None
                result = await answer
            except Exception as exc:
                step = await call.next_step(exc, current, index)
                said += step.notices
                if step.error is exc:
                    raise
                if step.error is not None:
                    raise step.error from exc
                index, current, _ = await call.take(step, index, current)
                continue
            if call.tried_cooling:
                await _settled(call.store.clear(current.name))
            return _answered(client, route, current, result, said)
    finally:
        _discard(waiting)


def _answered(
    client: CallContext, asked: Route, current: Route, result: Answer, said: list[Notice]
) -> Answer:
    """The answer, named for and priced as the model that gave it."""
    updates: dict[str, Any] = {}
    if current is not asked:
        updates["route"] = current
        if result.model is None:
            updates["model"] = current.name
        if result.cost is None:
            updates["cost"] = client.price(current, result.usage)
    if said:
        updates["metadata"] = {
            **result.metadata,
            "notices": [n.model_dump(exclude={"type"}) for n in said],
        }
    return result.model_copy(update=updates) if updates else result


def _discard(waiting: Awaitable[Any] | None) -> None:
    """Close a coroutine that will never be awaited (no "never awaited" warning)."""
    if iscoroutine(waiting):
        waiting.close()
