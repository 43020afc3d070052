"""The ``[redis]`` settings, the redis-py client per event loop, and what happens when
Redis is down or slow: short timeouts, then fail-open (this process's memory, said in a
Notice) or fail-closed (a clear error), never a hang. Once a command has met the outage,
no call sends Redis anything until a check in the background (a PING every
``retry_interval``) finds it answering again: a call waits one timeout at most, however
many steps it has, and the calls after it none.

Every command goes through redis-py's asyncio API (hiredis parses the replies when it is
installed, which this plugin requires): its pool, its socket timeouts (each connect and
each reply waits ``[redis] timeout`` at most), its Script objects for the Lua scripts
(EVALSHA, loaded again on NOSCRIPT) and its exceptions."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

from modelplug import ModelplugError, read_options, register_secret

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["Connection", "RedisOptions", "StoreUnavailableError", "connection_for"]

T = TypeVar("T")
ENV_URL = "MODELPLUG_REDIS_URL"
MAX_CONNECTIONS = 100  # per process and event loop (redis-py's default size)


@dataclass(frozen=True)
class RedisOptions:
    """``[redis]`` in the user's file (a project file's table is ignored).

    - ``url``: ``redis://host:6379/0`` (``rediss://`` for TLS); or MODELPLUG_REDIS_URL.
    - ``prefix``: the start of every key, so several deployments share one Redis.
    - ``hash_tag``: every key holds ``{hash_tag}``, so on Redis Cluster they all live in
      one slot and a script may touch several (set it per deployment to spread them).
    - ``timeout``: seconds to connect or to answer one command.
    - ``fail``: ``"open"`` goes on with this process's memory (and says so in a
      Notice); ``"closed"`` refuses the call with a clear error.
    - ``retry_interval``: seconds between checks (a PING in the background) while
      Redis is down; no call sends it anything until one finds it answering.
    """

    url: str | None = None
    prefix: str = "modelplug:"
    hash_tag: str = "modelplug"
    timeout: float = 0.5
    fail: Literal["open", "closed"] = "open"
    retry_interval: float = 1.0


class StoreUnavailableError(ModelplugError):
    """Redis could not be reached and ``[redis] fail = "closed"``."""


def shown_url(url: str) -> str:
    """The URL without its user and password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class _Outage:
    """Whether one Redis (by URL) counts as down in this process, until when no check is
    made, and the check under way (a task on some event loop)."""

    __slots__ = ("check", "checks", "down", "until")

    def __init__(self) -> None:
        self.down = False
        self.until = 0.0
        self.check: asyncio.Task[None] | None = None
        self.checks = 0  # the checks made (each a PING), for tests and the benchmark


# By URL: every store of every client in this process that talks to one Redis learns of
# its outage from the first that meets it. Each store made its own Connection, so a
# frozen Redis cost a request one full timeout per store (key lookup, reservation,
# the policy's reservation, settlement) instead of one. And while it stays down no
# call's command is the one that finds out whether it is back (that cost a call whose
# answer took longer than retry_interval a second timeout at its settlement, and every
# call that came just after the interval one): a check in the background does.
_OUTAGES: dict[str, _Outage] = {}


class Connection:
    """One Redis deployment as this client sees it: options, the per-loop client,
    key names, and the outage state shared by the stores."""

    def __init__(self, client: CallContext, options: RedisOptions, url: str) -> None:
        self.client = client
        self.options = options
        self.url = url
        self.where = shown_url(url)
        self._outage = _OUTAGES.setdefault(url, _Outage())
        self.round_trips = 0  # counted for the benchmark
        self._scripts: dict[str, Any] = {}  # a script's text -> redis-py's Script
        password = urlsplit(url).password
        if password:
            register_secret(password)

    def key(self, kind: str, name: str) -> str:
        return f"{self.options.prefix}{{{self.options.hash_tag}}}:{kind}:{name}"

    def redis(self) -> Any:
        """The redis.asyncio client for the running loop (made on first use)."""

        def make() -> Any:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry  # the asyncio one: no warning, no conversion
            from redis.backoff import NoBackoff

            timeout = self.options.timeout
            # A blocking pool: more calls at once than it has connections wait (up to
            # the timeout) for one to come free. redis-py's default pool raises at
            # once instead, which would count a busy process as Redis down.
            pool = aioredis.BlockingConnectionPool.from_url(
                self.url,
                max_connections=MAX_CONNECTIONS,
                timeout=timeout,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
                health_check_interval=0,
            )
            return aioredis.Redis.from_pool(pool)  # closing the client closes the pool

        return self.client.async_http(f"modelplug-redis:{self.url}", make)

    def is_down(self) -> bool:
        """Whether Redis counts as down in this process: from the first command that
        met the outage until a check finds it answering (one starts, in the background
        on the running loop, when ``retry_interval`` has passed since the last)."""
        outage = self._outage
        if not outage.down:
            return False
        if time.monotonic() >= outage.until:
            self._start_check()
        return outage.down

    @property
    def checks(self) -> int:
        """The checks (PINGs) made while Redis was down, by every store of the process."""
        return self._outage.checks

    def _went_down(self) -> None:
        outage = self._outage
        outage.down = True
        outage.until = time.monotonic() + self.options.retry_interval

    def _start_check(self) -> None:
        outage = self._outage
        check = outage.check
        if check is not None and not check.done() and not check.get_loop().is_closed():
            return  # one check at a time
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop to check on: the next call on one starts it
        outage.check = loop.create_task(self._check())

    async def _check(self) -> None:
        outage = self._outage
        outage.checks += 1
        try:
            async with asyncio.timeout(self.options.timeout * 4):
                await self.redis().ping()
        except Exception:
            # Nothing a check meets is anyone's error: Redis is still down, that is all.
            outage.until = time.monotonic() + self.options.retry_interval
        else:
            outage.down = False
        finally:
            outage.check = None

    async def run(self, operation: Callable[[Any], Awaitable[T]]) -> T:
        """Run one operation (one round trip) on redis-py's client, with a hard bound on
        its time.

        :raises StoreUnavailableError: Redis failed, timed out, or failed lately.
        """
        return await self._bounded(lambda: operation(self.redis()))

    async def script(self, text: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run one Lua script as :meth:`run` runs an operation, by redis-py's Script
        (EVALSHA; on NOSCRIPT, after a SCRIPT FLUSH or a restart, it loads the script
        and runs it again)."""
        registered = self._scripts.get(text)
        if registered is None:
            registered = self._scripts[text] = self.redis().register_script(text)
        # The Script keeps its text and SHA; the client passed is the running loop's.
        return await self._bounded(lambda: registered(keys=keys, args=args, client=self.redis()))

    async def _bounded(self, start: Callable[[], Awaitable[T]]) -> T:
        if self.is_down():
            raise StoreUnavailableError(self.problem("failed lately"))
        self.round_trips += 1
        try:
            # redis-py's socket timeouts bound the connect and each reply; this bounds
            # the whole (asyncio.timeout: no task per command, as wait_for would make).
            async with asyncio.timeout(self.options.timeout * 4):
                answer = await start()
        except Exception as exc:
            if isinstance(exc, ModelplugError):
                raise
            import redis.exceptions

            if not isinstance(exc, redis.exceptions.RedisError | OSError | TimeoutError):
                raise
            self._went_down()
            raise StoreUnavailableError(self.problem(what_failed(exc))) from None
        if self._outage.down:
            self._outage.down = False  # sent before the outage was met, and answered
        return answer

    def problem(self, what: str) -> str:
        mode = (
            "counting in this process's memory until it is back"
            if self.options.fail == "open"
            else 'refusing calls while it is down ([redis] fail = "closed")'
        )
        return f"modelplug-redis: Redis at {self.where} is unavailable ({what}); {mode}"


def what_failed(exc: BaseException) -> str:
    """What went wrong, for the message: the kind of failure, never an error reply's
    text (it may quote a key or a script)."""
    import redis.exceptions as errors

    if isinstance(exc, errors.AuthenticationError):
        # WRONGPASS or NOAUTH: the password (never shown) is wrong or missing.
        return "the server refused the login: check the user and password in the URL"
    if isinstance(exc, errors.NoPermissionError):
        return "the server's ACL denies this user a command the stores need (NOPERM)"
    if isinstance(exc, errors.ResponseError):
        return f"the server answered an error: {type(exc).__name__}"
    return type(exc).__name__


def connection_for(client: CallContext) -> Connection | None:
    """A Connection for ``client``'s settings, or None when no URL is set. The policies
    ask once per client; the redis client itself is shared per event loop."""
    settings = client.settings
    options = read_options(settings, "redis", RedisOptions, project=False)
    # project=False: a project file's [redis] never counts (core also drops a project's
    # url with a warning, as it does for every key that could redirect traffic).
    url = options.url or settings.getenv(ENV_URL)
    if not url:
        return None
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        from modelplug import ConfigError

        raise ConfigError("[redis] url: expected redis://, rediss:// or unix://")
    return Connection(client, options, url)
