"""Reading Gemini's ``GenerateContentResponse`` events into events and one Response.

Each SSE event is a whole ``GenerateContentResponse``: the first candidate's new parts,
and, cumulative, ``usageMetadata``; the last carries ``finishReason``. A part is one of:

- ``{"text": ...}``: answer text (consecutive pieces are one TextBlock);
- ``{"text": ..., "thought": true}``: a thought summary: ThinkingDelta, and a
  ThinkingBlock with ``origin="gemini-display"``, a name no route has, so no model is
  ever sent it (seed 001);
- ``{"functionCall": {"name", "args", "id"?}}``: a ToolCallStart and a ToolUseBlock,
  with a generated id when the API gave none;
- anything else (code execution, inline data): an OpaqueBlock ``gemini_part``.

A ``thoughtSignature`` on a part becomes an OpaqueBlock ``gemini_signature`` right
after that part's block, so it goes back on that part to the same model only.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, TypeAlias

from modelplug import (
    Block,
    Event,
    Message,
    OpaqueBlock,
    Request,
    Response,
    Route,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    ToolUseBlock,
    Usage,
    estimated_usage,
)
from modelplug_kit import usage_from_gemini

from .request import GENERATED_ID_PREFIX, PART_KIND, SIGNATURE_KIND
from .routes import model_generation

__all__ = ["DISPLAY_ONLY", "Reader", "StopKind"]

DISPLAY_ONLY = "gemini-display"
GROUNDING_KIND = "gemini_grounding"

REFUSALS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
MALFORMED = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"})
# A candidate that only continues the content: anything more (a finishReason, grounding,
# safety ratings) goes the full way.
_PLAIN_CANDIDATE = frozenset({"content", "index"})
StopKind = str


class _Text:
    __slots__ = ("pieces", "signed")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.signed = False


class _Thought:
    __slots__ = ("pieces",)

    def __init__(self) -> None:
        self.pieces: list[str] = []


Item: TypeAlias = _Text | _Thought | ToolUseBlock | OpaqueBlock


def _generated_id() -> str:
    return GENERATED_ID_PREFIX + uuid.uuid4().hex[:24]


class Reader:
    """One answer's state. :meth:`event` takes one parsed event and returns what to
    show; :meth:`response` builds the Response at the end."""

    def __init__(self, route: Route, request: Request) -> None:
        self.route = route
        self.hide = request.thinking is not None and request.thinking.hide
        self.items: list[Item] = []
        self.calls = 0
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.block_reason: str | None = None
        self.block_message: str | None = None
        self.usage_raw: Any = None
        self.grounding: Mapping[str, Any] | None = None
        self.citations: list[Any] = []
        self.safety: Any = None
        self.model_version: str | None = None
        self.response_id: str | None = None
        self.error: Mapping[str, Any] | None = None
        self.started = False  # the first event always goes the full way

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None or self.block_reason is not None

    # -- one event -----------------------------------------------------------------------

    def event(self, event: Mapping[str, Any]) -> list[Event]:
        text = self.plain_text(event)
        if text is not None:
            return [TextDelta.of(text)]
        self.started = True
        error = event.get("error")
        if isinstance(error, Mapping):
            self.error = error
            return []
        usage = event.get("usageMetadata")
        if usage is not None:
            self.usage_raw = usage
        if self.model_version is None:
            version = event.get("modelVersion")
            if isinstance(version, str):
                self.model_version = version
            response_id = event.get("responseId")
            if isinstance(response_id, str):
                self.response_id = response_id
        feedback = event.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            self.block_reason = str(feedback["blockReason"])
            message = feedback.get("blockReasonMessage")
            self.block_message = message if isinstance(message, str) else None
            self.safety = feedback.get("safetyRatings")
        candidates = event.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            return []
        candidate = candidates[0]
        if not isinstance(candidate, Mapping):
            return []
        events: list[Event] = []
        content = candidate.get("content")
        if isinstance(content, Mapping):
            parts = content.get("parts")
            if isinstance(parts, list):
                for part in parts:
                    if isinstance(part, Mapping):
                        self.part(part, events)
        if len(candidate) > 1:
            self.candidate_fields(candidate)
        return events

    def plain_text(self, event: Mapping[str, Any]) -> str | None:
        """The hot path: an event that only continues the text (one text part, no
        finish, no feedback, after the first event) is taken here in a few lookups;
        None sends every other event the full way."""
        candidates = event.get("candidates")
        if type(candidates) is not list or not candidates or not self.started:
            return None
        candidate = candidates[0]
        if type(candidate) is not dict or not candidate.keys() <= _PLAIN_CANDIDATE:
            return None
        content = candidate.get("content")
        parts = content.get("parts") if type(content) is dict else None
        if type(parts) is not list or len(parts) != 1:
            return None
        part = parts[0]
        if type(part) is not dict or len(part) != 1:
            return None
        text = part.get("text")
        last = self.items[-1] if self.items else None
        if type(text) is not str or not text or type(last) is not _Text or last.signed:
            return None
        if "error" in event or "promptFeedback" in event:
            return None
        usage = event.get("usageMetadata")
        if usage is not None:
            self.usage_raw = usage
        last.pieces.append(text)
        return text

    def candidate_fields(self, candidate: Mapping[str, Any]) -> None:
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
            message = candidate.get("finishMessage")
            self.finish_message = message if isinstance(message, str) else None
        grounding = candidate.get("groundingMetadata")
        if isinstance(grounding, Mapping):
            self.grounding = grounding
        cited = candidate.get("citationMetadata")
        if isinstance(cited, Mapping):
            sources = cited.get("citationSources") or cited.get("citations")
            if isinstance(sources, list):
                self.citations.extend(
                    {"type": "gemini_citation", **s} for s in sources if isinstance(s, Mapping)
                )
        if "safetyRatings" in candidate:
            self.safety = candidate["safetyRatings"]

    def part(self, part: Mapping[str, Any], events: list[Event]) -> None:
        signature = part.get("thoughtSignature")
        text = part.get("text")
        if text is None and part.get("thought") is True:
            text = ""  # a thought part that only carries its signature
        if isinstance(text, str):
            if part.get("thought") is True:
                self.thought(text, events)
            elif text or signature:
                self.text(text, events)
                if isinstance(signature, str):
                    last = self.items[-1]
                    assert isinstance(last, _Text)
                    last.signed = True
        elif isinstance(part.get("functionCall"), Mapping):
            self.call(part["functionCall"], events)
        else:
            kept = {k: v for k, v in part.items() if k != "thoughtSignature"}
            self.items.append(OpaqueBlock(kind=PART_KIND, wire=kept))
        if isinstance(signature, str):
            self.items.append(
                OpaqueBlock(kind=SIGNATURE_KIND, wire={"thoughtSignature": signature})
            )

    def text(self, text: str, events: list[Event]) -> None:
        last = self.items[-1] if self.items else None
        if not isinstance(last, _Text) or last.signed:
            last = _Text()
            self.items.append(last)
        if text:
            last.pieces.append(text)
            events.append(TextDelta.of(text))

    def thought(self, text: str, events: list[Event]) -> None:
        last = self.items[-1] if self.items else None
        if not isinstance(last, _Thought):
            last = _Thought()
            self.items.append(last)
        if text:
            last.pieces.append(text)
            if not self.hide:
                events.append(ThinkingDelta(text=text))

    def call(self, call: Mapping[str, Any], events: list[Event]) -> None:
        name = call.get("name")
        given = call.get("id")
        call_id = given if isinstance(given, str) and given else _generated_id()
        args = call.get("args")
        block = ToolUseBlock(
            id=call_id,
            name=name if isinstance(name, str) else "",
            input=dict(args) if isinstance(args, Mapping) else {},
        )
        self.items.append(block)
        events.append(ToolCallStart(id=call_id, name=block.name, index=self.calls))
        self.calls += 1

    # -- the end -------------------------------------------------------------------------

    def blocks(self) -> list[Block]:
        out: list[Block] = []
        for item in self.items:
            if isinstance(item, _Text):
                out.append(TextBlock(text="".join(item.pieces)))
            elif isinstance(item, _Thought):
                text = "".join(item.pieces)
                out.append(ThinkingBlock(text="" if self.hide else text, origin=DISPLAY_ONLY))
            else:
                out.append(item)
        return out

    def grounding_blocks(self, content: list[Block]) -> None:
        """Citations on the last text block and the search results as an OpaqueBlock."""
        citations = list(self.citations)
        grounding = self.grounding
        if grounding is not None:
            chunks = grounding.get("groundingChunks")
            chunks = chunks if isinstance(chunks, list) else []
            sources: list[Mapping[str, Any]] = [
                c["web"] if isinstance(c, Mapping) and isinstance(c.get("web"), Mapping) else {}
                for c in chunks
            ]
            supports = grounding.get("groundingSupports")
            for support in supports if isinstance(supports, list) else []:
                if not isinstance(support, Mapping):
                    continue
                segment = support.get("segment")
                segment = segment if isinstance(segment, Mapping) else {}
                indices = support.get("groundingChunkIndices")
                cited = [
                    {"uri": sources[i].get("uri"), "title": sources[i].get("title")}
                    for i in (indices if isinstance(indices, list) else [])
                    if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(sources)
                ]
                citations.append(
                    {
                        "type": "gemini_grounding",
                        "start_index": segment.get("startIndex", 0),
                        "end_index": segment.get("endIndex"),
                        "text": segment.get("text"),
                        "sources": cited,
                    }
                )
            lines = [f"{s.get('title') or s.get('uri')}: {s.get('uri')}" for s in sources if s]
            wire = {
                k: grounding[k] for k in ("webSearchQueries", "groundingChunks") if k in grounding
            }
            content.append(
                OpaqueBlock(kind=GROUNDING_KIND, wire=wire, text="\n".join(lines) or None)
            )
        if citations:
            for index in range(len(content) - 1, -1, -1):
                block = content[index]
                if isinstance(block, TextBlock):
                    content[index] = block.model_copy(update={"citations": citations})
                    break

    def usage(self, sent: int) -> Usage:
        usage = usage_from_gemini(self.usage_raw)
        if usage is None:
            got = 0
            for item in self.items:
                if isinstance(item, _Text | _Thought):
                    got += sum(len(piece) for piece in item.pieces)
            usage = estimated_usage(sent, got)
        queries = self.grounding.get("webSearchQueries") if self.grounding else None
        if isinstance(queries, list) and queries:
            # Google bills grounding per search query from Gemini 3 on, and per grounded
            # prompt before (one, however many queries it ran).
            generation = model_generation(self.route.model)
            searches = len(queries) if generation is not None and generation >= (3, 0) else 1
            usage = usage.model_copy(update={"web_searches": searches})
        return usage

    def stop_reason(self) -> StopReason:
        if self.block_reason is not None:
            return "refusal"
        reason = self.finish_reason
        if reason in REFUSALS:
            return "refusal"
        if reason == "MAX_TOKENS":
            return "max_tokens"
        if reason == "STOP":
            return "tool_use" if self.calls else "end_turn"
        return "other"

    def metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {}
        if self.model_version and self.model_version.removeprefix("models/") != self.route.model:
            metadata["served_model"] = self.model_version
        if self.response_id:
            metadata["response_id"] = self.response_id
        if self.finish_reason and self.finish_reason not in ("STOP", "MAX_TOKENS"):
            metadata["finish_reason"] = self.finish_reason
        if self.finish_message:
            metadata["finish_message"] = self.finish_message
        if self.block_reason:
            metadata["block_reason"] = self.block_reason
            if self.block_message:
                metadata["block_reason_message"] = self.block_message
        if self.safety and self.stop_reason() == "refusal":
            metadata["safety_ratings"] = self.safety
        return metadata

    def response(self, sent: int) -> Response:
        content = self.blocks()
        self.grounding_blocks(content)
        return Response(
            message=Message(role="assistant", content=content, model=self.route.name),
            stop_reason=self.stop_reason(),
            usage=self.usage(sent),
            model=self.route.name,
            metadata=self.metadata(),
        )

    def partial(self) -> Response:
        """What arrived before a failure: thinking, text and whole calls so far."""
        content = self.blocks()
        return Response(
            message=Message(role="assistant", content=content, model=self.route.name),
            stop_reason="other",
            usage=self.usage(0).model_copy(update={"reported": False}),
            model=self.route.name,
            metadata=self.metadata(),
        )
