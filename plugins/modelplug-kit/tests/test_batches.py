"""gather_batches: the order kept, the failing batch named, and nothing sent after a
failure (a batch waiting for a slot when one fails is never sent)."""

from __future__ import annotations

import asyncio

import pytest
from modelplug_kit import embed_batches, gather_batches


def test_results_keep_the_batches_order_whatever_finishes_first() -> None:
    async def send(start: int, chunk: list[str]) -> list[str]:
        await asyncio.sleep(0.01 if start == 0 else 0)
        return chunk

    batches = embed_batches([f"t{i}" for i in range(5)], 2)
    assert asyncio.run(gather_batches(batches, send, limit=3)) == [
        ["t0", "t1"],
        ["t2", "t3"],
        ["t4"],
    ]


@pytest.mark.parametrize("limit", [1, 2])
def test_no_batch_is_sent_after_one_failed(limit: int) -> None:
    sent: list[int] = []

    async def send(start: int, chunk: list[str]) -> list[str]:
        sent.append(start)
        await asyncio.sleep(0)
        if start == 2:
            raise RuntimeError("rate limited")
        await asyncio.sleep(0.05)
        return chunk

    batches = embed_batches([f"x{i}" for i in range(10)], 2)
    with pytest.raises(RuntimeError, match=r"inputs 2-3 of 10"):
        asyncio.run(gather_batches(batches, send, limit=limit))
    # The second batch fails while the first is sent (limit 1) or still running
    # (limit 2): the slot it frees starts nothing.
    assert sent == [0, 2]
