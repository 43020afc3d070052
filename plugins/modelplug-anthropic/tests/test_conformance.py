"""The test kit's conformance suite, run against this plugin's wire (the Messages API)."""

from __future__ import annotations

import json
from pathlib import Path

import modelplug_anthropic
from modelplug_kit.testing import ProviderConformance, Recording, ToolCallCut

RECORDINGS = Path(__file__).parent / "recordings"
# The error types of Anthropic's errors page, by status.
ERROR_TYPES = {
    200: "api_error",
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
}


class TestAnthropicConformance(ProviderConformance):
    plugin = modelplug_anthropic
    provider_type = "anthropic"
    section = "anthropic"
    stream_path = "/v1/messages"
    # What the anthropic SDK sends the key in (see test_request_matches_sdk.py).
    key_header = "authorization"
    model = "claude-sonnet-4-6"
    recording = Recording(
        RECORDINGS / "text.sse",
        text="Hello, world!",
        # message_start, content_block_start, ping, "Hello": then the cut.
        cut_after=4,
        cut_text="Hello",
    )
    # stop_reason max_tokens inside make_file's input (a real recording: its source line).
    tool_call_cut = ToolCallCut(
        RECORDINGS / "max_tokens_in_tool_json.sse",
        tool="make_file",
        arguments=(
            '{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE FOR '
            'INDIVIDUALS WITH MULTIPLE W-2s",\n"",\n"## INTRODUCTION",\n"",\n"Filing taxes'
        ),
    )

    def status_body(self, status: int, message: str) -> bytes:
        """Anthropic's error body: ``{"type": "error", "error": {"type", "message"}}``."""
        kind = ERROR_TYPES.get(status, "invalid_request_error")
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
