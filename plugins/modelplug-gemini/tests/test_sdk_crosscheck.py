"""The same recorded bytes read by google-genai's own types give the same text, thought
summaries, function calls, signatures and usage as this plugin's reader."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from modelplug import Endpoint, Route
from modelplug.contract.types import OpaqueBlock, Request, TextBlock, ThinkingBlock
from modelplug_gemini.stream import Parser
from modelplug_kit.testing import load_recording

genai_types = pytest.importorskip("google.genai.types")

RECORDED = Path(__file__).parent / "recorded"
STREAMS = sorted(p.name for p in RECORDED.glob("*.sse") if p.name != "malformed_call.sse")


def sdk_event(raw: str) -> Any:
    event = json.loads(raw)
    # Fields the SDK's types (extra="forbid") refuse, left out for the SDK as our reader
    # ignores them: the live API's usageMetadata.serviceTier, a gateway's "nonce".
    if isinstance(event.get("usageMetadata"), dict):
        event["usageMetadata"].pop("serviceTier", None)
    event.pop("nonce", None)
    return genai_types.GenerateContentResponse.model_validate(event)


def sdk_view(name: str) -> dict[str, Any]:
    data = load_recording(RECORDED / name).decode().replace("\r\n", "\n")
    chunks = [
        sdk_event(raw[len("data: ") :]) for raw in data.split("\n\n") if raw.startswith("data: ")
    ]
    text, thoughts, calls, signatures = [], [], [], []
    for chunk in chunks:
        for candidate in (chunk.candidates or [])[:1]:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.thought_signature:
                    # The SDK decodes the base64 signature to bytes.
                    signatures.append(base64.b64encode(part.thought_signature).decode())
                if part.text is not None and part.thought:
                    thoughts.append(part.text)
                elif part.text is not None:
                    text.append(part.text)
                if part.function_call is not None:
                    calls.append((part.function_call.name, part.function_call.args or {}))
    usage = chunks[-1].usage_metadata
    return {
        "text": "".join(text),
        "thoughts": "".join(thoughts),
        "calls": calls,
        "signatures": signatures,
        "usage": (
            usage.prompt_token_count or 0,
            usage.candidates_token_count or 0,
            usage.thoughts_token_count or 0,
        )
        if usage
        else None,
    }


def our_view(name: str) -> dict[str, Any]:
    route = Route(provider="gemini", model="gemini-2.5-flash", endpoint=Endpoint(type="gemini"))
    parser = Parser(route, Request(messages=[{"role": "user", "content": "hi"}]))
    parser.feed(load_recording(RECORDED / name))
    parser.close()
    response = parser.finish(0).response
    blocks = response.message.content
    usage = response.usage
    return {
        "text": "".join(b.text for b in blocks if isinstance(b, TextBlock)),
        "thoughts": "".join(b.text for b in blocks if isinstance(b, ThinkingBlock)),
        "calls": [(c.name, c.input) for c in response.tool_calls],
        "signatures": [
            b.wire["thoughtSignature"]
            for b in blocks
            if isinstance(b, OpaqueBlock) and b.kind == "gemini_signature"
        ],
        # Back to the wire's own counts: input holds the prompt (no cache here),
        # output the candidates plus the thoughts.
        "usage": (usage.input, usage.output - usage.reasoning, usage.reasoning)
        if usage.reported
        else None,
    }


@pytest.mark.parametrize("name", STREAMS)
def test_the_sdk_reads_the_same_answer(name: str) -> None:
    ours, sdk = our_view(name), sdk_view(name)
    if name == "grounding.sse":
        # toolUsePromptTokenCount is input in our count and apart in the SDK's.
        assert ours["usage"] == (sdk["usage"][0] + 90, *sdk["usage"][1:])
        ours.pop("usage"), sdk.pop("usage")
    assert ours == sdk
