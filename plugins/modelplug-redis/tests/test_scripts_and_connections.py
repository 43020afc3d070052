"""The counter scripts' own pipelined link, against a real redis-server: scripts run
and load themselves, concurrent calls each get their own reply, a late reply never
reaches the next call, a login and a database from the URL, and a server that goes
away fails what waits on it and is reconnected to after."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis as sync_redis
from modelplug_redis.connection import StoreUnavailableError, connection_for
from modelplug_redis.resp import ReplyError
from modelplug_redis.script_link import Scripts, open_link

ECHO = "return {ARGV[1], #KEYS}"


def test_a_script_runs_and_loads_itself_after_a_flush(redis_server: Any) -> None:
    async def run() -> list[Any]:
        scripts = Scripts(redis_server.url)
        try:
            first = await scripts.run(ECHO, ["a", "b"], ["one"])
            sync_redis.Redis.from_url(redis_server.url).script_flush()
            second = await scripts.run(ECHO, ["a"], ["two"])
            return [first, second]
        finally:
            await scripts.aclose()

    assert asyncio.run(run()) == [[b"one", 2], [b"two", 1]]


def test_two_hundred_calls_at_once_each_get_their_own_reply(redis_server: Any) -> None:
    async def run() -> list[Any]:
        scripts = Scripts(redis_server.url)
        try:
            return await asyncio.gather(*(scripts.run(ECHO, [], [i]) for i in range(200)))
        finally:
            await scripts.aclose()

    assert asyncio.run(run()) == [[str(i).encode(), 0] for i in range(200)]


def test_a_call_given_up_on_never_hands_its_reply_to_the_next(redis_server: Any) -> None:
    async def run() -> Any:
        link = await open_link(redis_server.url)
        try:
            slow = link.call("BLPOP", "nothing-here", "0.3")  # nil after 0.3 s
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(slow, 0.05)
            return await link.call("PING")
        finally:
            link.close()

    assert asyncio.run(run()) == b"PONG"


def test_an_error_reply_is_raised_to_its_call_only(redis_server: Any) -> None:
    async def run() -> list[Any]:
        link = await open_link(redis_server.url)
        try:
            wrong = link.call("EVAL", "return redis.call('NOSUCHCOMMAND')", 0)
            fine = link.call("PING")
            with pytest.raises(ReplyError) as raised:
                await wrong
            return [raised.value.code, await fine]
        finally:
            link.close()

    assert asyncio.run(run()) == ["ERR", b"PONG"]


def test_the_database_in_the_url_is_the_one_written(redis_server: Any) -> None:
    url = f"redis://127.0.0.1:{redis_server.port}/3"

    async def run() -> None:
        scripts = Scripts(url)
        try:
            await scripts.run("return redis.call('SET', KEYS[1], ARGV[1])", ["k"], ["v3"])
        finally:
            await scripts.aclose()

    asyncio.run(run())
    assert sync_redis.Redis.from_url(url).get("k") == b"v3"
    assert sync_redis.Redis.from_url(redis_server.url).get("k") is None


def test_a_password_in_the_url_logs_in(locked_redis_server: Any) -> None:
    async def run() -> Any:
        scripts = Scripts(f"redis://:secret-pw@127.0.0.1:{locked_redis_server.port}/0")
        try:
            return await scripts.run(ECHO, [], ["in"])
        finally:
            await scripts.aclose()

    assert asyncio.run(run()) == [b"in", 0]


def test_a_wrong_password_is_redis_unavailable_and_never_shown(
    locked_redis_server: Any, make_client: Any
) -> None:
    url = f"redis://:wrong-pw-123@127.0.0.1:{locked_redis_server.port}/0"
    client = make_client("modelplug-redis", config={"redis": {"url": url, "timeout": 5.0}})
    connection = connection_for(client)
    assert connection is not None

    async def run() -> str:
        with pytest.raises(StoreUnavailableError) as raised:
            await connection.script(ECHO, [], ["x"])
        await client.aclose()
        return str(raised.value)

    message = asyncio.run(run())
    assert "unavailable (the server answered WRONGPASS)" in message
    assert "wrong-pw-123" not in message


def test_a_server_that_goes_away_fails_the_waiting_call_and_is_reconnected_to_after(
    redis_server: Any,
) -> None:
    async def run() -> list[Any]:
        scripts = Scripts(redis_server.url)
        try:
            before = await scripts.run(ECHO, [], ["before"])
            link = await scripts.link()
            waiting = link.call("BLPOP", "nothing-here", "5")
            redis_server.kill()
            with pytest.raises(ConnectionError):
                await asyncio.wait_for(waiting, 10)
            with pytest.raises(ConnectionError):
                await scripts.run(ECHO, [], ["while down"])
            redis_server.start()
            after = await scripts.run(ECHO, [], ["after"])
            return [before, after]
        finally:
            await scripts.aclose()

    assert asyncio.run(run()) == [[b"before", 0], [b"after", 0]]


def test_only_plain_tcp_urls_get_the_link(make_client: Any) -> None:
    def scripts_for(url: str) -> Any:
        client = make_client("modelplug-redis", config={"redis": {"url": url}})
        connection = connection_for(client)
        assert connection is not None

        async def ask() -> Any:
            found = connection.scripts()
            await client.aclose()
            return found

        return asyncio.run(ask())

    assert isinstance(scripts_for("redis://127.0.0.1:6399/0"), Scripts)
    assert scripts_for("rediss://127.0.0.1:6399/0") is None
    assert scripts_for("unix:///tmp/redis.sock") is None


def test_a_caller_that_gives_up_while_connecting_leaves_the_link_to_the_next() -> None:
    # A server that answers AUTH late: the first caller's timeout ends its wait, not the
    # connect, and the next caller gets that same connection (one accepted, not two).
    async def run() -> tuple[Any, int]:
        accepted = 0

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal accepted
            accepted += 1
            await reader.readuntil(b"secret\r\n")  # AUTH's last argument
            await asyncio.sleep(0.3)
            writer.write(b"+OK\r\n")
            await reader.readuntil(b"PING\r\n")
            writer.write(b"+PONG\r\n")
            await reader.read()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        scripts = Scripts(f"redis://:secret@127.0.0.1:{port}/0")
        try:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(scripts.link(), 0.05)
            await asyncio.sleep(0.5)  # the connect ends with nobody waiting for it
            link = await scripts.link()
            return await link.call("PING"), accepted
        finally:
            await scripts.aclose()
            server.close()

    assert asyncio.run(run()) == (b"PONG", 1)
