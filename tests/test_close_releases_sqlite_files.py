"""Closing a Client releases what plugins hold open for it outside an event loop
(``modelplug_close``): after ``aclose()`` or ``close()`` this process holds no descriptor
of the limits' counters file nor of the fallback's cooldowns file, as
``/proc/self/fd`` shows; a call after that opens them again, and closing again closes
them again."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, ClassVar

import pytest
from modelplug import Client, hookimpl
from modelplug.testing import FakeModel, text

FILES = ("limits.sqlite3", "cooldowns.sqlite3")
# a/m answers 429 and cools down for an hour (marked in the cooldowns file); the call
# falls back to b/m, whose requests are counted in the limits file.
CONFIG: dict[str, Any] = {
    "fallbacks": {"a/m": ["b/m"]},
    "fallback": {"retries": 0, "cooldown_rate_limit": 3600},
    "limits": {"b/m": {"rpm": 1000, "window": 3600}},
}

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


class RateLimited(Exception):
    """What an SDK's 429 looks like to core's generic classifier."""

    status_code = 429
    headers: ClassVar[dict[str, str]] = {}


def held(data_dir: Path) -> list[str]:
    """The files of ``data_dir`` this process has a descriptor of (``-wal`` and ``-shm``
    included)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, gone already
        if target.startswith(f"{data_dir}{os.sep}"):
            found.append(Path(target).name)
    return sorted(found)


def policies_client(make_client: Any) -> tuple[Client, FakeModel]:
    first = FakeModel([RateLimited("Too Many Requests")], provider="a")
    second = FakeModel([text("from b")] * 3, provider="b")
    client = make_client("modelplug-limits", "modelplug-fallback", first, second, config=CONFIG)
    return client, second


class Recorder:
    """A plugin that records the clients it was asked to close."""

    def __init__(self) -> None:
        self.closed: list[Client] = []

    @hookimpl
    def modelplug_close(self, client: Client) -> None:
        self.closed.append(client)


def test_modelplug_close(make_client: Any) -> None:
    recorder = Recorder()
    client = make_client(recorder, FakeModel([text("one"), text("two")]))

    async def call_and_close() -> str:
        answer = await client.acomplete("fake/m", "hi")
        await client.aclose()
        return answer.text

    assert asyncio.run(call_and_close()) == "one"
    assert recorder.closed == [client]
    # The client calls again after aclose, and close() asks again: each must be harmless.
    assert client.complete("fake/m", "hi").text == "two"
    client.close()
    assert recorder.closed == [client, client]


@needs_proc
def test_aclose_leaves_no_descriptor_of_the_sqlite_files(make_client: Any) -> None:
    client, second = policies_client(make_client)
    data_dir = client.settings.data_dir()

    async def call() -> tuple[str, list[str], list[str]]:
        answer = await client.acomplete("a/m", "hi")
        during = held(data_dir)
        await client.aclose()
        return answer.text, during, held(data_dir)

    answer, during, after = asyncio.run(call())
    assert answer == "from b" and len(second.requests) == 1  # it fell back, counted
    assert {Path(name).name.split("-")[0] for name in during} == set(FILES)
    assert after == []


@needs_proc
def test_a_call_after_closing_opens_them_again_and_close_closes_them_again(
    make_client: Any,
) -> None:
    client, second = policies_client(make_client)
    data_dir = client.settings.data_dir()
    assert client.complete("a/m", "hi").text == "from b"
    client.close()
    assert held(data_dir) == []

    # a/m cools down (the file says so): straight to b/m, counted in the limits file.
    assert client.complete("a/m", "again").text == "from b"
    assert len(second.requests) == 2
    assert "limits.sqlite3" in held(data_dir)
    with client:
        pass
    assert held(data_dir) == []
