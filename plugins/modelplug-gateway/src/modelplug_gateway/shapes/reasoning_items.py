"""A model's reasoning as a Responses ``reasoning`` item, and back.

A Responses client (the Codex CLI) keeps the reasoning items of each answer and sends
them back in the next request's ``input``; only ``encrypted_content`` carries what the
model needs to go on. So every reasoning block leaves as an item that can come back
whole:

- **An OpenAI Responses item** (a ThinkingBlock whose ``wire`` is a ``reasoning``
  item) leaves as it came; coming back it is a ThinkingBlock with that item as its
  ``wire`` again, which the openai plugin sends back unchanged.
- **Any other provider's reasoning** (Claude's signed thinking, a redacted block, an
  OpenAI-compatible server's reasoning text) leaves as a reasoning item whose
  ``encrypted_content`` is :data:`SEALED` followed by the block and the route that
  wrote it, as base64url JSON. Coming back it is that block again, marked with that
  route, so the replay rule (:mod:`modelplug.contract.replay`) sends it to that model
  and no other. It is not encrypted: the caller could as well send any thinking block
  through the Messages shape; what matters is that the block is unchanged.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any

from modelplug import OpaqueBlock, ThinkingBlock

__all__ = ["SEALED", "is_reasoning", "reasoning_item", "unsealed"]

SEALED = "modelplug.reasoning.v1:"
REASONING = "reasoning"
OPENAI_OPAQUE = "openai."


def is_reasoning(block: ThinkingBlock | OpaqueBlock) -> bool:
    """Whether ``block`` leaves as a reasoning item (an OpenAI output item of another
    type, a web search call, leaves as itself)."""
    return isinstance(block, ThinkingBlock) or not block.kind.startswith(OPENAI_OPAQUE)


def reasoning_item(
    block: ThinkingBlock | OpaqueBlock, route: str | None, encrypted: bool
) -> dict[str, Any]:
    """The reasoning item for ``block`` written by ``route``; ``encrypted``: the
    caller asked for ``reasoning.encrypted_content`` (without it nothing can come
    back, as with OpenAI's own API)."""
    wire = block.wire
    if (
        isinstance(block, ThinkingBlock)
        and isinstance(wire, dict)
        and wire.get("type") == REASONING
    ):
        return dict(wire)
    text = block.text or ""
    item: dict[str, Any] = {
        "id": "rs_" + os.urandom(12).hex(),
        "type": REASONING,
        "summary": [{"type": "summary_text", "text": text}] if text else [],
    }
    if encrypted:
        sealed = {"route": route, "block": block.model_dump(mode="json", exclude_none=True)}
        data = json.dumps(sealed, separators=(",", ":"), ensure_ascii=False).encode()
        item["encrypted_content"] = SEALED + base64.urlsafe_b64encode(data).decode()
    return item


def unsealed(item: dict[str, Any]) -> tuple[dict[str, Any], str | None] | None:
    """The block (as a dict) and route a sealed reasoning item carries, or None for an
    item that is not one of the gateway's (an OpenAI item) or is damaged."""
    content = item.get("encrypted_content")
    if not isinstance(content, str) or not content.startswith(SEALED):
        return None
    try:
        sealed = json.loads(base64.urlsafe_b64decode(content[len(SEALED) :].encode()))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(sealed, dict) or not isinstance(sealed.get("block"), dict):
        return None
    block = sealed["block"]
    if block.get("type") not in ("thinking", "opaque"):
        return None
    route = sealed.get("route")
    return block, route if isinstance(route, str) and route else None
