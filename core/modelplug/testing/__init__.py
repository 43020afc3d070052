"""The test kit for plugin authors.

Installed with core as the pytest plugin ``modelplug`` (entry point ``pytest11``), it
provides these fixtures:

- ``modelplug_config_dir``: an empty temporary user config dir; MODELPLUG_CONFIG points
  into it and the project lookup starts in an empty temporary directory.
- ``make_client(*plugins, entry_points=False, config=None, **kwargs)``: an isolated
  Client (no installed plugin unless ``entry_points=True`` or named in ``plugins``).
- ``modelplug_client``: ``make_client()`` with nothing but core's built-ins.
- ``register_plugin(obj)``: register a plugin on ``modelplug_client`` for one test.
- ``fake_model``: a :class:`FakeModel` already registered on ``modelplug_client``.
- ``wire_server``: a started :class:`WireServer` on 127.0.0.1.

Outside pytest, import :class:`WireServer`, :class:`FakeModel` and the builders from here.

:class:`ProviderConformance` (with :class:`Recording`) is the conformance suite a
provider plugin subclasses in its own tests: see :mod:`modelplug.testing.conformance`.
It loads on first use (it imports pytest).
"""

from typing import TYPE_CHECKING, Any

from ..errors import ScriptExhaustedError
from .fake import FakeModel, reply, structured, text, thinking, tool_use
from .wire_server import (
    RecordedRequest,
    WireResponse,
    WireServer,
    load_recording,
    refused_url,
    split_events,
    split_every,
)

__all__ = [
    "FakeModel",
    "ProviderConformance",
    "RecordedRequest",
    "Recording",
    "ScriptExhaustedError",
    "WireResponse",
    "WireServer",
    "calm_hypothesis",
    "load_recording",
    "refused_url",
    "reply",
    "split_events",
    "split_every",
    "structured",
    "text",
    "thinking",
    "tool_use",
]

# Loaded on first use: the suite imports pytest, which a program using WireServer or
# FakeModel outside a test run need not have.
_LAZY = {"ProviderConformance": "conformance", "Recording": "conformance"}

if TYPE_CHECKING:
    from .conformance import ProviderConformance, Recording


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'modelplug.testing' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def calm_hypothesis() -> None:
    """Load a hypothesis profile without timing checks (``deadline=None``, no
    ``too_slow`` health check): a busy CI machine must not fail a property test by
    chance. Call it from a ``conftest.py``; hypothesis is imported only then."""
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "modelplug", deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.load_profile("modelplug")
