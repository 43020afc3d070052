"""How many connections a Client's shared HTTP clients keep: the ``[http]`` settings table.

```toml
[http]
max_connections = 1000           # connections open at once, per shared client and loop
max_keepalive_connections = 100  # idle connections kept for reuse
keepalive_expiry = 5.0           # seconds an idle connection is kept
```

A streaming call holds one connection from its request to its last byte, so a pool of
httpx2's default size (100) makes the 101st concurrent stream wait for a free slot: with
real, slow streams that means minutes. The default here, 1,000, lets that many streams
run at once on one loop. A plugin that keeps a shared httpx2 client builds it with
``httpx2.AsyncClient(limits=http_limits(client.settings), ...)``.

At the limit a call does not wait silently: :func:`pool_notice` is the Notice core
yields first on a stream opened while ``max_connections`` streams are already open on
the client's event loop (the call then waits for a free connection, up to the
provider's pool timeout, and fails as transient if none frees up).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug.contract.settings import Settings
    from modelplug.contract.types import Notice

__all__ = ["SECTION", "HTTPOptions", "OpenStreams", "http_options", "pool_notice"]

SECTION = "http"


@dataclass(frozen=True)
class HTTPOptions:
    """The ``[http]`` table; see the module's documentation."""

    max_connections: int = field(default=1000, metadata={"gt": 0})
    max_keepalive_connections: int = field(default=100, metadata={"gt": -1})
    keepalive_expiry: float = field(default=5.0, metadata={"gt": 0})


def http_options(settings: Settings) -> HTTPOptions:
    """The ``[http]`` table of ``settings``, checked (a wrong value is a ConfigError
    naming the key; an unknown key a warning)."""
    from modelplug.host.options import read_options

    return read_options(settings, SECTION, HTTPOptions)


@dataclass
class OpenStreams:
    """How many streams are open on one client and event loop, and the limit."""

    limit: int
    count: int = 0

    async def aclose(self) -> None:
        """Nothing to close (kept with the loop's HTTP clients by ``Client.async_http``)."""


def pool_notice(open_now: int, limit: int) -> Notice | None:
    """The Notice for a stream opened while ``open_now`` others are open, when that
    reaches ``limit`` (``[http] max_connections``); None below the limit."""
    if open_now < limit:
        return None
    from modelplug.contract.types import Notice

    return Notice(
        kind="http_pool_full",
        message=(
            f"{open_now} streams are already open on this client's event loop, the "
            f"[http] max_connections limit ({limit}): this call waits for a free "
            "connection, and fails as transient if none frees up within the provider's "
            "pool timeout. Raise [http] max_connections to run more at once."
        ),
        details={"open_streams": open_now, "max_connections": limit},
    )
