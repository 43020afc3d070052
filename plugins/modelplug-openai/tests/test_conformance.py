"""The test kit's conformance suite, run against this plugin's wire (the Responses API)."""

from __future__ import annotations

from pathlib import Path

import modelplug_openai
from modelplug_kit.testing import ProviderConformance, Recording, ToolCallCut

RECORDED = Path(__file__).parent / "recorded"


class TestOpenAIResponsesConformance(ProviderConformance):
    plugin = modelplug_openai
    provider_type = "openai-responses"
    section = "openai"
    base_path = "/v1"
    stream_path = "/responses"
    key_header = "authorization"
    model = "gpt-5"
    recording = Recording(
        RECORDED / "text.sse",
        text="The final result is **570**.",
        cut_after=6,  # created, in_progress, item and part added, two text deltas
        cut_text="The final",
    )
    # response.incomplete (max_output_tokens) inside the second call's arguments.
    tool_call_cut = ToolCallCut(
        RECORDED / "tool_call_cut_at_max_output_tokens.sse",
        tool="weather",
        arguments='{"location":"Rome',
    )
