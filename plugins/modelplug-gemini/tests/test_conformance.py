"""The test kit's conformance suite, run against this plugin's wire (the Gemini API's
``streamGenerateContent?alt=sse``, Google's error bodies)."""

from __future__ import annotations

import json
from pathlib import Path

import modelplug_gemini
import pytest
from modelplug_kit.testing import ProviderConformance, Recording

RECORDED = Path(__file__).parent / "recorded"
# Google's status names for the statuses the suite serves (google.rpc.Code); a JSON
# error answered with 200 carries a code of its own.
GOOGLE_STATUS = {200: (500, "INTERNAL"), 401: (401, "UNAUTHENTICATED"), 500: (500, "INTERNAL")}
GOOGLE_STATUS[429] = (429, "RESOURCE_EXHAUSTED")


class TestGeminiConformance(ProviderConformance):
    plugin = modelplug_gemini
    provider_type = "gemini"
    section = "gemini"
    stream_path = "/v1beta/models/{model}:streamGenerateContent?alt=sse"
    key_header = "x-goog-api-key"
    recording = Recording(
        RECORDED / "text.sse",
        text=(
            "Here you go!\n\n1.  **English:** Hi\n2.  **Spanish:** Hola\n3.  **French:** "
            "Bonjour\n4.  **German:** Hallo\n5.  **Italian:** Ciao"
        ),
        cut_after=1,
        cut_text=(
            "Here you go!\n\n1.  **English:** Hi\n2.  **Spanish:** Hola\n3.  **French:** "
            "Bonjour\n4.  **German:** Hallo\n5.  "
        ),
    )

    def status_body(self, status: int, message: str) -> bytes:
        code, name = GOOGLE_STATUS.get(status, (status, "UNKNOWN"))
        return json.dumps({"error": {"code": code, "message": message, "status": name}}).encode()

    @pytest.mark.skip(
        reason="Gemini's wire cannot carry a cut call: a functionCall part arrives whole, "
        "its args a parsed object (the API streams no argument fragments), so an answer "
        "cut at MAX_TOKENS ends before the part, and a call the model botched ends in "
        "finishReason MALFORMED_FUNCTION_CALL, which the plugin raises as its own error"
    )
    def test_a_tool_call_cut_by_the_output_limit_is_never_a_call_to_run(self) -> None: ...
