"""``[gateway]``: read from the operator's user file only (and code), never from a
project file: a repository the gateway happens to run in must not open it up."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from modelplug import Settings

__all__ = ["GatewaySettings", "read_gateway"]


@dataclass(frozen=True)
class GatewaySettings:
    host: str = "127.0.0.1"
    port: int = field(default=4000, metadata={"ge": 0, "le": 65535})
    workers: int = field(default=1, metadata={"ge": 1})
    server: Literal["uvicorn", "granian"] = "uvicorn"
    """The ASGI server: uvicorn, or granian (the ``modelplug-gateway[granian]`` extra)."""
    models: list[str] | None = None
    """The specs, aliases and roles callers may name; None: any the settings resolve."""
    max_request_bytes: int = field(default=8 * 1024 * 1024, metadata={"gt": 0})
    body_timeout: float = field(default=30.0, metadata={"gt": 0})
    """Seconds a caller has to send its whole body: a slow sender is cut off, alone."""
    shutdown_grace: float = field(default=30.0, metadata={"ge": 0})
    """Seconds open streams get to finish after SIGTERM; new requests get 503 meanwhile."""
    keepalive_interval: float = field(default=15.0, metadata={"gt": 0})
    """Seconds of silence on a stream before an SSE comment keeps proxies from closing it."""
    key_env: str = "MODELPLUG_GATEWAY_KEY"
    auth: str = "key"
    """``"key"`` (the operator key), ``"keys"`` (virtual keys) or ``"none"``."""
    key_secret_env: str | None = None
    """The variable holding the secret virtual keys are hashed under (every machine of a
    deployment sets the same); unset: a file in the data directory (one machine)."""
    max_wait: float = field(default=5.0, metadata={"ge": 0})
    """Seconds a call may be held waiting, before an answer has started, in any one wait
    (a retry's, room in a rate limit a 429 closed, a cooled model): a longer one is not
    made, the caller gets 429 with the Retry-After that remains (see :mod:`.waits`)."""


def read_gateway(settings: Settings, overrides: dict[str, Any] | None = None) -> GatewaySettings:
    from modelplug import read_options

    return read_options(
        settings, "gateway", GatewaySettings, project=False, overrides=overrides or None
    )
