"""The test kit's conformance suite, run against this plugin's wire (Chat Completions)."""

from __future__ import annotations

from pathlib import Path

import modelplug_openai_compat
from modelplug_kit.testing import ProviderConformance, Recording, ToolCallCut

RECORDINGS = Path(__file__).parent / "recordings"


class TestOpenAICompatConformance(ProviderConformance):
    plugin = modelplug_openai_compat
    provider_type = "openai-compatible"
    section = "openai-compat"
    base_path = "/v1"
    stream_path = "/chat/completions"
    key_header = "authorization"
    recording = Recording(
        RECORDINGS / "openai_text.sse",
        text="Sockets wait in silence — café ☕",
        cut_after=3,
        cut_text="Sockets wait in",
    )
    # finish_reason "length" inside the first call's arguments.
    tool_call_cut = ToolCallCut(
        RECORDINGS / "openai_tool_cut_at_length.sse", tool="get_weather", arguments='{"ci'
    )
