"""The conformance suite: the faults every provider plugin meets, played on a real
loopback socket against yours.

A provider plugin that sends through the kit's HTTP path (:mod:`modelplug_kit.http`)
gets most of this behaviour from the kit; the suite checks that the plugin kept it, in
its own tests, with its own wire: a dead keep-alive connection resent once, a web page
or a JSON error where the stream should be, 401, 429 with Retry-After, 500, a refused
connection, a cut, a stall mid-stream and before the headers, a malformed event, a
consumer that stops early, a connection used again, the key never shown, and a tool call
cut by the output limit never handed back as a call to run.

Use it
------

Subclass :class:`ProviderConformance` in your plugin's tests (the class name must start
with ``Test`` for pytest to collect it) and declare your wire::

    # tests/test_conformance.py
    from pathlib import Path

    import modelplug_acme
    from modelplug_kit.testing import ProviderConformance, Recording

    RECORDINGS = Path(__file__).parent / "recordings"


    class TestAcmeConformance(ProviderConformance):
        plugin = modelplug_acme              # the module (or object) to register
        provider_type = "acme"               # type = "..." in [providers.NAME]
        section = "acme"                     # the settings table of its timeouts
        base_path = "/v1"                    # base_url = <server> + base_path
        stream_path = "/chat"                # the stream request, under base_url
        key_header = "x-api-key"             # the header the key travels in
        recording = Recording(
            RECORDINGS / "acme_text.sse",    # a recorded answer (# lines: its source)
            text="Hello there.",             # the text it yields
            cut_after=3,                     # chunks before a cut, a stall, a bad event
            cut_text="Hello",                # the text yielded by then
        )

That is all: ``pytest`` now runs every case below against the plugin. Declare one more
recording to be held to the rule for cut tool calls (the case is skipped, saying so,
until you do)::

        tool_call_cut = ToolCallCut(
            RECORDINGS / "acme_tool_cut.sse", # a tool-call answer cut inside its arguments,
            tool="weather",                  # ending with your wire's own stop for the
            arguments='{"city": "Os',        # output limit (finish_reason "length"...)
        )

The call must end in :class:`modelplug.TruncatedToolCallError` naming the tool and its
arguments as written, with no call in its partial Response: core raises it when the
plugin lists the cut call in ``Response.metadata["truncated_tool_calls"]`` (or hands on a
tool_use block whose input is not an object, at ``stop_reason="max_tokens"``). The suite needs
only the fixtures of core's pytest plugin (``make_client``, ``wire_server``,
``planted_key``), which every installation of modelplug has, so it runs from the
plugin's sdist as well; a ``wire_server`` fixture of your own (a module-scoped server,
say) is used instead when your conftest has one.

Each case builds a Client with only your plugin registered (``make_client(plugin)``) and
the provider ``conformance`` in the user's table: ``type = provider_type``,
``base_url``, ``api_key_env = key_env`` (the planted key, set for that Client only) and
``provider_settings``. It calls ``conformance/<model>`` with the prompt "hi".

Where your wire differs
-----------------------

Class attributes, with their defaults:

- ``base_path = ""``, ``key_header = "authorization"`` (the key must appear in it),
  ``key_env = "PLANTED_API_KEY"`` (the variable your plugin reads the key from when a
  user's table names none: keep it when the plugin honours ``api_key_env``),
  ``model = "conformance-model"`` (``stream_path`` may hold ``{model}``, as in
  ``"/models/{model}:streamGenerateContent?alt=sse"``), ``provider_settings = {}``
  (more keys for ``[providers.conformance]``), ``status_content_type =
  "application/json"``.

Methods to override:

- ``status_body(status, message) -> bytes``: the provider's error answer; by default
  ``{"error": {"message": message, "type": ...}}`` (the OpenAI and Anthropic shape).
  Ollama's would be ``{"error": message}``, Gemini's ``{"error": {"code": status,
  "message": message, "status": "UNAUTHENTICATED"}}``.
- ``malformed_event() -> bytes``: an event your reader cannot read, put after
  ``cut_after`` chunks; by default ``data: {"malformed": tru`` for an event stream, the
  same JSON as a line otherwise.
- ``key_sent(request) -> str``: where the recorded request carries the key (default:
  the ``key_header`` header); return ``request.path`` for a key in the query.
- ``provider_table(base_url) -> dict``: the whole ``[providers.conformance]`` table.
- ``client(base_url=None, **options) -> Client``: the Client a case calls, ``options``
  going to your ``[section]``; override to register more plugins.

A case that cannot apply to your provider is switched off the pytest way: override the
method with ``@pytest.mark.skip(reason="...")`` and say why.

Outside pytest's collection (a test of the suite itself), make an instance, call
:meth:`ProviderConformance.bind` with a ``make_client``, a :class:`WireServer` and a key,
and call a case method: it raises AssertionError when the plugin fails it.

The cases never assert a duration: the timeouts set are short (0.5 s) and the stalls
they end are long (60 s), and the server notices the client leaving, so no thread waits
the stall out.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import pytest
from modelplug import (
    Done,
    Event,
    ModelError,
    ModelplugError,
    Notice,
    TextDelta,
    ToolSpec,
    TruncatedToolCallError,
)

from modelplug_kit.testing.wire_server import (
    Chunk,
    RecordedRequest,
    WireServer,
    load_recording,
    refused_url,
    split_events,
)

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from modelplug import Client

__all__ = ["PROVIDER", "ProviderConformance", "Recording", "ToolCallCut"]

#: The provider name every case calls (``conformance/<model>``).
PROVIDER = "conformance"
PROMPT = "hi"
#: The timeout a stall case sets, and the stall it ends (far longer, so that what ends
#: the call can only be the timeout the error must name).
TIMEOUT = 0.5
STALL = 60.0
#: How long a case waits for the server to see a connection closed (it sees it within
#: milliseconds; this is only the bound for a plugin that never closes it).
CLOSE_WAIT = 10.0
SERVER_MESSAGE = "the conformance suite's server says no"
WEB_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head>"
    b"<body><form action='/login'>Sign in to continue</form></body></html>\n"
)
# Error types as OpenAI- and Anthropic-style APIs send them with each status.
ERROR_TYPES = {401: "authentication_error", 429: "rate_limit_error"}


@dataclass(frozen=True)
class Recording:
    """One recorded answer of the provider's stream endpoint.

    :param body: the bytes, or the path of a recording file (its leading ``#`` lines,
        which say where its bytes come from, are not sent).
    :param text: the text the answer yields: its deltas, and the Done's text.
    :param content_type: the Content-Type it is served with.
    :param cut_after: how many of its chunks come before a cut, a stall or a malformed
        event (default: half of them); the stream's end marker must come later.
    :param cut_text: the text the plugin has yielded by then (default: whatever it
        showed, which must then be a non-empty beginning of ``text``).
    :param chunks: its network writes (default: one per SSE event for an event stream,
        one per line otherwise).
    """

    body: bytes | str | Path
    text: str
    content_type: str = "text/event-stream"
    cut_after: int | None = None
    cut_text: str | None = None
    chunks: tuple[bytes, ...] | None = None

    def pieces(self) -> list[bytes]:
        """The chunks the server writes, one by one."""
        if self.chunks is not None:
            return list(self.chunks)
        data = self.body if isinstance(self.body, bytes) else load_recording(self.body)
        if "event-stream" in self.content_type:
            return split_events(data)
        return [line for line in data.splitlines(keepends=True) if line.strip()] or [data]

    def cut_point(self) -> int:
        """The index of the first chunk that does not arrive whole."""
        count = len(self.pieces())
        at = self.cut_after if self.cut_after is not None else max(1, count // 2)
        if not 0 < at < count:
            raise ValueError(
                f"Recording(cut_after={at}) must leave chunks on both sides of the cut: "
                f"the recording has {count} chunks"
            )
        return at


@dataclass(frozen=True)
class ToolCallCut:
    """A recorded tool-call answer cut by the output limit inside the call's arguments.

    :param body: the bytes, or the path of a recording file (``#`` lines: its source;
        say there where it was cut and that the stop reason was put in).
    :param tool: the name of the cut call.
    :param arguments: its arguments as far as the answer wrote them.
    :param content_type: the Content-Type it is served with.
    """

    body: bytes | str | Path
    tool: str
    arguments: str
    content_type: str = "text/event-stream"

    def data(self) -> bytes:
        """The bytes the server sends."""
        return self.body if isinstance(self.body, bytes) else load_recording(self.body)


class ProviderConformance:
    """The conformance cases, run against the plugin a subclass declares (see the
    module docstring for the attributes and the methods to override)."""

    # -- what a subclass declares -----------------------------------------------------

    plugin: ClassVar[object]
    provider_type: ClassVar[str]
    section: ClassVar[str]
    stream_path: ClassVar[str]
    recording: ClassVar[Recording]
    base_path: ClassVar[str] = ""
    key_header: ClassVar[str] = "authorization"
    key_env: ClassVar[str] = "PLANTED_API_KEY"
    model: ClassVar[str] = "conformance-model"
    provider_settings: ClassVar[Mapping[str, Any]] = {}
    status_content_type: ClassVar[str] = "application/json"
    tool_call_cut: ClassVar[ToolCallCut | None] = None

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "plugin",
        "provider_type",
        "section",
        "stream_path",
        "recording",
    )

    wire: WireServer
    key: str

    # -- set-up -----------------------------------------------------------------------

    @pytest.fixture(autouse=True)
    def _modelplug_conformance(
        self, make_client: Callable[..., Client], wire_server: WireServer, planted_key: str
    ) -> None:
        self.bind(make_client, wire_server, planted_key)

    def bind(self, make_client: Callable[..., Client], wire: WireServer, key: str) -> None:
        """What the cases run with: a ``make_client`` (core's fixture), a started
        WireServer and the key to plant. The suite's fixture calls it before each case."""
        missing = [name for name in self.REQUIRED if not hasattr(self, name)]
        if missing:
            raise TypeError(
                f"{type(self).__name__} must declare {', '.join(missing)} "
                "(see modelplug_kit.testing.conformance)"
            )
        self.wire = wire
        self.key = key
        self._make_client = make_client
        # A server shared by several tests has recorded theirs already.
        self._first_request = len(wire.requests)

    # -- hooks a subclass may override ---------------------------------------------------

    def status_body(self, status: int, message: str) -> bytes:
        """The provider's error answer with ``status`` saying ``message``."""
        default = "api_error" if status >= 500 or status < 300 else "invalid_request_error"
        kind = ERROR_TYPES.get(status, default)
        return json.dumps({"error": {"message": message, "type": kind}}).encode()

    def malformed_event(self) -> bytes:
        """An event the plugin's reader cannot read (JSON cut short)."""
        if "event-stream" in self.recording.content_type:
            return b'data: {"malformed": tru\n\n'
        return b'{"malformed": tru\n'

    def key_sent(self, request: RecordedRequest) -> str:
        """The part of a recorded request that carries the key."""
        return request.headers.get(self.key_header.lower(), "")

    def provider_table(self, base_url: str) -> dict[str, Any]:
        """The user's ``[providers.conformance]`` table."""
        return {
            "type": self.provider_type,
            "base_url": base_url,
            "api_key_env": self.key_env,
            **self.provider_settings,
        }

    def client(self, base_url: str | None = None, **options: Any) -> Client:
        """A Client with only the plugin (and core's built-ins), its provider pointing
        at the wire server (or ``base_url``), ``options`` in the plugin's section, the
        planted key in ``key_env``."""
        config: dict[str, Any] = {
            "providers": {PROVIDER: self.provider_table(base_url or self.base_url)}
        }
        if options:
            config[self.section] = options
        return self._make_client(self.plugin, config=config, environ={self.key_env: self.key})

    # -- helpers ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The loopback server's address with the plugin's ``base_path``."""
        return self.wire.url + self.base_path

    @property
    def spec(self) -> str:
        """The spec each case calls."""
        return f"{PROVIDER}/{self.model}"

    @property
    def path(self) -> str:
        """The stream request's path on the server (without its query)."""
        return (self.base_path + self.stream_path.format(model=self.model)).split("?")[0]

    def serve(
        self, body: bytes | Sequence[Chunk], content_type: str | None = None, **kw: Any
    ) -> None:
        """Queue an answer to the stream request (``kw`` as for ``WireServer.add``)."""
        self.wire.add(
            body,
            path=self.path,
            content_type=content_type or self.recording.content_type,
            **kw,
        )

    def serve_error(self, status: int, message: str, **kw: Any) -> None:
        """Serve one error answer with ``status`` in the provider's own error shape."""
        self.serve(self.status_body(status, message), self.status_content_type, status=status, **kw)

    def sent(self) -> list[RecordedRequest]:
        """The stream requests this case made. (Never put one in an ``assert``
        expression: pytest would print it, headers and key included.)"""
        requests = self.wire.requests[self._first_request :]
        return [r for r in requests if r.path.split("?")[0] == self.path]

    def sent_count(self) -> int:
        """How many stream requests this case made."""
        return len(self.sent())

    def connections(self) -> list[int]:
        """The connection each stream request of this case came on."""
        return [r.connection for r in self.sent()]

    def key_carried(self) -> list[bool]:
        """Whether each stream request of this case carried the key."""
        return [self.key in self.key_sent(r) for r in self.sent()]

    def events(self, client: Client) -> list[Event]:
        """The events of a call that must succeed."""
        try:
            return list(client.stream(self.spec, PROMPT))
        except ModelError as error:
            raise AssertionError(f"the call failed: {about(error)}") from error

    def fail(self, client: Client) -> tuple[ModelError, list[Event]]:
        """The ModelError a call ends in, and the events shown before it."""
        seen: list[Event] = []
        try:
            for event in client.stream(self.spec, PROMPT):
                seen.append(event)
        except ModelError as error:
            return error, seen
        raise AssertionError(
            f"the call ended with no error: {len(seen)} events, text {shown(seen)!r}"
        )

    def cut_text(self, seen: list[Event]) -> str:
        """The text expected before the cut: the recording's, or what was shown."""
        if self.recording.cut_text is not None:
            return self.recording.cut_text
        text = shown(seen)
        assert text and self.recording.text.startswith(text) and text != self.recording.text, (
            f"before the cut the plugin showed {text!r}, which is not a beginning of the "
            f"recording's text: set Recording(cut_after=..., cut_text=...)"
        )
        return text

    def cut_chunks(self, middle: list[Chunk]) -> list[Chunk]:
        """The recording with ``middle`` put before the chunk at the cut."""
        pieces: list[Chunk] = list(self.recording.pieces())
        at = self.recording.cut_point()
        return pieces[:at] + middle + pieces[at:]

    # -- the cases ------------------------------------------------------------------------

    def test_the_recorded_answer_streams_its_text_and_ends_with_one_done(self) -> None:
        self.serve(self.recording.pieces())
        events = self.events(self.client())
        dones = [e for e in events if isinstance(e, Done)]
        assert len(dones) == 1 and events[-1] is dones[0], "a stream ends with one Done"
        assert shown(events) == self.recording.text, "the deltas are the recording's text"
        assert dones[0].response.text == self.recording.text, "the Done holds the text"
        carried = self.key_carried()
        assert len(carried) == 1, f"one request to {self.path}, got {len(carried)}"
        assert carried[0], (
            f"the key was not sent in {self.key_header}: set key_header, or override key_sent"
        )

    def test_a_dead_keep_alive_connection_is_resent_once_without_a_notice(self) -> None:
        # What a pooled connection the server had closed looks like: the request is
        # read and the connection closes without a byte of an answer.
        self.serve(b"", hang_up=True)
        self.serve(self.recording.pieces())
        events = self.events(self.client())
        assert isinstance(events[-1], Done), "the resent request answers"
        assert events[-1].response.text == self.recording.text
        assert not [e for e in events if isinstance(e, Notice)], "a resend says nothing"
        bodies = [r.body for r in self.sent()]
        assert len(bodies) == 2, f"sent once and resent once, got {len(bodies)} requests"
        same = bodies[0] == bodies[1]
        assert same, "the resend is the same request"

    def test_a_web_page_with_status_200_is_not_retried_and_names_base_url(self) -> None:
        self.serve(WEB_PAGE, content_type="text/html; charset=utf-8")
        error, seen = self.fail(self.client())
        self.check_not_a_stream(error, seen)

    def test_a_web_page_sent_as_a_stream_is_refused_the_same_way(self) -> None:
        # A proxy's login page with the stream's own content type: the first byte tells.
        self.serve(WEB_PAGE)
        error, seen = self.fail(self.client())
        self.check_not_a_stream(error, seen)

    def check_not_a_stream(self, error: ModelError, seen: list[Event]) -> None:
        """The checks a web page served in place of an answer must pass."""
        check_classified(error)
        assert not error.retryable, f"the same page comes again: not retryable ({about(error)})"
        assert error.error_class.fallback, f"another provider may answer ({about(error)})"
        assert self.base_url in str(error), f"the message names the base URL: {error}"
        assert "base_url" in str(error), f"the message names the setting base_url: {error}"
        assert not shown(seen), "nothing of the page is shown as text"
        assert self.sent_count() == 1

    def test_a_json_error_with_status_200_is_a_classified_error(self) -> None:
        self.serve_error(200, SERVER_MESSAGE)
        error, seen = self.fail(self.client())
        check_classified(error)
        assert SERVER_MESSAGE in str(error), f"the server's words are quoted: {error}"
        assert not shown(seen)
        assert self.sent_count() == 1

    def test_401_is_an_auth_error_and_not_retried(self) -> None:
        self.serve_error(401, SERVER_MESSAGE)
        error, _ = self.fail(self.client())
        check_classified(error)
        assert error.kind == "auth", about(error)
        assert not error.retryable, about(error)
        assert error.error_class.fallback, f"another provider's key may work ({about(error)})"
        assert error.error_class.status == 401, about(error)
        assert SERVER_MESSAGE in str(error), f"the server's words are quoted: {error}"
        assert self.sent_count() == 1, "a 401 is not sent again"

    def test_429_is_a_rate_limit_that_reads_retry_after(self) -> None:
        self.serve_error(429, SERVER_MESSAGE, headers={"Retry-After": "7"})
        error, _ = self.fail(self.client())
        check_classified(error)
        assert error.kind == "rate_limit", about(error)
        assert error.retryable and error.error_class.fallback, about(error)
        assert error.error_class.retry_after == 7, f"Retry-After: 7 read ({about(error)})"
        assert error.error_class.status == 429, about(error)
        assert self.sent_count() == 1, "the plugin does not wait and retry: policies do"

    def test_500_once_is_transient_and_left_to_the_policies_to_retry(self) -> None:
        self.serve_error(500, SERVER_MESSAGE)
        error, _ = self.fail(self.client())
        check_classified(error)
        assert error.kind == "transient", about(error)
        assert error.retryable and error.error_class.fallback, about(error)
        assert error.error_class.status == 500, about(error)
        assert SERVER_MESSAGE in str(error), f"the server's words are quoted: {error}"
        assert self.sent_count() == 1, "the plugin does not retry by itself: policies do"

    def test_a_refused_connection_is_unreachable_and_names_the_base_url(self) -> None:
        base = refused_url() + self.base_path
        error, _ = self.fail(self.client(base_url=base))
        check_classified(error)
        assert error.kind == "unreachable", about(error)
        assert not error.retryable and error.error_class.fallback, about(error)
        assert base in str(error), f"the message names the base URL {base}: {error}"

    def test_a_cut_stream_is_transient_and_carries_the_text_before_the_cut(self) -> None:
        self.serve(self.recording.pieces(), drop_after=self.recording.cut_point())
        error, seen = self.fail(self.client())
        check_classified(error)
        assert error.kind == "transient", about(error)
        assert error.retryable and error.error_class.fallback, about(error)
        expected = self.cut_text(seen)
        assert shown(seen) == expected, "the text before the cut was shown as it came"
        check_partial(error, expected)
        assert self.sent_count() == 1, "an answer that began is not sent again"

    def test_a_stall_mid_stream_ends_at_read_timeout_with_the_partial(self) -> None:
        chunks: list[Chunk] = list(self.recording.pieces())
        at = self.recording.cut_point()
        chunks[at] = (STALL, self.recording.pieces()[at])
        self.serve(chunks)
        error, seen = self.fail(self.client(read_timeout=TIMEOUT))
        check_classified(error)
        assert error.kind == "transient", about(error)
        assert error.retryable and error.error_class.fallback, about(error)
        assert "read_timeout" in str(error), f"the message names read_timeout: {error}"
        assert f"[{self.section}]" in str(error), f"... and its table [{self.section}]: {error}"
        check_partial(error, self.cut_text(seen))
        (connection,) = self.connections()
        assert self.wire.wait_closed_by_client(connection, CLOSE_WAIT), (
            "the stalled connection is closed, not left open"
        )

    def test_a_server_that_sends_no_headers_ends_at_first_byte_timeout(self) -> None:
        self.serve(self.recording.pieces(), stall=STALL)
        error, seen = self.fail(self.client(first_byte_timeout=TIMEOUT))
        check_classified(error)
        assert error.kind == "transient", about(error)
        assert error.retryable and error.error_class.fallback, about(error)
        assert "first_byte_timeout" in str(error), f"the message names the setting: {error}"
        assert f"[{self.section}]" in str(error), f"... and its table [{self.section}]: {error}"
        assert error.partial is None and not shown(seen), "nothing had arrived"
        assert self.sent_count() == 1, "a request the server may be working on is not resent"

    def test_a_malformed_event_is_a_classified_error_with_the_partial(self) -> None:
        self.serve(self.cut_chunks([self.malformed_event()]))
        error, seen = self.fail(self.client())
        check_classified(error)
        assert error.error_class.fallback, f"another model may answer ({about(error)})"
        check_partial(error, self.cut_text(seen))

    def test_stopping_after_the_first_delta_closes_the_connection(self) -> None:
        self.serve(self.recording.pieces())
        self.serve(self.recording.pieces())
        client = self.client()

        async def run() -> tuple[TextDelta | None, bool, str]:
            try:
                stream = cast("AsyncGenerator[Event, None]", client.astream(self.spec, PROMPT))
                first = None
                async for event in stream:
                    if isinstance(event, TextDelta) and event.text:
                        first = event
                        break
                await stream.aclose()
                # Seen by the server before anything else could close that connection.
                stopped = self.connections()[0]
                seen = await asyncio.to_thread(self.wire.wait_closed_by_client, stopped, CLOSE_WAIT)
                try:
                    after = await client.acomplete(self.spec, PROMPT)
                except ModelError as error:
                    raise AssertionError(f"the next call failed: {about(error)}") from error
                return first, seen, after.text
            finally:
                await client.aclose()

        first, seen, text = asyncio.run(run())
        assert first is not None, "the stream showed a text delta"
        assert self.recording.text.startswith(first.text)
        assert seen, "the server saw the connection closed when the consumer stopped"
        assert text == self.recording.text, "the next call answers"
        first_call, next_call = self.connections()
        assert next_call != first_call, (
            "the next call came on a connection of its own (the stopped one is not reused)"
        )

    def test_a_complete_answer_leaves_its_connection_for_the_next_call(self) -> None:
        self.serve(self.recording.pieces())
        self.serve(self.recording.pieces())
        client = self.client()
        texts = [shown(self.events(client)) for _ in range(2)]
        assert texts == [self.recording.text] * 2
        first_call, next_call = self.connections()
        assert next_call == first_call, (
            "two calls, one connection: the first answer was not read to its end, or its "
            "connection was closed. (A Done yielded inside `async with HTTP.stream(...)` "
            "after the reader stopped at its end marker is one way: the consumer closes the "
            "stream at the Done, which leaves the block as an abort. Yield it after the block.)"
        )

    def test_the_planted_key_appears_in_no_error_repr_log_record_or_warning(self) -> None:
        client = self.client()
        # A server that echoes the key it refused, as some do on a 401.
        self.serve_error(401, f"Incorrect API key provided: {self.key}")
        self.serve(self.recording.pieces(), drop_after=self.recording.cut_point())
        self.serve(self.recording.pieces())
        texts: list[tuple[str, str]] = []
        with watching() as heard:
            for what in ("a 401 that echoes the key", "a cut stream"):
                error, seen = self.fail(client)
                texts += [*error_texts(what, error), (f"{what}: events", repr(seen))]
            events = self.events(client)
            texts.append(("a whole answer: events", repr(events)))
            refused = self.client(base_url=refused_url() + self.base_path)
            error, _ = self.fail(refused)
            texts += error_texts("a refused connection", error)
            texts += [
                ("the Client's repr", repr(client)),
                ("the Route's repr", repr(client.resolve(self.spec))),
            ]
        texts += heard
        carried = all(self.key_carried())
        assert carried, "the key was not sent on every request: the case would prove nothing"
        leaks = [where for where, text in texts if self.key in text]
        assert not leaks, f"the planted key appears in: {'; '.join(leaks)}"

    def test_a_tool_call_cut_by_the_output_limit_is_never_a_call_to_run(self) -> None:
        cut = self.tool_call_cut
        if cut is None:
            pytest.skip(
                f"{type(self).__name__} declares no tool_call_cut: declare a recorded "
                "tool-call answer cut inside its arguments (ToolCallCut), or switch this "
                "case off with @pytest.mark.skip(reason=...) saying why your wire cannot "
                "carry one"
            )
        self.serve(cut.data(), cut.content_type)
        seen: list[Event] = []
        try:
            for event in self.client().stream(self.spec, PROMPT, tools=[ToolSpec(name=cut.tool)]):
                seen.append(event)
        except TruncatedToolCallError as caught:
            error = caught
        except ModelError as other:
            raise AssertionError(
                f"a cut tool call must end in TruncatedToolCallError: {about(other)}"
            ) from other
        else:
            calls = [c.name for e in seen if isinstance(e, Done) for c in e.response.tool_calls]
            raise AssertionError(
                f"the call ended with a Done (tool calls {calls}): list the cut call in "
                'Response.metadata["truncated_tool_calls"] (id, name, arguments) and leave '
                "it out of the message, or keep its broken input as a string with "
                'stop_reason="max_tokens"'
            )
        assert not error.retryable and not error.error_class.fallback, about(error)
        written = {call.name: call.arguments for call in error.calls}
        assert cut.tool in written, f"the error names the cut call {cut.tool!r}: {written}"
        assert written[cut.tool] == cut.arguments, (
            f"the arguments as written are kept: {written[cut.tool]!r} != {cut.arguments!r}"
        )
        partial = error.partial
        assert partial is not None, "the Response so far is on the error"
        assert all(isinstance(c.input, dict) for c in partial.tool_calls), (
            "no broken call is left in the partial Response"
        )
        cut_ids = {call.id for call in error.calls if call.id}
        assert not [c for c in partial.tool_calls if c.id in cut_ids], (
            "the cut call is not among the partial Response's calls"
        )
        assert self.sent_count() == 1, "a cut call is not sent again"


# -- checks shared by the cases ------------------------------------------------------------


def shown(events: list[Event]) -> str:
    """The text the events showed."""
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def about(error: ModelError) -> str:
    c = error.error_class
    return (
        f"{type(error).__name__}(kind={c.kind!r}, retryable={c.retryable}, "
        f"fallback={c.fallback}, status={c.status}, retry_after={c.retry_after}): {error}"
    )


def check_classified(error: ModelError) -> None:
    """The plugin raised its own classified error: core's wrapping of a stray exception
    (a KeyError, a JSONDecodeError) keeps that exception as its cause."""
    cause = error.__cause__
    assert cause is None or isinstance(cause, ModelplugError), (
        f"a {type(cause).__name__} escaped the plugin and core wrapped it: raise the "
        f"plugin's classified error instead (WireErrors.transient, ...): {error}"
    )
    assert error.error_class.reason, f"the error class gives a reason ({about(error)})"


def check_partial(error: ModelError, text: str) -> None:
    assert error.partial is not None, f"the error carries the partial output ({about(error)})"
    assert error.partial.text == text, (
        f"the partial output is the text before the failure: {error.partial.text!r}, "
        f"expected {text!r}"
    )


def error_texts(what: str, error: BaseException) -> list[tuple[str, str]]:
    """Everything a caller may print of an error: its message, repr, attributes, and
    those of every error it chains."""
    texts: list[tuple[str, str]] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = f"{what}: {type(current).__name__}"
        texts += [
            (f"{name} message", str(current)),
            (f"{name} repr", repr(current)),
            (f"{name} args", repr(current.args)),
            (f"{name} attributes", repr(vars(current))),
        ]
        current = current.__cause__ or current.__context__
    return texts


@contextmanager
def watching() -> Iterator[list[tuple[str, str]]]:
    """Every log record (of every logger, at every level), every warning and what was
    printed while the block runs, as (where, text)."""
    heard: list[tuple[str, str]] = []
    printed = io.StringIO()

    class Ear(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                text = record.getMessage()
            except Exception:
                text = repr(record.msg)
            heard.append((f"a log record of {record.name}", f"{text} {record.exc_text or ''}"))

    root = logging.getLogger()
    ear = Ear(level=logging.DEBUG)
    level = root.level
    root.addHandler(ear)
    root.setLevel(logging.DEBUG)
    try:
        with (
            warnings.catch_warnings(record=True) as caught,
            redirect_stdout(printed),
            redirect_stderr(printed),
        ):
            warnings.simplefilter("always")
            yield heard
        heard += [(f"a warning ({w.category.__name__})", str(w.message)) for w in caught]
        heard.append(("what was printed (stdout, stderr)", printed.getvalue()))
    finally:
        root.setLevel(level)
        root.removeHandler(ear)
