"""Running the app, a plain ASGI app, on uvicorn (the default: uvloop and httptools where
they are installed) or on granian (``[gateway] server = "granian"``, the
``modelplug-gateway[granian]`` extra), through each server's public API: one worker in
this process, or several (each builds its own app from the same settings).

SIGTERM drains: the listener closes, ``/ready`` and new calls on open connections get
503, open streams finish within ``shutdown_grace``."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import sys
import threading
from dataclasses import asdict
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType

    import uvicorn
    from granian.server.embed import Server as GranianServer

    from .app import Gateway
    from .settings import GatewaySettings

__all__ = [
    "SERVERS",
    "granian_server",
    "require_granian",
    "run_granian",
    "serve",
    "uvicorn_server",
    "worker_app",
]

SERVERS = ("uvicorn", "granian")
"""The ASGI servers the gateway runs on (``[gateway] server``, ``--server``)."""

# What the parent tells its worker processes: the settings it decided (CLI included).
_OPTIONS_ENV = "MODELPLUG_GATEWAY_WORKER_OPTIONS"
_WORKER_TARGET = "modelplug_gateway.server:worker_app"
_EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def require_granian() -> None:
    """ConfigError naming the extra when granian is not installed."""
    from modelplug import ConfigError

    try:
        import granian  # noqa: F401
    except ImportError:
        raise ConfigError(
            "the granian server is not installed: pip install 'modelplug-gateway[granian]' "
            "(from a checkout: pip install granian), or run on uvicorn, the default: drop "
            "--server granian / [gateway] server"
        ) from None


def uvicorn_server(app: Any, options: GatewaySettings, **config: Any) -> uvicorn.Server:
    """A uvicorn Server for ``app`` on ``options``' address."""
    import uvicorn

    return uvicorn.Server(
        uvicorn.Config(
            app,
            host=options.host,
            port=options.port,
            # uvloop and httptools when installed (they are the gateway's dependencies
            # where they build), asyncio and h11 otherwise.
            loop="auto",
            http="auto",
            timeout_graceful_shutdown=math.ceil(options.shutdown_grace),
            # A call's own log line belongs to the request log, not one per request here.
            access_log=False,
            lifespan="on",
            **config,
        )
    )


def granian_server(app: Any, options: GatewaySettings, **config: Any) -> GranianServer:
    """granian's embeddable server for ``app`` (one worker, on the running event loop)
    on ``options``' address."""
    from granian.server.embed import Server

    return Server(
        app,
        address=options.host,
        port=options.port,
        interface="asgi",  # type: ignore[arg-type]
        websockets=False,
        log_access=False,
        **config,
    )


async def run_granian(server: GranianServer, gateway: Gateway, grace: float) -> None:
    """Serve until SIGINT or SIGTERM, then drain: the gateway turns new calls away,
    granian closes its listener and lets open calls finish, for ``grace`` seconds at
    most (a second signal: at once)."""
    loop = asyncio.get_running_loop()
    serving = asyncio.ensure_future(server.serve())

    def exit_asked() -> None:
        if gateway.draining:
            serving.cancel()
            return
        gateway.draining = True
        server.stop()  # type: ignore[no-untyped-call]
        loop.call_later(grace, serving.cancel)

    for number in _EXIT_SIGNALS:
        loop.add_signal_handler(number, exit_asked)
    try:
        await asyncio.wait({serving})
    finally:
        for number in _EXIT_SIGNALS:
            loop.remove_signal_handler(number)
    if not serving.cancelled():
        serving.result()  # what stopped it (a port in use), raised here


def drain_on_exit_signals(gateway: Gateway) -> None:
    """On uvicorn, at the lifespan's startup (its own SIGINT and SIGTERM handlers are in
    place by then): the gateway turns new calls away from the moment uvicorn starts to
    shut down, then uvicorn's handler runs as it would have. uvicorn puts back the
    handlers it found when it ends, so these go with it."""
    if threading.current_thread() is not threading.main_thread():
        return  # uvicorn handles no signal there either
    for number in _EXIT_SIGNALS:
        previous = signal.getsignal(number)
        if not callable(previous):
            continue

        def exit_asked(signum: int, frame: FrameType | None, previous: Any = previous) -> None:
            gateway.draining = True
            previous(signum, frame)

        signal.signal(number, exit_asked)


def serve(options: GatewaySettings, *, no_auth: bool = False) -> int:
    from modelplug import ConfigError

    from .app import create_app
    from .request_log import log_on

    try:
        if options.server == "granian":
            require_granian()
        log_on()
        if options.workers > 1:
            os.environ[_OPTIONS_ENV] = json.dumps({"options": asdict(options), "no_auth": no_auth})
            worker_app()  # refuses a missing key here, once, not in every worker
        else:
            app = create_app(options=options, no_auth=no_auth)
    except ConfigError as exc:
        print(f"modelplug gateway: {exc}", file=sys.stderr)
        return 2
    if options.workers > 1:
        return _serve_workers(options)
    if options.server == "granian":
        return _serve_on_granian(app, options)
    app.on_startup.append(partial(drain_on_exit_signals, app))
    uvicorn_server(app, options).run()
    return 0


def _serve_workers(options: GatewaySettings) -> int:
    """Several worker processes, each importing :func:`worker_app` (the server's own
    process management)."""
    grace = math.ceil(options.shutdown_grace)
    if options.server == "granian":
        from granian import Granian

        Granian(
            _WORKER_TARGET,
            factory=True,
            address=options.host,
            port=options.port,
            workers=options.workers,
            interface="asgi",  # type: ignore[arg-type]
            websockets=False,
            log_access=False,
            workers_kill_timeout=grace or None,
        ).serve()
        return 0
    import uvicorn

    uvicorn.run(
        _WORKER_TARGET,
        factory=True,
        host=options.host,
        port=options.port,
        workers=options.workers,
        loop="auto",
        http="auto",
        timeout_graceful_shutdown=grace,
        access_log=False,
    )
    return 0


def _serve_on_granian(app: Gateway, options: GatewaySettings) -> int:
    server = granian_server(app, options)
    try:
        with asyncio.Runner(loop_factory=_uvloop_factory()) as runner:
            runner.run(run_granian(server, app, options.shutdown_grace))
    except (OSError, RuntimeError) as exc:
        # granian's own error for a port in use is a RuntimeError whose text goes on
        # with a Rust backtrace: its first line is what the operator needs.
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(
            f"modelplug gateway: granian stopped on {options.host}:{options.port}: {reason}",
            file=sys.stderr,
        )
        return 1
    return 0


def _uvloop_factory() -> Any:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def worker_app() -> Gateway:
    """A worker process's app, from the settings its parent decided."""
    from .app import create_app
    from .request_log import log_on
    from .settings import GatewaySettings

    log_on()
    raw = json.loads(os.environ[_OPTIONS_ENV])
    options = GatewaySettings(**raw["options"])
    app = create_app(options=options, no_auth=raw["no_auth"])
    if options.server == "uvicorn":
        app.on_startup.append(partial(drain_on_exit_signals, app))
    return app
