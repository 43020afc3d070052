"""No resource left behind: the sync API's per-thread loops and pooled connections are
released by ``Client.close()`` and when their thread ends, so however many threads come
and go the descriptors come back; many concurrent streams do not cross, and many
sequential calls leave descriptors and memory where they started.

Counted in /proc/self/fd (Linux), through modelplug-openai-compat on the loopback
WireServer: real sockets, real pools. The server runs in this process and closes its
end of a connection a moment after the client closes its own, so the count leaves out
the sockets bound to the server's port: what is counted is the client's.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import modelplug
import pytest
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")

PLUGIN = "modelplug-openai-compat"


def server_socket_inodes(port: int) -> set[str]:
    """Inodes of the sockets whose local port is ``port`` (/proc/net/tcp, hex ports)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def open_descriptors(server: WireServer) -> int:
    """This process's open descriptors, less the server's own sockets."""
    gc.collect()
    names = os.listdir("/proc/self/fd")
    skip = {f"socket:[{inode}]" for inode in server_socket_inodes(server.port)}
    count = 0
    for name in names:
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
        count += target not in skip
    return count


def answer(text: str, pieces: int = 1) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"choices": [{"delta": {"content": f"{text}.{n} "}, "finish_reason": None}]}
        for n in range(pieces)
    ]
    events.append({"choices": [{"delta": {}, "finish_reason": "stop"}]})
    return events


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


@pytest.fixture
def wire_client(make_client: Callable[..., Client], server: WireServer) -> Client:
    config = {"providers": {"wire": {"type": "openai-compatible", "base_url": server.url + "/v1"}}}
    client: Client = make_client(PLUGIN, entry_points=True, config=config, environ={})
    return client


def run_threads(count: int, work: Callable[[], None]) -> list[BaseException]:
    failures: list[BaseException] = []

    def guarded() -> None:
        try:
            work()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=guarded) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def warm_up(client: Client, server: WireServer) -> None:
    """One call on a throwaway thread, so imports and caches are in place."""
    server.add_sse(answer("warm"), done=True)
    assert run_threads(1, lambda: client.complete("wire/m", "hi") and None) == []


def test_threads_that_end_release_their_own_loops_and_connections(
    wire_client: Client, server: WireServer
) -> None:
    warm_up(wire_client, server)
    before = open_descriptors(server)
    for _ in range(30):
        server.add_sse(answer("ok"), done=True)
    failures = run_threads(30, lambda: wire_client.complete("wire/m", "hi") and None)
    assert failures == []
    assert open_descriptors(server) <= before


def test_close_releases_every_threads_loop_and_connections(
    wire_client: Client, server: WireServer
) -> None:
    warm_up(wire_client, server)
    before = open_descriptors(server)
    called = threading.Barrier(9)
    closed = threading.Event()

    def call_and_stay() -> None:
        wire_client.complete("wire/m", "hi")
        called.wait()
        closed.wait()  # the thread is still alive when close() runs

    for _ in range(8):
        server.add_sse(answer("ok"), done=True)
    threads = [threading.Thread(target=call_and_stay) for _ in range(8)]
    for thread in threads:
        thread.start()
    called.wait()
    during = open_descriptors(server)
    wire_client.close()
    after = open_descriptors(server)
    closed.set()
    for thread in threads:
        thread.join()
    assert during >= before + 8  # each live thread held a loop and a connection
    assert after <= before


def test_a_closed_client_still_works_on_every_thread(
    wire_client: Client, server: WireServer
) -> None:
    server.add_sse(answer("one"), done=True)
    assert wire_client.complete("wire/m", "hi").text == "one.0 "
    wire_client.close()
    server.add_sse(answer("two"), done=True)
    assert wire_client.complete("wire/m", "hi").text == "two.0 "


def test_the_default_client_stays_bounded_however_many_threads_come_and_go(
    modelplug_config_dir: Path, server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.wire]\ntype = "openai-compatible"\nbase_url = "{server.url}/v1"\n'
    )
    monkeypatch.setenv("MODELPLUG_PLUGINS", "openai-compat")
    monkeypatch.setattr(modelplug, "_default", None)
    try:
        server.add_sse(answer("warm"), done=True)
        assert run_threads(1, lambda: modelplug.complete("wire/m", "hi") and None) == []
        before = open_descriptors(server)
        for _ in range(40):
            server.add_sse(answer("ok"), done=True)
        texts: list[str] = []
        failures = run_threads(40, lambda: texts.append(modelplug.complete("wire/m", "hi").text))
        assert failures == [] and texts == ["ok.0 "] * 40
        assert open_descriptors(server) <= before
    finally:
        modelplug.default_client().close()


def test_200_concurrent_async_streams_do_not_cross(wire_client: Client, server: WireServer) -> None:
    for n in range(200):
        server.add_sse(answer(f"r{n}", pieces=3), done=True)

    async def one() -> str:
        parts: list[str] = []
        async for event in wire_client.astream("wire/m", "hi"):
            if isinstance(event, modelplug.TextDelta):
                parts.append(event.text)
            elif isinstance(event, modelplug.Done):
                assert event.response.text == "".join(parts)
        return "".join(parts)

    async def all_of_them() -> list[str]:
        try:
            return list(await asyncio.gather(*(one() for _ in range(200))))
        finally:
            await wire_client.aclose()

    before = open_descriptors(server)
    texts = asyncio.run(all_of_them())
    # Every stream got one whole answer, its own, and every answer went to one stream.
    owners = {text.split(".")[0] for text in texts}
    assert owners == {f"r{n}" for n in range(200)}
    for text in texts:
        owner = text.split(".")[0]
        assert text == f"{owner}.0 {owner}.1 {owner}.2 "
    assert open_descriptors(server) <= before


def test_2000_sequential_calls_leave_descriptors_and_memory_where_they_started(
    wire_client: Client, server: WireServer
) -> None:
    async def calls(count: int, start: int) -> list[str]:
        texts = []
        for n in range(start, start + count):
            server.add_sse(answer(f"c{n}"), done=True)
            texts.append((await wire_client.acomplete("wire/m", "hi")).text)
            server.requests.clear()  # the server's own record of what it was sent
        return texts

    async def run() -> tuple[int, int, int, int]:
        assert await calls(50, 0) == [f"c{n}.0 " for n in range(50)]  # warm-up
        descriptors, objects = open_descriptors(server), len(gc.get_objects())
        texts = await calls(2000, 50)
        assert texts == [f"c{n}.0 " for n in range(50, 2050)]
        return descriptors, objects, open_descriptors(server), len(gc.get_objects())

    before_fds, before_objects, after_fds, after_objects = asyncio.run(run())
    assert after_fds <= before_fds
    # A leak of one object per call would be 2,000 more.
    assert after_objects - before_objects < 500
