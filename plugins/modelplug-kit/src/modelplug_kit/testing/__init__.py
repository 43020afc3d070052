"""The provider authors' test kit.

:class:`WireServer` serves recorded wire bytes on 127.0.0.1 (real sockets, so cuts,
stalls and resets are real); :func:`load_recording`, :func:`split_events` and
:func:`split_every` shape what it sends; :class:`RecordedRequest` is what it received.
:class:`ProviderConformance` (with :class:`Recording` and :class:`ToolCallCut`) is the
suite a provider plugin subclasses in its own tests
(:mod:`modelplug_kit.testing.conformance`); it loads on first use, since it imports pytest.

Installed with the kit as the pytest plugin ``modelplug-kit``, it adds the fixture
``wire_server``: a started WireServer, stopped after the test. Core's own fixtures
(``make_client``, ``fake_model``...) come from :mod:`modelplug.testing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import lazy_exports

EXPORTS = {
    "Chunk": "modelplug_kit.testing.wire_server",
    "RecordedRequest": "modelplug_kit.testing.wire_server",
    "WireResponse": "modelplug_kit.testing.wire_server",
    "WireServer": "modelplug_kit.testing.wire_server",
    "load_recording": "modelplug_kit.testing.wire_server",
    "refused_url": "modelplug_kit.testing.wire_server",
    "split_events": "modelplug_kit.testing.wire_server",
    "split_every": "modelplug_kit.testing.wire_server",
    "ProviderConformance": "modelplug_kit.testing.conformance",
    "Recording": "modelplug_kit.testing.conformance",
    "ToolCallCut": "modelplug_kit.testing.conformance",
}
__all__ = sorted(EXPORTS)

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

if TYPE_CHECKING:
    from modelplug_kit.testing.conformance import ProviderConformance as ProviderConformance
    from modelplug_kit.testing.conformance import Recording as Recording
    from modelplug_kit.testing.conformance import ToolCallCut as ToolCallCut
    from modelplug_kit.testing.wire_server import Chunk as Chunk
    from modelplug_kit.testing.wire_server import RecordedRequest as RecordedRequest
    from modelplug_kit.testing.wire_server import WireResponse as WireResponse
    from modelplug_kit.testing.wire_server import WireServer as WireServer
    from modelplug_kit.testing.wire_server import load_recording as load_recording
    from modelplug_kit.testing.wire_server import refused_url as refused_url
    from modelplug_kit.testing.wire_server import split_events as split_events
    from modelplug_kit.testing.wire_server import split_every as split_every
