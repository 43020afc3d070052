"""Running the app on uvicorn: one worker in this process, or several (each builds its
own app from the same settings); SIGTERM drains: the listener closes, ``/ready`` and new
calls on open connections get 503, open streams finish within ``shutdown_grace``."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType

    import uvicorn

    from .app import Gateway
    from .settings import GatewaySettings

__all__ = ["DrainingServer", "serve", "uvicorn_config", "worker_app"]

# What the parent tells its worker processes: the settings it decided (CLI included).
_OPTIONS_ENV = "MODELPLUG_GATEWAY_WORKER_OPTIONS"


def uvicorn_config(app: Any, options: GatewaySettings, **more: Any) -> uvicorn.Config:
    import uvicorn

    from .corked import PROTOCOL

    more.setdefault("http", PROTOCOL)
    return uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        timeout_graceful_shutdown=math.ceil(options.shutdown_grace),
        # A call's own log line belongs to the request log, not one per request here.
        access_log=False,
        lifespan="on",
        **more,
    )


def _make_server_class() -> type[uvicorn.Server]:
    import uvicorn

    class _Server(uvicorn.Server):
        gateway: Gateway | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.gateway is not None:
                self.gateway.draining = True
            super().handle_exit(sig, frame)

    return _Server


def DrainingServer(config: uvicorn.Config, gateway: Gateway) -> uvicorn.Server:
    """A uvicorn Server whose exit signal marks ``gateway`` as draining first."""
    server = _make_server_class()(config)
    server.gateway = gateway  # type: ignore[attr-defined]
    return server


def serve(options: GatewaySettings, *, no_auth: bool = False) -> int:
    import sys

    import uvicorn
    from modelplug.plugin import ConfigError

    from .app import create_app
    from .corked import PROTOCOL
    from .request_log import log_on

    log_on()
    if options.workers > 1:
        os.environ[_OPTIONS_ENV] = json.dumps({"options": asdict(options), "no_auth": no_auth})
        try:
            worker_app()  # refuses a missing key here, once, not in every worker
        except ConfigError as exc:
            print(f"modelplug gateway: {exc}", file=sys.stderr)
            return 2
        uvicorn.run(
            "modelplug_gateway.server:worker_app",
            factory=True,
            host=options.host,
            port=options.port,
            workers=options.workers,
            timeout_graceful_shutdown=math.ceil(options.shutdown_grace),
            access_log=False,
            http=PROTOCOL,
        )
        return 0
    try:
        app = create_app(options=options, no_auth=no_auth)
    except ConfigError as exc:
        print(f"modelplug gateway: {exc}", file=sys.stderr)
        return 2
    server = DrainingServer(uvicorn_config(app, options), app)
    server.run()
    return 0


def worker_app() -> Gateway:
    """A worker process's app, from the settings its parent decided."""
    from .app import create_app
    from .request_log import log_on
    from .settings import GatewaySettings

    log_on()
    raw = json.loads(os.environ[_OPTIONS_ENV])
    options = GatewaySettings(**raw["options"])
    return create_app(options=options, no_auth=raw["no_auth"])
