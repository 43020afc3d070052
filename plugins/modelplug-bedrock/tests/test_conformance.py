"""The test kit's conformance suite against ConverseStream: the faults every provider
plugin meets (a dead keep-alive connection, a web page or a JSON error where the stream
should be, statuses, a refused connection, a cut, stalls, a malformed frame, stopping
early, connection reuse, the key never shown), played with Bedrock's own wire. The key
is a Bedrock API key, sent as a bearer token."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any, ClassVar

import modelplug_bedrock
from modelplug_kit.testing import ProviderConformance, Recording, ToolCallCut, load_recording

TEXT = load_recording(Path(__file__).parent / "recorded" / "text.eventstream")
CONTENT_TYPE = "application/vnd.amazon.eventstream"


def frames_of(data: bytes) -> list[bytes]:
    """One network write per frame, as Bedrock flushes them."""
    frames, at = [], 0
    while at < len(data):
        (total,) = struct.unpack_from(">I", data, at)
        frames.append(data[at : at + total])
        at += total
    return frames


class TestBedrockConformance(ProviderConformance):
    plugin = modelplug_bedrock
    provider_type = "bedrock"
    section = "bedrock"
    stream_path = "/model/{model}/converse-stream"
    key_header = "authorization"
    provider_settings: ClassVar[dict[str, Any]] = {"region": "us-east-1"}
    recording = Recording(
        TEXT,
        text=(
            "The capital of France is Paris. Paris is not only the capital city but also the "
            "most populous city in France, and it is a major center for culture, commerce, "
            "fashion, and international diplomacy. Known for its historical landmarks, such "
            "as the Eiffel Tower, the Louvre Museum, and Notre-Dame Cathedral, Paris is often "
            'referred to as "The City of Light" or "The City of Love."'
        ),
        content_type=CONTENT_TYPE,
        chunks=tuple(frames_of(TEXT)),
        cut_after=3,
        cut_text="The capital of France is Paris.",
    )
    # stopReason max_tokens inside the toolUse input (derived from a real recording: its
    # first line says how).
    tool_call_cut = ToolCallCut(
        Path(__file__).parent / "recorded" / "tool_use_cut_at_max_tokens.eventstream",
        tool="get_temperature",
        arguments='{"city":"Par',
        content_type=CONTENT_TYPE,
    )

    def status_body(self, status: int, message: str) -> bytes:
        return json.dumps({"message": message}).encode()

    def malformed_event(self) -> bytes:
        # A whole frame whose message CRC does not match its bytes.
        frame = bytearray(frames_of(TEXT)[1])
        frame[-1] ^= 0xFF
        return bytes(frame)
