"""Splitting an embedding call into a provider's batches and running them.

Every provider caps the inputs of one request (OpenAI 2,048, Gemini 100, a llama.cpp
server its batch size...). A plugin splits the list with :func:`embed_batches`, sends
one request per batch through :func:`gather_batches`, which runs at most ``limit`` at
once and puts the vectors back in the inputs' order; a batch that fails fails the call,
its error saying which inputs it held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

__all__ = ["embed_batches", "gather_batches"]

T = TypeVar("T")


def embed_batches(inputs: Sequence[str], size: int) -> list[tuple[int, list[str]]]:
    """``inputs`` in runs of at most ``size``, each with the index of its first input."""
    if size < 1:
        raise ValueError(f"a batch holds at least one input, not {size}")
    return [(start, list(inputs[start : start + size])) for start in range(0, len(inputs), size)]


async def gather_batches(
    batches: Sequence[tuple[int, list[str]]],
    send: Callable[[int, list[str]], Awaitable[T]],
    *,
    limit: int = 4,
) -> list[T]:
    """``send(start, chunk)`` for every batch, at most ``limit`` at a time, the results
    in the batches' order.

    The first failure cancels the batches still running and is raised with a note
    (``inputs 100-199 of 250``) naming the inputs of its batch, so a caller knows what
    to resend; its class and attributes are the provider's own.
    """
    total = sum(len(chunk) for _, chunk in batches)
    room = asyncio.Semaphore(max(1, limit))
    failed: list[Exception] = []

    async def one(start: int, chunk: list[str]) -> T:
        async with room:
            # A failure frees its slot before the call's cancellation reaches the
            # batches still waiting: one woken by that slot must not send (a request
            # billed for an answer nobody reads).
            if failed:
                raise asyncio.CancelledError
            try:
                return await send(start, chunk)
            except Exception as exc:
                failed.append(exc)
                _name_inputs(exc, start, len(chunk), total)
                raise

    if len(batches) == 1:
        return [await one(*batches[0])]
    tasks = [asyncio.ensure_future(one(start, chunk)) for start, chunk in batches]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        # Let the cancelled batches close their connections before the error goes on.
        await asyncio.gather(*tasks, return_exceptions=True)


def _name_inputs(error: Exception, start: int, count: int, total: int) -> None:
    where = (
        f"inputs {start}-{start + count - 1} of {total}"
        if count > 1
        else f"input {start} of {total}"
    )
    if error.args and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]} ({where})", *error.args[1:])
    else:
        error.add_note(where)
    error.embed_inputs = range(start, start + count)  # type: ignore[attr-defined]
