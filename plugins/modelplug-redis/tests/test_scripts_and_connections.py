"""The stores' commands through redis-py (asyncio, hiredis parsing the replies), against
a real redis-server: scripts run and load themselves again after a SCRIPT FLUSH or a
restart, concurrent calls each get their own reply, a reply that comes after its call
gave up never reaches the next call, a login and a database from the URL, and a server
that goes away fails what waits on it and is connected to again after."""

from __future__ import annotations

import asyncio
import importlib.metadata
from typing import Any

import pytest
import redis as sync_redis
import redis.utils
from modelplug_redis.connection import Connection, StoreUnavailableError, connection_for

ECHO = "return {ARGV[1], #KEYS}"
BOUND = 60.0  # seconds: a hang guard, never reached when things work


def connection_on(make_client: Any, url: str, **options: Any) -> Connection:
    settings = {"url": url, "timeout": 5.0, "retry_interval": 0.0, "fail": "closed", **options}
    connection = connection_for(make_client("modelplug-redis", config={"redis": settings}))
    assert connection is not None
    return connection


async def found_back(connection: Connection) -> None:
    """Until the process's check (a PING in the background) finds Redis answering."""
    async with asyncio.timeout(BOUND):
        while connection.is_down():
            await asyncio.sleep(0.01)


def test_redis_py_parses_with_hiredis_which_the_plugin_requires() -> None:
    requires = importlib.metadata.requires("modelplug-redis") or []
    assert any(r.split(";")[0].strip().startswith("hiredis") for r in requires), requires
    assert redis.utils.HIREDIS_AVAILABLE


def test_a_script_runs_and_loads_itself_after_a_flush(make_client: Any, redis_server: Any) -> None:
    connection = connection_on(make_client, redis_server.url)

    async def run() -> list[Any]:
        first = await connection.script(ECHO, ["a", "b"], ["one"])
        sync_redis.Redis.from_url(redis_server.url).script_flush()
        second = await connection.script(ECHO, ["a"], ["two"])
        await connection.client.aclose()
        return [first, second]

    assert asyncio.run(run()) == [[b"one", 2], [b"two", 1]]


def test_a_script_loads_itself_on_a_restarted_server_without_an_outage(
    make_client: Any, redis_server: Any
) -> None:
    # The pooled connection died with the server: redis-py finds it dead when it hands
    # it out and connects anew, so the first call after the restart is answered.
    connection = connection_on(make_client, redis_server.url)

    async def run() -> list[Any]:
        before = await connection.script(ECHO, [], ["before"])
        redis_server.kill()
        await asyncio.sleep(0.2)  # the loop reads the connection's end (any busy loop would)
        redis_server.start()
        after = await connection.script(ECHO, [], ["after"])
        await connection.client.aclose()
        return [before, after, connection.is_down()]

    assert asyncio.run(run()) == [[b"before", 0], [b"after", 0], False]


def test_two_hundred_calls_at_once_each_get_their_own_reply(
    make_client: Any, redis_server: Any
) -> None:
    connection = connection_on(make_client, redis_server.url)

    async def run() -> list[Any]:
        replies = await asyncio.gather(*(connection.script(ECHO, [], [i]) for i in range(200)))
        await connection.client.aclose()
        return replies

    assert asyncio.run(run()) == [[str(i).encode(), 0] for i in range(200)]


def test_a_call_given_up_on_never_hands_its_reply_to_the_next(
    make_client: Any, redis_server: Any
) -> None:
    connection = connection_on(make_client, redis_server.url)

    async def run() -> Any:
        await connection.script(ECHO, [], ["warm"])  # one connection in the pool
        slow = connection.run(lambda r: r.blpop(["nothing-here"], 0.3))  # nil after 0.3 s
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(slow, 0.05)
        after = await connection.script(ECHO, [], ["mine"])
        await asyncio.sleep(0.4)  # the late nil has come by now, wherever it went
        later = await connection.script(ECHO, [], ["mine too"])
        await connection.client.aclose()
        return [after, later]

    assert asyncio.run(run()) == [[b"mine", 0], [b"mine too", 0]]


def test_a_reply_later_than_the_timeout_is_redis_unavailable_and_never_read_by_the_next(
    make_client: Any, redis_server: Any
) -> None:
    # A timeout a loaded machine keeps for the other commands; the BLPOP outlasts it.
    connection = connection_on(make_client, redis_server.url, timeout=1.0)

    async def run() -> tuple[str, Any]:
        await connection.script(ECHO, [], ["warm"])
        with pytest.raises(StoreUnavailableError) as raised:
            await connection.run(lambda r: r.blpop(["nothing-here"], 2.5))
        await asyncio.sleep(1.6)  # its nil has come
        await found_back(connection)
        after = await connection.script(ECHO, [], ["mine"])
        await connection.client.aclose()
        return str(raised.value), after

    message, after = asyncio.run(run())
    assert "is unavailable (TimeoutError)" in message
    assert after == [b"mine", 0]


def test_an_error_reply_is_named_by_its_kind_never_its_text(
    make_client: Any, redis_server: Any
) -> None:
    connection = connection_on(make_client, redis_server.url)

    async def run() -> tuple[str, Any]:
        with pytest.raises(StoreUnavailableError) as raised:
            await connection.script("return redis.error_reply('ERR tenant-42 secret')", [], [])
        await found_back(connection)
        fine = await connection.script(ECHO, [], ["fine"])
        await connection.client.aclose()
        return str(raised.value), fine

    message, fine = asyncio.run(run())
    assert "unavailable (the server answered an error: ResponseError)" in message
    assert "tenant-42" not in message
    assert fine == [b"fine", 0]


def test_the_database_in_the_url_is_the_one_written(make_client: Any, redis_server: Any) -> None:
    url = f"redis://127.0.0.1:{redis_server.port}/3"
    connection = connection_on(make_client, url)

    async def run() -> None:
        await connection.script("return redis.call('SET', KEYS[1], ARGV[1])", ["k"], ["v3"])
        await connection.client.aclose()

    asyncio.run(run())
    assert sync_redis.Redis.from_url(url).get("k") == b"v3"
    assert sync_redis.Redis.from_url(redis_server.url).get("k") is None


def test_a_password_in_the_url_logs_in(make_client: Any, locked_redis_server: Any) -> None:
    url = f"redis://:secret-pw@127.0.0.1:{locked_redis_server.port}/0"
    connection = connection_on(make_client, url)

    async def run() -> Any:
        answer = await connection.script(ECHO, [], ["in"])
        await connection.client.aclose()
        return answer

    assert asyncio.run(run()) == [b"in", 0]


def test_a_wrong_password_is_redis_unavailable_and_never_shown(
    locked_redis_server: Any, make_client: Any
) -> None:
    url = f"redis://:wrong-pw-123@127.0.0.1:{locked_redis_server.port}/0"
    connection = connection_on(make_client, url)

    async def run() -> str:
        with pytest.raises(StoreUnavailableError) as raised:
            await connection.script(ECHO, [], ["x"])
        await connection.client.aclose()
        return str(raised.value)

    message = asyncio.run(run())
    assert "unavailable (the server refused the login: check the user and password" in message
    assert "wrong-pw-123" not in message


def test_a_server_that_goes_away_fails_the_waiting_call_and_is_connected_to_after(
    make_client: Any, redis_server: Any
) -> None:
    connection = connection_on(make_client, redis_server.url)

    async def run() -> tuple[Any, str, str, Any]:
        before = await connection.script(ECHO, [], ["before"])
        waiting = asyncio.ensure_future(
            connection.run(lambda r: r.blpop(["nothing-here"], 4))  # under the timeout
        )
        await asyncio.sleep(0.2)  # sent, and waiting for its reply
        redis_server.kill()
        with pytest.raises(StoreUnavailableError) as failed:
            await asyncio.wait_for(waiting, BOUND)
        with pytest.raises(StoreUnavailableError) as refused:
            await connection.script(ECHO, [], ["while down"])
        redis_server.start()
        await found_back(connection)
        after = await connection.script(ECHO, [], ["after"])
        await connection.client.aclose()
        return before, str(failed.value), str(refused.value), after

    before, failed, refused, after = asyncio.run(run())
    assert before == [b"before", 0] and after == [b"after", 0]
    assert "is unavailable (ConnectionError)" in failed
    assert "is unavailable (failed lately)" in refused  # nothing sent while it is down
