"""The neutral model: conversations, requests, responses, usage, cost and stream events.

Every type here is a pydantic v2 model that round-trips through JSON without loss, so a
conversation stored as JSONL comes back exactly. No vendor SDK is imported here. The route
records (Route, Endpoint, ModelInfo, Price) are re-exported from :mod:`modelplug.contract.routes`,
where they are plain dataclasses so that resolving a route never imports pydantic.

Conventions a plugin author must follow:

- ``Usage.input`` counts input tokens *excluding* cache reads and writes (the Anthropic
  convention). An adapter for an API that reports a total (Chat Completions'
  ``prompt_tokens``) subtracts the cached part. ``Usage.total_input`` adds them back.
- ``Usage.output`` includes reasoning tokens; ``Usage.reasoning`` is the part of it that
  was reasoning.
- ``Response.cost`` is None when the cost is unknown. Zero means free, never unknown.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Re-exported: the route records are plain dataclasses, defined apart so resolving a
# route never imports pydantic.
from modelplug.contract.routes import Endpoint, ModelInfo, Price, Provider, Route, TextCallMode

__all__ = [
    "Block",
    "BudgetSource",
    "Citation",
    "Cost",
    "Done",
    "Effort",
    "EmbedRequest",
    "Embeddings",
    "Endpoint",
    "Event",
    "ImageBlock",
    "KeyBudget",
    "Message",
    "ModelInfo",
    "Notice",
    "OpaqueBlock",
    "OutputSchema",
    "ParsedText",
    "Price",
    "Provider",
    "Repetition",
    "RepetitionGuard",
    "Request",
    "Response",
    "Route",
    "ServerTool",
    "StopReason",
    "TextBlock",
    "TextCallMode",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ThinkingRequest",
    "Timings",
    "ToolCallStart",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "new_tool_use_id",
]


class _Model(BaseModel):
    # Unknown fields are an error: a typo in a stored conversation or a request must
    # not be dropped silently.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def new_tool_use_id() -> str:
    """A fresh id for a tool call the server did not name (``call_`` + 24 hex digits)."""
    return "call_" + uuid.uuid4().hex[:24]


# --------------------------------------------------------------------------- blocks

Citation: TypeAlias = dict[str, Any]


class TextBlock(_Model):
    """Text the model wrote or the user sent. ``citations`` are kept as the vendor sent them."""

    type: Literal["text"] = "text"
    text: str
    citations: list[Citation] | None = None


class ThinkingBlock(_Model):
    """The model's reasoning.

    ``text`` is the readable thinking (empty when the vendor omitted or redacted it).
    ``wire`` holds the vendor's block byte for byte (as parsed JSON) so it can go back
    unchanged to the model that produced it; see :mod:`modelplug.contract.replay`.
    ``origin`` is the ``provider/model`` that produced it, when it differs from the
    message's own ``model`` or when the block travels alone.
    """

    type: Literal["thinking"] = "thinking"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    wire: dict[str, Any] | None = None
    origin: str | None = None


class ToolUseBlock(_Model):
    """A call the model asked for. ``input`` is the raw string when the JSON was broken.

    ``wire`` keeps vendor fields of the call that have no neutral home (Gemini's
    ``extra_content.google.thought_signature`` on an OpenAI-compatible endpoint), as
    parsed JSON. The call itself goes to any model; its ``wire`` goes back unchanged
    only to the model that produced it (the replay rule of :mod:`modelplug.contract.replay`).
    """

    type: Literal["tool_use"] = "tool_use"
    id: str = Field(default_factory=new_tool_use_id)
    name: str
    input: dict[str, Any] | str = Field(default_factory=dict)
    wire: dict[str, Any] | None = None


class ImageBlock(_Model):
    """An image, either inline (base64 ``data`` with ``media_type``) or by ``url``."""

    type: Literal["image"] = "image"
    media_type: str | None = None
    data: str | None = None
    url: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ImageBlock:
        if (self.data is None) == (self.url is None):
            raise ValueError("an image needs exactly one of 'data' (base64) or 'url'")
        if self.data is not None and not self.media_type:
            raise ValueError("an inline image needs its media_type, e.g. 'image/png'")
        return self

    @classmethod
    def from_data_url(cls, url: str) -> ImageBlock:
        """Build from ``data:image/png;base64,...`` or a plain http(s) URL."""
        if url.startswith("data:"):
            head, _, data = url.partition(",")
            media_type = head[5:].split(";")[0] or "application/octet-stream"
            return cls(media_type=media_type, data=data)
        return cls(url=url)

    def as_url(self) -> str:
        """The image as a URL: the ``url``, or a ``data:`` URL for inline data."""
        if self.url is not None:
            return self.url
        return f"data:{self.media_type};base64,{self.data}"


class ToolResultBlock(_Model):
    """The result of a tool call, sent inside a user message."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[Annotated[TextBlock | ImageBlock, Field(discriminator="type")]] = Field(
        default_factory=list
    )
    is_error: bool = False

    @field_validator("content", mode="before")
    @classmethod
    def _text_shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [{"type": "text", "text": value}]
        return value

    @property
    def text(self) -> str:
        """The result's text parts joined."""
        return "".join(part.text for part in self.content if isinstance(part, TextBlock))

    @property
    def images(self) -> list[ImageBlock]:
        """The images in the result, in order."""
        return [part for part in self.content if isinstance(part, ImageBlock)]


class OpaqueBlock(_Model):
    """A vendor item modelplug has no neutral form for (server tool blocks, encrypted
    reasoning). ``kind`` is the vendor's type name, ``wire`` the item itself, and
    ``text`` an optional readable view for display and for other providers.
    """

    type: Literal["opaque"] = "opaque"
    kind: str
    wire: dict[str, Any]
    text: str | None = None
    origin: str | None = None


Block = Annotated[
    TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock | OpaqueBlock,
    Field(discriminator="type"),
]


class Message(_Model):
    """One turn. Only two roles: tool results are blocks inside a user message.

    ``model`` is the ``provider/model`` that produced an assistant message; it decides
    which thinking and opaque blocks may be sent back (see :mod:`modelplug.contract.replay`).
    """

    role: Literal["user", "assistant"]
    content: list[Block] = Field(default_factory=list)
    model: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _text_shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [{"type": "text", "text": value}]
        return value

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        """The tool calls in this message, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The tool results in this message, in order."""
        return [b for b in self.content if isinstance(b, ToolResultBlock)]


# -------------------------------------------------------------------------- request


class ToolSpec(_Model):
    """A tool the model may call. ``input_schema`` is a JSON Schema object."""

    name: str = Field(min_length=1, max_length=128)
    description: str = ""
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


class ServerTool(_Model):
    """A tool the provider runs itself (today: Claude's web search)."""

    type: Literal["web_search"] = "web_search"
    max_uses: int | None = None
    allowed_domains: list[str] | None = None
    blocked_domains: list[str] | None = None


Effort: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh", "max"]


class ThinkingRequest(_Model):
    """How the model should think.

    ``effort`` maps to each API's effort or budget field; ``adaptive`` and ``display``
    are Anthropic's; ``hide`` keeps thinking off the screen (no ThinkingDelta events,
    blank ``ThinkingBlock.text``) while the vendor block still goes back unchanged.
    ``enabled=False`` asks for no thinking where the model allows it.
    """

    enabled: bool = True
    effort: Effort | None = None
    adaptive: bool | None = None
    display: Literal["summarized", "omitted"] | None = None
    budget_tokens: int | None = None
    hide: bool = False


ToolChoice: TypeAlias = Literal["auto", "any", "none"] | str


class OutputSchema(_Model):
    """The shape an answer must have (structured output).

    Give ``Request(output_schema=...)`` a JSON Schema (a dict) or a pydantic model
    class; it becomes this record. ``json_schema`` is what goes to the provider (each
    plugin translates it to what its API accepts); ``model`` is the class given, if any,
    so that ``Response.parsed`` is an instance of it. ``name`` names the schema on wires
    that want one (OpenAI's ``json_schema.name``, the forced tool in tool mode).
    """

    name: str = Field(default="output", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    json_schema: dict[str, Any]
    strict: bool = True
    model: Any = Field(default=None, exclude=True, repr=False)

    @classmethod
    def of(cls, value: Any) -> OutputSchema:
        """An OutputSchema from a dict (a JSON Schema), a pydantic model class, or an
        OutputSchema."""
        if isinstance(value, OutputSchema):
            return value
        if isinstance(value, type) and issubclass(value, BaseModel):
            return cls(name=value.__name__[:64], json_schema=value.model_json_schema(), model=value)
        if isinstance(value, Mapping):
            return cls(json_schema=dict(value))
        raise TypeError(
            f"output_schema takes a JSON Schema (a dict) or a pydantic model class, got "
            f"{type(value).__name__}"
        )


# The repetition guard's thresholds (see modelplug.contract.repetition): a plain
# dataclass, the [repetition] settings table and a Request's per-call value alike.
@dataclass(frozen=True)
class RepetitionGuard:
    """The guard's thresholds: the ``[repetition]`` settings table, or one call's
    ``repetition=RepetitionGuard(...)``. The defaults are the guard's; ``off`` disables it.

    :param off: True disables the guard (no detector runs, not even a plugin's).
    :param min_period: the shortest repeating block, in bytes, counted as a loop; below
        it ordinary formatting repeats freely.
    :param max_period: the longest block looked for; a scan costs time linear in it.
    :param min_copies: how many copies of the block, back to back, make a loop.
    :param min_span: the fewest bytes those copies must cover together (three copies of
        a short header are not a loop).
    :param scan_every: how many new characters (bytes, for ASCII) of a channel are
        gathered before it is scanned again: never per delta, which would cost more and
        find nothing sooner.
    :param min_scans: how many scans in a row must find the same run (same start, same
        period) at the channel's end before the stream is cut: 2 (the default) asks that
        a run meeting the thresholds still grows ``scan_every`` characters later. A loop
        never ends, so it is cut one scan later; exact repetition that ends (a quoted log
        whose stack frame repeats six times) is let through. 1 cuts at the first scan
        that sees a run.
    :param tool_copies: the tool kind: a call (same name, same arguments) made again
        after it returned the same result this many times in the conversation ends the
        turn with stop reason ``repetition``, the calls not delivered (0: never).
    """

    off: bool = False
    min_period: int = field(default=24, metadata={"gt": 0})
    max_period: int = field(default=1024, metadata={"gt": 0})
    min_copies: int = field(default=3, metadata={"gt": 1})
    min_span: int = field(default=512, metadata={"gt": 0})
    scan_every: int = field(default=256, metadata={"gt": 0})
    min_scans: int = field(default=2, metadata={"gt": 0})
    tool_copies: int = field(default=3, metadata={"gt": -1})

    def __post_init__(self) -> None:
        if self.max_period < self.min_period:
            raise ValueError(
                f"repetition max_period ({self.max_period}) is below min_period "
                f"({self.min_period}); make max_period at least min_period"
            )


class Request(_Model):
    """What to ask the model. Take one from a string, OpenAI-style dicts or a Request
    with :func:`modelplug.as_request`.

    Validation happens here, before any network call: every ``tool_result`` must answer
    a ``tool_use`` of the assistant message right before it.
    """

    system: str | None = None
    messages: list[Message] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    server_tools: list[ServerTool] = Field(default_factory=list)
    max_tokens: int | None = Field(default=None, gt=0)
    thinking: ThinkingRequest | None = None
    stop: list[str] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    top_k: int | None = Field(default=None, gt=0)
    seed: int | None = None
    # A thinking budget sized from the context window before the call is sent
    # (modelplug.client.auto_budget): "auto" fills thinking.budget_tokens with the window
    # less the counted prompt less ``reasoning_reserve`` (kept for the answer), or sends
    # no budget when that cannot be known.
    reasoning_budget: Literal["auto"] | None = None
    reasoning_reserve: int | None = Field(default=None, ge=0)
    # Sampling against repetition: OpenAI's pair (penalize by count seen, by seen at
    # all) and llama.cpp's multiplicative repeat_penalty (1.0 is off). A provider with no
    # such field says so in a Notice. ``repetition`` is the loop guard for this call:
    # None follows the settings, False turns it off, a RepetitionGuard sets thresholds.
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    repeat_penalty: float | None = Field(default=None, gt=0)
    repetition: bool | RepetitionGuard | None = None
    cache: bool | None = None
    # Structured output: the answer must fit this schema (see modelplug.client.structured);
    # ``output_retries`` re-asks the model that many times with the validation errors.
    output_schema: OutputSchema | None = None
    output_retries: int = Field(default=0, ge=0, le=5)
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("output_schema", mode="before")
    @classmethod
    def _accept_schema_or_model(cls, value: Any) -> Any:
        if value is None or isinstance(value, OutputSchema):
            return value
        if isinstance(value, Mapping) and "json_schema" in value:
            return value  # an OutputSchema as stored in JSON
        return OutputSchema.of(value)

    @model_validator(mode="after")
    def _check_conversation(self) -> Request:
        tool_names = [t.name for t in self.tools]
        dupes = {n for n in tool_names if tool_names.count(n) > 1}
        if dupes:
            raise ValueError(f"tool names must be unique; repeated: {', '.join(sorted(dupes))}")
        previous: Message | None = None
        for index, message in enumerate(self.messages):
            results = message.tool_results
            if results:
                if message.role != "user":
                    raise ValueError(
                        f"messages[{index}]: tool_result blocks belong in a user message"
                    )
                asked = {c.id for c in previous.tool_calls} if previous else set()
                for result in results:
                    if result.tool_use_id not in asked:
                        raise ValueError(
                            f"messages[{index}]: tool_result for {result.tool_use_id!r} has "
                            "no matching tool_use in the assistant message right before it; "
                            "send the assistant message that made the call first"
                        )
            if message.role == "user" and any(
                isinstance(b, ToolUseBlock | ThinkingBlock) for b in message.content
            ):
                raise ValueError(
                    f"messages[{index}]: tool_use and thinking blocks belong in an "
                    "assistant message"
                )
            previous = message
        named = self.tool_choice not in (None, "auto", "any", "none")
        if named and self.tool_choice not in tool_names:
            raise ValueError(
                f"tool_choice names {self.tool_choice!r}, which is not one of the "
                f"request's tools ({', '.join(tool_names) or 'none'})"
            )
        return self


RequestLike: TypeAlias = "str | Request | Mapping[str, Any] | Iterable[Message | Mapping[str, Any]]"


# ------------------------------------------------------------- usage, cost, response

StopReason: TypeAlias = Literal[
    "end_turn", "tool_use", "max_tokens", "refusal", "pause_turn", "repetition", "other"
]

#: Where a :class:`KeyBudget` was read: LiteLLM's ``GET /key/info``, LiteLLM's
#: per-response ``x-litellm-key-*`` headers, OpenRouter's ``GET /api/v1/key``, or the
#: modelplug gateway's own ``GET /key/info`` (a virtual key reading its budget).
BudgetSource: TypeAlias = Literal[
    "litellm-key-info", "litellm-headers", "openrouter", "modelplug-gateway"
]


class KeyBudget(_Model):
    """A key's spend against its budget, as its source states it.

    Amounts are in ``currency`` exactly as the source names it: ``"USD"`` (LiteLLM, the
    gateway), ``"credits"`` (OpenRouter's unit, not relabelled: its key endpoint does
    not say dollars), or None when the source names none. ``limit`` None means no limit
    is set (or none was reported); ``remaining`` is the source's own figure, else
    ``limit - spend`` when both are known. ``reset_at`` is when the spend resets and
    ``interval`` the period as the source names it (``"30d"``, ``"monthly"``); None
    when not reported or never. ``spend`` covers the current period when the budget
    resets, else all time.
    """

    source: BudgetSource
    spend: Decimal | None = None
    limit: Decimal | None = None
    remaining: Decimal | None = None
    reset_at: datetime | None = None
    interval: str | None = None
    currency: str | None = None


class Usage(_Model):
    """Token counts for one response. ``reported`` is False when they were estimated."""

    input: int = Field(default=0, ge=0)
    output: int = Field(default=0, ge=0)
    cache_read: int = Field(default=0, ge=0)
    cache_write: int = Field(default=0, ge=0)
    reasoning: int = Field(default=0, ge=0)
    web_searches: int = Field(default=0, ge=0)
    reported: bool = True
    # The key's budget as this response's headers stated it (LiteLLM's
    # x-litellm-key-spend and x-litellm-key-max-budget); None when they said nothing.
    # No reset time there: for that, Client.key_budget.
    key_budget: KeyBudget | None = None

    @property
    def total_input(self) -> int:
        """All input tokens: uncached input plus cache reads and writes."""
        return self.input + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        """All tokens: :attr:`total_input` plus output."""
        return self.total_input + self.output


class Cost(_Model):
    """What a response cost, in ``currency`` (USD unless the source says otherwise;
    OpenRouter's credits are US dollars, so its ``usage.cost`` is USD). ``source`` names
    the table or server and version it came from. ``breakdown`` splits the amount per
    token kind when the source knows it.
    """

    amount: Decimal
    currency: str = "USD"
    source: str
    breakdown: dict[str, Decimal] = Field(default_factory=dict)


class Timings(_Model):
    """Where one response's time went, as the servers said; None where they did not.

    From the model server's body (llama.cpp's ``timings`` object): ``prompt_n`` prompt
    tokens evaluated (``cache_n`` more were reused from the KV cache) in ``prompt_ms``;
    ``predicted_n`` tokens generated in ``predicted_ms``; ``draft_n`` tokens drafted by
    speculative decoding and ``draft_n_accepted`` of them kept.

    From a proxy's headers (``X-Corrallm-Queued-Ms``, ``X-Corrallm-Load-Ms``,
    ``X-Corrallm-Upstream-Ttfb-Ms``; the modelplug gateway stamps them too):
    ``queued_ms`` held in admission before being served, ``load_ms`` waiting for the
    model to be loaded, ``upstream_ttfb_ms`` from dispatch to the upstream's answer
    headers (the model's prompt evaluation, not waiting).
    """

    prompt_n: int | None = Field(default=None, ge=0)
    prompt_ms: float | None = Field(default=None, ge=0)
    predicted_n: int | None = Field(default=None, ge=0)
    predicted_ms: float | None = Field(default=None, ge=0)
    cache_n: int | None = Field(default=None, ge=0)
    draft_n: int | None = Field(default=None, ge=0)
    draft_n_accepted: int | None = Field(default=None, ge=0)
    queued_ms: float | None = Field(default=None, ge=0)
    load_ms: float | None = Field(default=None, ge=0)
    upstream_ttfb_ms: float | None = Field(default=None, ge=0)


class Repetition(_Model):
    """What a loop was, when the repetition guard closed a stream (stop reason
    ``repetition``), or when the same tool call kept returning the same result.

    ``channel`` is ``content`` or ``reasoning`` (``tool:<name>`` for the tool kind).
    ``period`` is the repeating block's length in UTF-8 bytes and ``copies`` how many
    copies of it came back to back; ``offset`` is the byte where the first copy starts
    in the channel's text. ``trimmed`` bytes of redundant copies were cut from the end
    of the kept text (one copy stays). ``sample`` is one copy, cut to 200 characters;
    ``detector`` names a plugin's detector (None: core's default).
    """

    kind: Literal["text", "tool"] = "text"
    channel: str
    period: int = Field(default=0, ge=0)
    copies: int = Field(ge=0)
    offset: int = Field(default=0, ge=0)
    trimmed: int = Field(default=0, ge=0)
    sample: str = ""
    detector: str | None = None


class Response(_Model):
    """The whole answer: the truth, where deltas are only for the screen.

    ``model`` is the ``provider/model`` that actually answered (after any fallback).
    ``cost`` is None when unknown; ``server_cost`` is what the server itself reported,
    kept as it came. ``price_factor`` scales token prices (0.5 for batch).
    ``metadata`` keeps what a server sent beyond the neutral model (timings, rate limits).
    """

    message: Message
    stop_reason: StopReason = "end_turn"
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    cost: Cost | None = None
    server_cost: Cost | None = None
    price_factor: float = Field(default=1.0, gt=0)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Where the time went, when a server said (see Timings). None otherwise.
    timings: Timings | None = None
    # With stop reason "repetition": what repeated (see Repetition). None otherwise.
    repetition: Repetition | None = None
    # With Request.output_schema: the validated value (an instance of the model class
    # given, else the parsed JSON). None otherwise.
    parsed: Any = None

    @property
    def text(self) -> str:
        """The text of the answer: its text blocks joined."""
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        """The tool calls the model made, in order."""
        return self.message.tool_calls

    @classmethod
    def partial(cls, model: str, text: str = "", thinking: str = "") -> Response:
        """What a stream had shown before it failed: its thinking and text so far, with
        stop reason ``other`` and usage marked as not reported."""
        content: list[Block] = []
        if thinking:
            content.append(ThinkingBlock(text=thinking))
        if text:
            content.append(TextBlock(text=text))
        return cls(
            message=Message(role="assistant", content=content, model=model),
            stop_reason="other",
            model=model,
            usage=Usage(reported=False),
        )


# ----------------------------------------------------------------------- embeddings


class EmbedRequest(_Model):
    """One embedding call: the texts in order, the vector size asked for (None: the
    model's own) and provider fields modelplug has no neutral name for (Gemini's
    ``task_type``, Ollama's ``truncate`` and ``keep_alive``, an OpenAI-compatible
    server's ``encoding_format``...)."""

    inputs: list[str] = Field(min_length=1)
    dimensions: int | None = Field(default=None, gt=0)
    extra: dict[str, Any] = Field(default_factory=dict)


class Embeddings(_Model):
    """The vectors of one embedding call, in the order of its inputs.

    ``model`` is the ``provider/model`` that answered (after any fallback); ``usage``
    counts input tokens only (``reported`` is False when estimated); ``cost`` is None
    when no price table knows the model. ``metadata`` keeps what the server sent beyond
    this (its own model name, timings).
    """

    vectors: list[list[float]]
    model: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost: Cost | None = None
    route: Route | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def dimensions(self) -> int:
        """The length of the vectors (0 when there are none)."""
        return len(self.vectors[0]) if self.vectors else 0


# --------------------------------------------------------------------------- events


class TextDelta(_Model):
    """A piece of text for the screen."""

    type: Literal["text_delta"] = "text_delta"
    text: str

    @classmethod
    def of(cls, text: str) -> TextDelta:
        """``TextDelta(text=text)``: the constructor an adapter's hot path calls.

        It is pydantic's own validated construction: of pydantic's public ways to build
        a model, the fastest for this one (``model_construct`` and ``model_copy`` run in
        Python and cost two to three times as much), and it writes into no slot of
        pydantic's behind its back."""
        return cls(text=text)


class ThinkingDelta(_Model):
    """A piece of readable thinking for the screen."""

    type: Literal["thinking_delta"] = "thinking_delta"
    text: str


class ToolCallStart(_Model):
    """The model started a tool call (its arguments are still streaming)."""

    type: Literal["tool_call_start"] = "tool_call_start"
    id: str
    name: str
    index: int = 0


class Notice(_Model):
    """Something the caller should hear about: a retry wait, a fallback switch, a batch
    status. ``message`` says why (and ``delay`` for how long, in seconds). Never holds a
    secret.
    """

    type: Literal["notice"] = "notice"
    kind: str
    message: str
    delay: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class Done(_Model):
    """The last event of every stream: the whole Response."""

    type: Literal["done"] = "done"
    response: Response


Event = Annotated[
    TextDelta | ThinkingDelta | ToolCallStart | Notice | Done, Field(discriminator="type")
]


# ---------------------------------------------------------------------- text tool calls


class ParsedText(_Model):
    """What a text-tool-call reader made of a reply.

    - ``text``: the prose without any calls (with ``final=False``, the input unchanged).
    - ``calls``: tool_use blocks read from the text (only with ``final=True``).
    - ``hold_from``: with ``final=False``, the index in the input from which text must
      not be shown yet because it may still become a call; None shows everything.
    - ``problems``: why something that looked like a call stayed text (e.g. truncation).
    """

    text: str
    calls: list[ToolUseBlock] = Field(default_factory=list)
    hold_from: int | None = None
    problems: list[str] = Field(default_factory=list)
