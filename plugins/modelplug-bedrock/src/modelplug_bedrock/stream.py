"""Stream one ConverseStream call: the request, the event-stream frames, events, the
Response.

Sending, statuses, a web page where the stream should be, a cut or a stall mid-stream,
closing early and keeping the connection are the kit's HTTP path
(:data:`modelplug_bedrock.http.HTTP`); the event-stream framing is botocore's parser
(``botocore.eventstream``: both CRCs, the lengths, the headers), imported with the
first stream; what is here is Bedrock's events. A text delta costs one frame from
botocore's parser, one JSON parse and the TextDelta.
"""

from __future__ import annotations

import asyncio
import functools
import json
import struct
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from modelplug import (
    Block,
    Done,
    Event,
    Message,
    ModelError,
    Notice,
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
    parse_arguments,
)
from modelplug_kit import PENALTIES, dropped_sampling, provider_headers

from .budget import fit_thinking
from .credentials import frozen_credentials, signed_headers
from .errors import ERRORS
from .http import HTTP
from .providers import base_url_for, region_for
from .request import build_body

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["Frame", "Frames", "Reader", "stream_converse"]

ACCEPT = "application/vnd.amazon.eventstream"
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "guardrail_intervened": "refusal",
    "content_filtered": "refusal",
}


class Frame(Protocol):
    """One event-stream message as botocore's parser gives it
    (``botocore.eventstream.EventStreamMessage``)."""

    headers: Mapping[str, Any]
    payload: bytes


# Besides botocore's ParserError (a CRC that does not match, a length over AWS's
# limits), what its parser raises reading a frame whose CRCs hold but whose lengths or
# headers do not fit together.
DO_NOT_FIT = (struct.error, LookupError, ValueError)


@functools.cache
def _parser() -> tuple[Any, type[Exception]]:
    """botocore's ``EventStreamBuffer`` and ``ParserError``, imported on first use."""
    # botocore ships no type information.
    from botocore.eventstream import EventStreamBuffer, ParserError  # type: ignore[import-untyped]

    return EventStreamBuffer, ParserError


class Frames:
    """botocore's ``EventStreamBuffer`` fed the chunks the network gives. Whole frames
    that come before a malformed one in the same chunk are returned with the refusal,
    so what the model sent before it is never lost; ``pending`` counts the bytes of a
    frame begun and not ended (a cut stream)."""

    __slots__ = ("buffer", "pending", "refused")

    def __init__(self) -> None:
        buffer_type, parser_error = _parser()
        self.buffer = buffer_type()
        self.refused = (parser_error, *DO_NOT_FIT)
        self.pending = 0

    def feed(self, chunk: bytes) -> tuple[list[Frame], str | None]:
        """The frames ``chunk`` completes, and why the bytes after them were refused
        (None: they were not)."""
        self.buffer.add_data(chunk)
        self.pending += len(chunk)
        frames: list[Frame] = []
        try:
            for frame in self.buffer:
                frames.append(frame)
                self.pending -= frame.prelude.total_length
        except self.refused as exc:
            if isinstance(exc, DO_NOT_FIT):
                why = f"a frame whose lengths or headers do not fit together ({type(exc).__name__})"
            else:
                why = f"botocore's parser refused a frame: {exc}"
            return frames, why
        return frames, None


class _Part:
    """One content block as it arrives (text, reasoning or a tool call)."""

    __slots__ = ("kind", "redacted", "signature", "text", "tool_id", "tool_name")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.text: list[str] = []
        self.signature: str | None = None
        self.redacted: list[str] = []
        self.tool_id = ""
        self.tool_name = ""


class Reader:
    """Frames in, events out; everything of one answer, for Done or for a failure."""

    def __init__(self, route: Route, request: Request) -> None:
        self.route = route
        self.hide_thinking = request.thinking is not None and request.thinking.hide
        self.parts: dict[int, _Part] = {}
        self.stop: str | None = None
        self.usage: Usage | None = None
        self.metadata: dict[str, Any] = {}
        self.ended = False  # the metadata event, the stream's last, arrived
        self.calls = 0

    def malformed(self, what: str) -> ModelError:
        return ERRORS.transient(
            self.route,
            f"{self.route.provider} sent a malformed event stream: {what}",
            reason="malformed event stream",
            partial=self.partial(),
        )

    def frame(self, frame: Frame) -> list[Event]:
        headers = frame.headers
        kind = headers.get(":message-type")
        if kind != "event":
            if kind == "exception":
                raise ERRORS.exception_event(
                    self.route,
                    str(headers.get(":exception-type", "")),
                    frame.payload,
                    self.partial(),
                )
            if kind == "error":
                words = json.dumps({"message": headers.get(":error-message", "")}).encode()
                raise ERRORS.exception_event(
                    self.route, str(headers.get(":error-code", "")), words, self.partial()
                )
            raise self.malformed(f"a message of type {kind!r}")
        try:
            data = json.loads(frame.payload)
        except ValueError:
            raise self.malformed("an event whose payload is not JSON") from None
        if type(data) is not dict:
            raise self.malformed("an event whose payload is not an object")
        name = headers.get(":event-type")
        if name == "contentBlockDelta":
            return self.delta(data)
        if name == "contentBlockStart":
            return self.start(data)
        if name == "messageStop":
            reason = data.get("stopReason")
            self.stop = reason if isinstance(reason, str) else "end_turn"
            fields = data.get("additionalModelResponseFields")
            if fields:
                self.metadata["additionalModelResponseFields"] = fields
        elif name == "metadata":
            self.usage = _usage(data.get("usage"))
            metrics = data.get("metrics")
            if isinstance(metrics, dict) and "latencyMs" in metrics:
                self.metadata["latency_ms"] = metrics["latencyMs"]
            self.ended = True
        # messageStart, contentBlockStop and events added later say nothing to keep.
        return []

    def part(self, data: dict[str, Any], kind: str) -> _Part:
        index = data.get("contentBlockIndex")
        if type(index) is not int:
            raise self.malformed("an event without its contentBlockIndex")
        part = self.parts.get(index)
        if part is None:
            part = self.parts[index] = _Part(kind)
        return part

    def start(self, data: dict[str, Any]) -> list[Event]:
        start = data.get("start")
        tool = start.get("toolUse") if isinstance(start, dict) else None
        if not isinstance(tool, dict):
            return []
        part = self.part(data, "tool")
        part.kind = "tool"
        part.tool_id = str(tool.get("toolUseId") or "")
        part.tool_name = str(tool.get("name") or "")
        self.calls += 1
        return [ToolCallStart(id=part.tool_id, name=part.tool_name, index=self.calls - 1)]

    def delta(self, data: dict[str, Any]) -> list[Event]:
        delta = data.get("delta")
        if type(delta) is not dict:
            raise self.malformed("a contentBlockDelta without its delta")
        text = delta.get("text")
        if type(text) is str:
            self.part(data, "text").text.append(text)
            return [TextDelta.of(text)] if text else []
        tool = delta.get("toolUse")
        if isinstance(tool, dict):
            piece = tool.get("input")
            if isinstance(piece, str):
                self.part(data, "tool").text.append(piece)
            return []
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            part = self.part(data, "reasoning")
            thought = reasoning.get("text")
            if isinstance(thought, str) and thought:
                part.text.append(thought)
                if not self.hide_thinking:
                    return [ThinkingDelta(text=thought)]
            if isinstance(reasoning.get("signature"), str):
                part.signature = reasoning["signature"]
            if isinstance(reasoning.get("redactedContent"), str):
                part.redacted.append(reasoning["redactedContent"])
        return []

    def blocks(self, *, cut: bool = False) -> tuple[list[Block], list[dict[str, Any]]]:
        """The answer's blocks, and the tool calls left out of them: with ``cut`` (the
        output hit maxTokens) a call whose input is not a whole JSON object was cut
        inside its arguments, and is never returned as a call the caller would run (as
        every provider plugin does: loose repair would complete it with a guess)."""
        content: list[Block] = []
        truncated: list[dict[str, Any]] = []
        for index in sorted(self.parts):
            part = self.parts[index]
            if part.kind == "text":
                text = "".join(part.text)
                if text:
                    content.append(TextBlock(text=text))
            elif part.kind == "tool":
                raw = "".join(part.text)
                value = _whole_input(raw) if cut else _input(raw)
                if value is None:
                    truncated.append({"id": part.tool_id, "name": part.tool_name, "arguments": raw})
                    continue
                content.append(ToolUseBlock(id=part.tool_id, name=part.tool_name, input=value))
            else:
                content.append(self.reasoning(part))
        return content, truncated

    def reasoning(self, part: _Part) -> ThinkingBlock:
        """Kept as Bedrock's own block too, so it goes back to the same model as sent."""
        origin = self.route.name
        if part.redacted:
            wire = {"reasoningContent": {"redactedContent": "".join(part.redacted)}}
            return ThinkingBlock(redacted=True, wire=wire, origin=origin)
        thought = "".join(part.text)
        reasoning_text: dict[str, Any] = {"text": thought}
        if part.signature is not None:
            reasoning_text["signature"] = part.signature
        return ThinkingBlock(
            text="" if self.hide_thinking else thought,
            signature=part.signature,
            wire={"reasoningContent": {"reasoningText": reasoning_text}},
            origin=origin,
        )

    def produced(self) -> int:
        return sum(len(t) for p in self.parts.values() for t in p.text)

    def partial(self) -> Response | None:
        """What arrived before a failure (None: nothing did); a tool call is kept only
        when its input is whole JSON, since a cut may have come inside it."""
        if not self.parts:
            return None
        content, _ = self.blocks(cut=True)
        return Response(
            message=Message(role="assistant", content=content, model=self.route.name),
            stop_reason="other",
            usage=estimated_usage(0, self.produced()),
            model=self.route.name,
        )

    def response(self) -> tuple[Response, list[Event]]:
        """The Response, and the events that go before its Done (a Notice for a tool
        call cut off by maxTokens)."""
        usage = self.usage or estimated_usage(0, self.produced())
        reason = STOP_REASONS.get(self.stop or "", "other")
        metadata = dict(self.metadata)
        if self.stop is not None and self.stop not in STOP_REASONS:
            metadata["stop_reason"] = self.stop
        content, truncated = self.blocks(cut=reason == "max_tokens")
        before: list[Event] = []
        if truncated:
            metadata["truncated_tool_calls"] = truncated
            before.append(_truncated_notice(truncated))
        response = Response(
            message=Message(role="assistant", content=content, model=self.route.name),
            stop_reason=reason,
            usage=usage,
            model=self.route.name,
            metadata=metadata,
        )
        return response, before


def _input(raw: str) -> dict[str, Any] | str:
    """A finished call's input: its JSON, repaired when loose (the raw string when
    beyond repair, as the neutral model keeps broken JSON)."""
    if not raw.strip():
        return {}
    value, _ = parse_arguments(raw)
    return value


def _whole_input(raw: str) -> dict[str, Any] | None:
    """The input of a call the output may have cut: strict JSON of an object, else None."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _truncated_notice(truncated: list[dict[str, Any]]) -> Notice:
    names = ", ".join(str(t["name"] or "?") for t in truncated)
    return Notice(
        kind="truncated_tool_call",
        message=f"the output hit max_tokens inside the arguments of {names}; the call was "
        "not complete and is not returned as a tool call. Raise max_tokens.",
    )


def _usage(raw: Any) -> Usage | None:
    """Bedrock's usage: ``inputTokens`` is the uncached input, as in core's Usage."""
    if not isinstance(raw, dict):
        return None

    def count(key: str) -> int:
        value = raw.get(key)
        return value if type(value) is int and value >= 0 else 0

    return Usage(
        input=count("inputTokens"),
        output=count("outputTokens"),
        cache_read=count("cacheReadInputTokens"),
        cache_write=count("cacheWriteInputTokens"),
    )


async def stream_converse(
    route: Route, request: Request, client: CallContext, bearer: str | None
) -> AsyncIterator[Event]:
    settings = client.settings
    options = HTTP.options(client)
    base = route.endpoint.base_url
    region = region_for(route, settings, options) if base is None or bearer is None else None
    url = f"{base_url_for(route, region or '')}/model/{quote(route.model, safe='')}/converse-stream"
    request, budget_notice = fit_thinking(request, route)
    if budget_notice is not None:
        yield budget_notice  # before sending: the caller hears why thinking changed
    unsent = dropped_sampling(
        route, request, PENALTIES, "Converse's inferenceConfig has no penalties"
    )
    if unsent is not None:
        yield unsent
    body = json.dumps(build_body(request, route), separators=(",", ":")).encode()
    if bearer is not None:
        headers = provider_headers(
            route, settings, auth={"authorization": f"Bearer {bearer}"}, accept=ACCEPT
        )
    else:
        profile = route.endpoint.options.get("profile") or options.profile
        found = await frozen_credentials(settings, profile, route)
        unsigned = provider_headers(route, settings, accept=ACCEPT)
        headers = await signed_headers(url, unsigned, body, found, region or "")
    if _parser.cache_info().currsize == 0:
        await asyncio.to_thread(_parser)  # botocore's first import, off the event loop
    reader = Reader(route, request)
    frames = Frames()
    async with HTTP.stream(client, route, url, body=body, headers=headers, whole=False) as answer:
        answer.partial = reader.partial
        async for chunk in answer:
            whole, refused = frames.feed(chunk)
            for frame in whole:
                for event in reader.frame(frame):
                    yield event
            if reader.ended:
                break
            if refused is not None:
                raise reader.malformed(refused)
        if not reader.ended and reader.stop is None:
            cut = "mid-frame" if frames.pending else "before its messageStop event"
            raise ERRORS.transient(
                route,
                f"{route.provider}'s stream ended {cut}: the answer is incomplete",
                reason="the stream was cut",
                partial=reader.partial(),
            )
    response, before = reader.response()
    for event in before:
        yield event
    yield Done(response=response)
