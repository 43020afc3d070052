"""The one HTTP path of every provider plugin: send a request, check the answer, read it.

What differs between providers is the request body and the event reader; this module is
what they share, written once:

- one shared ``httpx2.AsyncClient`` per plugin and event loop, its pool sized by core's
  ``[http]`` table, never following a redirect (it would carry the key elsewhere); every
  request, ``http://`` and ``https://`` alike, goes through httpx2's public client API
  and its own transport (httpcore2 and h11 do the HTTP/1.1 framing, not this module);
- the timeouts every plugin reads under the same names (:class:`Timeouts`);
- one resend, at once and with no notice, when a send fails before any answer came
  (httpx2's ``RemoteProtocolError`` or ``WriteError`` while sending): a pooled
  keep-alive connection the server had closed (llama.cpp's server closes its connection
  after every stream while its headers say keep-alive);
- an error status, or a 200 that is not a stream (a web page, a JSON error), turned into
  the plugin's own classified error, Retry-After included (:class:`WireErrors`);
- a stall, a cut or a reset mid-stream turned into a transient error that carries the
  output produced so far and names the timeout setting;
- the connection closed at once when the consumer stops early, and otherwise the answer
  read to its end, so the pooled connection is used again by the next call.

A provider's stream reads::

    HTTP = ProviderHTTP("modelplug-acme", section="acme", errors=AcmeErrors("acme"))

    async with HTTP.stream(client, route, url, body=payload, headers=headers) as answer:
        answer.partial = reader.partial      # what a cut mid-stream carries
        async for chunk in answer:           # bytes, as they arrive
            ...
    # leaving the block normally reads what is left (the chunked end) and keeps the
    # connection; leaving it by an exception or an abort closes the connection at once.

httpx2 is imported on first use, never when a plugin imports this module.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic
from urllib.parse import urlsplit

from modelplug import ErrorClass, ModelError, class_for_status
from typing_extensions import TypeVar

if TYPE_CHECKING:
    import httpx2
    from modelplug import CallContext, Response, Route, Settings

__all__ = [
    "Answer",
    "ProviderHTTP",
    "StatusError",
    "Timeouts",
    "WireErrors",
    "error_body",
    "error_message",
    "error_type",
    "point_elsewhere",
    "provider_headers",
]

POSITIVE = {"gt": 0}
# An error body is quoted, not kept whole: a proxy may answer with megabytes.
ERROR_BODY_LIMIT = 64 * 1024
# What is left of an answer after its end marker is the chunked terminator, a few bytes;
# anything past these bounds is a server that holds the connection open: close it.
DRAIN_BYTES = 64 * 1024
DRAIN_SECONDS = 1.0

# A plugin whose options are the kit's Timeouts writes ``ProviderHTTP(...)`` without
# naming the record: the type parameter defaults to it (PEP 696).
OptionsT = TypeVar("OptionsT", bound="Timeouts", default="Timeouts")


@dataclass(frozen=True)
class Timeouts:
    """The timeouts of a provider plugin's ``[section]`` table, the same names in every
    plugin. A plugin's options record subclasses it (and may change the defaults).

    - ``connect_timeout``: seconds to open a connection (and to wait for a free one).
    - ``first_byte_timeout``: seconds from sending the request to the answer's headers
      (a local server evaluating a long prompt, or a reasoning model, may take minutes).
    - ``read_timeout``: the longest silence between two reads of an answer once it has
      begun; past it the call fails as transient, with what arrived.
    - ``write_timeout``: seconds to send the request.
    """

    connect_timeout: float = field(default=10.0, metadata=POSITIVE)
    first_byte_timeout: float = field(default=300.0, metadata=POSITIVE)
    read_timeout: float = field(default=300.0, metadata=POSITIVE)
    write_timeout: float = field(default=60.0, metadata=POSITIVE)


class StatusError(ModelError):
    """A provider answered with an error status, or a JSON error where its stream should
    be (``status_code`` None: an error event inside a stream). ``status_code``,
    ``headers`` (names in lower case) and ``body`` (parsed JSON, or text) are kept
    redacted: a server may echo the key it refused. ``request_id`` is the provider's id
    for the request, when a header gives one."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None,
        error_class: ErrorClass,
        route: Route | None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        partial: Response | None = None,
    ) -> None:
        from modelplug import redact_data

        self.status_code = status
        self.headers: dict[str, str] = redact_data(
            {str(k).lower(): str(v) for k, v in (headers or {}).items()}
        )
        self.request_id = self.headers.get("request-id") or self.headers.get("x-request-id")
        self.body = redact_data(body)
        super().__init__(message, error_class=error_class, route=route, partial=partial)


class WireErrors:
    """How one provider's failures become its own classified errors.

    The HTTP path calls these; a plugin calls :meth:`transient` for its own findings
    (a malformed event, a stream without its end marker). Subclass and override
    :meth:`status` for a provider's error bodies (its codes, its hints). Two class
    attributes name the plugin's exceptions: ``error`` for every failure, and
    ``status_error`` (a :class:`StatusError` subclass, usually also one of ``error``)
    for an error status; with no ``status_error``, a status is an ``error`` too.

    :param section: the plugin's settings table, named in messages about its timeouts.
    """

    error: type[ModelError] = ModelError
    status_error: type[StatusError] | None = None

    def __init__(self, section: str) -> None:
        self.section = section

    def make(
        self,
        message: str,
        error_class: ErrorClass,
        route: Route,
        *,
        partial: Response | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> ModelError:
        """The plugin's exception: a ``status_error`` for a status answer (keeping
        ``headers`` and ``body``), else an ``error``."""
        if status is not None and self.status_error is not None:
            return self.status_error(
                message,
                status=status,
                error_class=error_class,
                route=route,
                headers=headers,
                body=body,
                partial=partial,
            )
        return self.error(message, error_class=error_class, route=route, partial=partial)

    def status(
        self, status: int, headers: Mapping[str, str], body: bytes, route: Route
    ) -> ModelError:
        """The error for an error status, or for a JSON error answered with status 200:
        core's status table over the body's ``error`` (message and type, the shape most
        APIs share), Retry-After included. ``body`` is at most 64 KiB of the answer."""
        from modelplug import retry_after_from_headers

        data = error_body(body)
        message = error_message(data)
        retry_after = retry_after_from_headers(headers)
        found = class_for_status(
            status if status >= 300 else None,
            error_type=error_type(data),
            text=message,
            retry_after=retry_after,
        )
        if found is None:
            found = ErrorClass(
                kind="other" if status < 300 else "transient",
                retryable=status >= 500,
                fallback=True,
                retry_after=retry_after,
                status=status,
                reason="the server reported an error",
            )
        text = self.wording(f"{route.provider} answered {status}", message, retry_after=retry_after)
        return self.make(text, found, route, status=status, headers=headers, body=data)

    @staticmethod
    def wording(
        where: str,
        message: str,
        *,
        detail: str = "",
        hint: str = "",
        retry_after: float | None = None,
    ) -> str:
        """An error's one line, the same in every plugin: where it happened, the
        server's own words, a detail in parentheses (a code, a queue), a hint saying
        what to do, and the wait the server asked for."""
        text = f"{where}: {message}" if message else where
        if detail:
            text += f" ({detail})"
        if hint:
            text += f"; {hint}"
        if retry_after is not None:
            text += f"; retry after {retry_after:g} s"
        return text

    def unreachable(
        self, route: Route, *, base: str | None = None, settings: Settings | None = None
    ) -> ModelError:
        """Nothing listens at ``base`` (by default the route's base URL; a route of a
        provider's built-in URL may hold none): another model may still answer.

        One line: :meth:`nobody_at`'s words, then where the address is set, so a user
        whose server listens elsewhere knows which lines to write in which file
        (``settings``: the call's, whose user file is named; else the default path)."""
        at = base or route.endpoint.base_url or ""
        return self.make(
            f"{self.nobody_at(route, at)} {point_elsewhere(route, at, settings)}",
            ErrorClass(kind="unreachable", fallback=True, reason="connection refused"),
            route,
        )

    def nobody_at(self, route: Route, at: str) -> str:
        """The first words of :meth:`unreachable` (override for the server's own advice,
        ``Is it running (ollama serve)?``); the kit adds where the address is set."""
        return f"Cannot reach {route.provider} at {at}. Is the server running?"

    def transient(
        self,
        route: Route,
        message: str,
        *,
        reason: str,
        partial: Response | None = None,
        fallback: bool = True,
    ) -> ModelError:
        """A failure the same request may not meet again (a cut, a stall, a bad event)."""
        return self.make(
            message,
            ErrorClass(kind="transient", retryable=True, fallback=fallback, reason=reason),
            route,
            partial=partial,
        )

    def in_stream(self, route: Route, error: Any, *, partial: Response | None = None) -> ModelError:
        """An error the provider reported inside its stream, after a 200 (an ``error``
        event, a final event that says the call failed). ``error`` is the event's parsed
        body; it is classified by its message and type like a status answer's, and is
        transient when they say nothing conclusive (the server failed mid-answer)."""
        from modelplug import redact_data

        data = redact_data(error)
        message = error_message(data)
        found = class_for_status(None, error_type=error_type(data), text=message)
        if found is None:
            found = ErrorClass.transient("the server reported an error mid-stream")
        text = f"{route.provider} reported an error mid-stream: {message}"
        return self.make(text, found, route, partial=partial, body=data)

    def not_a_stream(self, route: Route, what: str, *, base: str | None = None) -> ModelError:
        """A 200 whose body is not the provider's stream (a login portal, a proxy's
        page): asking again gets the same page, so it is not retried. ``base`` as for
        :meth:`unreachable`."""
        return self.make(
            f"{route.provider} at {base or route.endpoint.base_url}: the server answered "
            f"{what}, not an event stream; check base_url (it may point at a web page or a "
            "proxy's login page)",
            ErrorClass(
                kind="other",
                retryable=False,
                fallback=True,
                status=200,
                reason="the answer was not a stream",
            ),
            route,
        )

    def not_json(self, answer: Answer, what: str) -> ModelError:
        """A call that should answer JSON (a probe) answered something else. The body
        is not quoted: it may be anything, the key a proxy refused included."""
        response = answer.response
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        route = answer.route
        return self.make(
            f"{route.provider} ({answer.method} {urlsplit(answer.url).path}): the answer "
            f"(status {response.status_code}, {kind or 'no content type'}) {what}; base_url "
            "may point at the wrong server (or at a proxy's login page)",
            ErrorClass(
                kind="other",
                fallback=True,
                status=response.status_code,
                reason="the answer was not JSON",
            ),
            route,
        )


def point_elsewhere(route: Route, at: str, settings: Settings | None = None) -> str:
    """Where the address of ``route``'s provider is set, for a message about a server
    that is not there: the user's own table when it has one, else the lines that make
    one (only the user's file may set a base URL). ``at`` is where the call went."""
    from modelplug import user_config_path

    name = route.provider
    path = settings.user_path if settings is not None else None
    where = path or user_config_path()
    opens = "(`modelplug config edit` opens it)"
    layer = _defining_layer(settings, name) if settings is not None else None
    if layer == "user file":
        return f"Its address is base_url under [providers.{name}] in {where} {opens}."
    if layer == "explicit":
        return f"Its address is base_url of providers.{name} in the settings given in code."
    if layer is not None:
        return f"Its address is base_url of providers.{name} in the {layer} settings."
    parts = urlsplit(at)
    example = f"{parts.scheme or 'http'}://HOST:PORT{parts.path}"
    return (
        f"If it listens elsewhere, add [providers.{name}] with "
        f'type = "{route.endpoint.type}" and base_url = "{example}" to {where} {opens}.'
    )


def _defining_layer(settings: Settings, provider: str) -> str | None:
    """The name of the last settings layer with a ``[providers.NAME]`` table."""
    for layer in reversed(settings.layers):
        tables = layer.data.get("providers")
        if isinstance(tables, dict) and provider in tables:
            return layer.name
    return None


def error_body(raw: bytes) -> Any:
    """An error answer's body as JSON (or its text), every string redacted before
    anything keeps it: some servers echo the key they refused, JSON-escaped or not."""
    from modelplug import redact_data

    text = raw.decode("utf-8", "replace")
    try:
        body: Any = json.loads(text) if text.strip() else None
    except ValueError:
        body = text
    return redact_data(body)


def error_message(body: Any) -> str:
    """The server's own words in an error body: ``error.message`` (or ``detail``,
    ``msg``), a string ``error``, a top-level ``message``; else the body, shortened."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            for key in ("message", "detail", "msg"):
                if error.get(key):
                    return str(error[key])
        elif isinstance(error, str) and error:
            return error
        if body.get("message"):
            return str(body["message"])
        return json.dumps(body)[:500]
    return str(body or "").strip()[:500]


def error_type(body: Any) -> str | None:
    """The error's ``type`` (or a string ``code``) as OpenAI- and Anthropic-style
    bodies carry it."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None
    for key in ("type", "code"):
        value = error.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def provider_headers(
    route: Route,
    settings: Settings,
    *,
    auth: Mapping[str, str] | None = None,
    accept: str = "text/event-stream",
) -> dict[str, str]:
    """The headers of a request to ``route``: JSON in, ``accept`` out, the provider's
    configured headers (values read from ``settings`` now: a Route holds only their
    names), then ``auth`` (the key's header), which wins over a configured header of the
    same name."""
    headers = {"content-type": "application/json", "accept": accept}
    headers.update(settings.provider_headers(route.provider))
    if auth:
        names = {name.lower() for name in auth}
        headers = {k: v for k, v in headers.items() if k.lower() not in names}
        headers.update(auth)
    return headers


@dataclass(frozen=True)
class _Shared(Generic[OptionsT]):
    """An event loop's AsyncClient and the options it was made with: the options are
    read (and warned about) once, not on every call."""

    http: httpx2.AsyncClient
    options: OptionsT
    # The timeouts a request is sent with (first_byte_timeout as the read timeout until
    # the headers arrive), made once: the same for every call.
    send_timeout: httpx2.Timeout

    async def aclose(self) -> None:
        # Client.aclose closes what async_http keeps, and that is this pair.
        await self.http.aclose()


class ProviderHTTP(Generic[OptionsT]):
    """One provider plugin's HTTP path (made once, at import: it imports nothing).

    :param name: the key of the shared client (the distribution's name).
    :param section: the plugin's settings table, read into ``options``.
    :param errors: how the plugin's failures are made.
    :param options: the plugin's options record, a :class:`Timeouts` subclass.
    """

    def __init__(
        self,
        name: str,
        *,
        section: str,
        errors: WireErrors,
        options: type[OptionsT] = Timeouts,  # type: ignore[assignment]
    ) -> None:
        self.name = name
        self.section = section
        self.errors = errors
        self.options_type = options

    def shared(self, client: CallContext) -> _Shared[OptionsT]:
        """The running loop's client and options, made on first use. Invalid options
        raise ConfigError here, naming the key, on every call until they are fixed."""

        def make() -> _Shared[OptionsT]:
            import httpx2
            from modelplug import read_options

            options = read_options(client.settings, self.section, self.options_type)
            timeout = httpx2.Timeout(
                connect=options.connect_timeout,
                read=options.read_timeout,
                write=options.write_timeout,
                pool=options.connect_timeout,
            )
            http = httpx2.AsyncClient(
                timeout=timeout, follow_redirects=False, limits=http_limits(client.settings)
            )
            send_timeout = httpx2.Timeout(
                connect=options.connect_timeout,
                read=options.first_byte_timeout,
                write=options.write_timeout,
                pool=options.connect_timeout,
            )
            return _Shared(http, options, send_timeout)

        shared: _Shared[OptionsT] = client.async_http(self.name, make)
        return shared

    def options(self, client: CallContext) -> OptionsT:
        """The plugin's options (checked once per event loop)."""
        return self.shared(client).options

    def stream(
        self,
        client: CallContext,
        route: Route,
        url: str,
        *,
        body: bytes | None,
        headers: Mapping[str, str],
        method: str = "POST",
        whole: bool = True,
        errors: WireErrors | None = None,
    ) -> Answer:
        """The answer to one streamed request, opened by ``async with``.

        :param whole: take a JSON answer as the whole response (a server that ignored
            ``stream: true``), handed over as :attr:`Answer.whole`; False refuses it.
        :param errors: this call's errors, when the plugin's messages need what only the
            call knows (the context window it asked for); else the plugin's own.
        """
        return Answer(
            self, client, route, url, method, body, headers, whole=whole, json=False, errors=errors
        )

    async def call_json(
        self,
        client: CallContext,
        route: Route,
        url: str,
        *,
        headers: Mapping[str, str],
        method: str = "GET",
        body: bytes | None = None,
        errors: WireErrors | None = None,
    ) -> dict[str, Any]:
        """The JSON object a call that is not streamed answers (a probe, a model list,
        an embedding batch); the plugin's classified error for anything else
        (unreachable, a status, a page or a body that is not a JSON object).

        :param errors: this call's errors, as for :meth:`stream`; else the plugin's own.
        """
        errors = errors or self.errors
        answer = Answer(
            self, client, route, url, method, body, headers, whole=True, json=True, errors=errors
        )
        async with answer:
            raw = await answer.read()
        if not raw.strip():
            raise errors.not_json(answer, "was empty, not JSON")
        try:
            data = json.loads(raw)
        except ValueError:
            raise errors.not_json(answer, "was not JSON") from None
        if not isinstance(data, dict):
            raise errors.not_json(answer, f"was JSON but not an object (a {type(data).__name__})")
        return data


# Parsing a URL costs tens of microseconds a call, and a plugin sends to the same few
# URLs again and again; httpx2's URL is immutable, so one parse serves every call.
@lru_cache(maxsize=256)
def _parsed_url(url: str) -> httpx2.URL:
    import httpx2

    return httpx2.URL(url)


def _request(
    shared: _Shared[Any], method: str, url: str, body: bytes | None, headers: Mapping[str, str]
) -> httpx2.Request:
    """One request, built once and sent again as is when a dead pooled connection
    took it (httpx2 keeps a request's body: a ``bytes`` body can be sent twice)."""
    return shared.http.build_request(
        method, _parsed_url(url), content=body, headers=dict(headers), timeout=shared.send_timeout
    )


class Answer:
    """One request's answer: sent on entering ``async with``, checked (status, kind of
    body), then read as chunks of bytes by ``async for``. See the module docstring."""

    __slots__ = (
        "_body",
        "_chunks",
        "_drained",
        "_ended",
        "_errors",
        "_headers",
        "_json",
        "_sniff",
        "_url",
        "_whole",
        "client",
        "http",
        "method",
        "options",
        "partial",
        "response",
        "route",
        "whole",
    )

    def __init__(
        self,
        http: ProviderHTTP[Any],
        client: CallContext,
        route: Route,
        url: str,
        method: str,
        body: bytes | None,
        headers: Mapping[str, str],
        *,
        whole: bool,
        json: bool,
        errors: WireErrors | None = None,
    ) -> None:
        self.http = http
        self._errors = errors if errors is not None else http.errors
        self.client = client
        self.route = route
        self._url = url
        self.method = method
        self._body = body
        self._headers = headers
        self._whole = whole
        self._json = json
        #: what a failure mid-stream carries: the reader's partial output so far.
        self.partial: Callable[[], Response | None] = _nothing
        #: a JSON answer to a streamed request (a server that ignored ``stream``).
        self.whole: bytes | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._ended = False
        self._drained = False
        self._sniff = True

    @property
    def headers(self) -> httpx2.Headers:
        """The answer's HTTP headers."""
        return self.response.headers

    @property
    def url(self) -> str:
        """The URL the request went to."""
        return self._url

    @property
    def base(self) -> str:
        """Where the request went, as messages name it: the route's base URL, or the
        URL's scheme and host when the route holds none (a provider's built-in URL)."""
        if self.route.endpoint.base_url:
            return self.route.endpoint.base_url
        parts = urlsplit(self._url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def errors(self) -> WireErrors:
        """The plugin's :class:`WireErrors`, for errors the reader finds in the stream."""
        return self._errors

    # -- sending ------------------------------------------------------------------------

    async def __aenter__(self) -> Answer:
        shared = self.http.shared(self.client)
        self.options = shared.options
        self.response = await self._send(shared)
        try:
            await self._check()
        except BaseException:
            await self.response.aclose()
            raise
        return self

    async def _send(self, shared: _Shared[Any]) -> httpx2.Response:
        import httpx2

        http = shared.http
        request = _request(shared, self.method, self._url, self._body, self._headers)
        try:
            try:
                response = await http.send(request, stream=True)
            except (httpx2.RemoteProtocolError, httpx2.WriteError):
                # Once, at once: a dead pooled connection, not a struggling server. Raised
                # by send, these came before a whole head: the server closed without an
                # answer (or sent a head so broken that a second try fails the same way).
                # A ReadError is not resent: a reset may follow a request it acted on.
                response = await http.send(request, stream=True)
        except httpx2.ConnectError:
            raise self.errors.unreachable(
                self.route, base=self.base, settings=self.client.settings
            ) from None
        except httpx2.TimeoutException as exc:
            raise self._timed_out(exc) from None
        except httpx2.TransportError as exc:
            raise self.errors.transient(
                self.route,
                f"the request to {self.route.provider} failed: {type(exc).__name__}",
                reason="connection lost",
            ) from None
        # The body is read with read_timeout between reads; httpcore2 reads this mapping
        # when the body's first read begins, which is after this point.
        request.extensions["timeout"] = {
            **request.extensions["timeout"],
            "read": self.options.read_timeout,
        }
        return response

    def _timed_out(self, exc: httpx2.TimeoutException) -> ModelError:
        import httpx2

        route, section, options = self.route, self.errors.section, self.options
        at = f"{route.provider} at {self.base}"
        if isinstance(exc, httpx2.ReadTimeout):
            message = (
                f"{at} sent no answer within {options.first_byte_timeout:g} s "
                f"(first_byte_timeout in [{section}])"
            )
        elif isinstance(exc, httpx2.PoolTimeout):
            message = (
                f"no free connection to {at} within {options.connect_timeout:g} s: "
                "raise [http] max_connections to run more calls at once"
            )
        elif isinstance(exc, httpx2.WriteTimeout):
            message = (
                f"the request to {at} could not be sent within {options.write_timeout:g} s "
                f"(write_timeout in [{section}])"
            )
        else:
            message = (
                f"could not connect to {at} within {options.connect_timeout:g} s "
                f"(connect_timeout in [{section}])"
            )
        return self.errors.transient(self.route, message, reason="timed out")

    async def _check(self) -> None:
        """Raise the classified error for an answer that is not a stream to read."""
        response = self.response
        status = response.status_code
        if status >= 300:
            raise self.errors.status(
                status, response.headers, await self._error_bytes(), self.route
            )
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if self._json:
            if kind == "text/html":
                raise self.errors.not_json(self, "was not JSON")
            return
        if kind == "text/html":
            raise self.errors.not_a_stream(self.route, "text/html", base=self.base)
        if kind == "application/json":
            raw = await self.read()
            data = _json_object(raw)
            # An error set, not the key alone: a whole Responses API object has "error": null.
            if data is not None and data.get("error"):
                raise self.errors.status(
                    status, response.headers, raw[:ERROR_BODY_LIMIT], self.route
                )
            if not self._whole:
                # Where only a stream is right, a JSON document is the server's way of
                # refusing (whatever its shape: {"message": ...} too): quoted, classified.
                raise self.errors.status(
                    status, response.headers, raw[:ERROR_BODY_LIMIT], self.route
                )
            self.whole = raw

    async def _error_bytes(self) -> bytes:
        import httpx2

        got = bytearray()
        chunks = self.response.aiter_bytes()
        try:
            async for chunk in chunks:
                got += chunk
                if len(got) >= ERROR_BODY_LIMIT:
                    break
        except httpx2.HTTPError:
            pass
        finally:
            await _close(chunks)  # a body cut at the limit leaves it suspended
        return bytes(got[:ERROR_BODY_LIMIT])

    # -- reading ------------------------------------------------------------------------

    async def read(self) -> bytes:
        """The whole body (a JSON answer, a probe's), with the mid-stream error mapping."""
        if self.whole is not None:
            return self.whole
        parts = [chunk async for chunk in self]
        return b"".join(parts)

    def __aiter__(self) -> Answer:
        return self

    async def __anext__(self) -> bytes:
        import httpx2

        if self._chunks is None:
            self._chunks = self.response.aiter_bytes()
        try:
            chunk = await self._chunks.__anext__()
        except StopAsyncIteration:
            self._ended = True
            raise
        except httpx2.ReadTimeout:
            raise self.errors.transient(
                self.route,
                f"{self.route.provider} sent nothing for {self.options.read_timeout:g} s "
                f"(read_timeout in [{self.errors.section}]); the server stalled",
                reason="the stream stalled",
                partial=self.partial(),
            ) from None
        except (httpx2.TransportError, httpx2.DecodingError) as exc:
            raise self.errors.transient(
                self.route,
                f"the connection to {self.route.provider} dropped mid-stream "
                f"({type(exc).__name__})",
                reason="connection lost",
                partial=self.partial(),
            ) from None
        if self._sniff and not self._json and chunk.strip():
            self._sniff = False
            if chunk.lstrip()[:1] == b"<":
                raise self.errors.not_a_stream(self.route, "text/html", base=self.base)
        return chunk

    # -- closing ------------------------------------------------------------------------

    async def finish(self) -> None:
        """Call when your reader meets its end marker: what is left of the answer (the
        chunked end, a trailing ``[DONE]``) is read now, so the connection goes back to
        the pool even when the caller stops reading at your Done."""
        if not self._ended:
            await self._drain()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if kind is None and not self._ended:
            await self._drain()
        if not self._ended:
            # Left mid-answer, httpx2's chain of byte generators is suspended. Closed now,
            # not by the garbage collector: that queues their closing as tasks on a loop
            # that may next run only while the interpreter is being torn down.
            await _close(self._chunks)
        # Unread bytes left (an abort, an error, a server that holds on): httpx2 closes
        # the connection rather than return it to the pool; the server sees the abort.
        await self.response.aclose()

    async def _drain(self) -> None:
        """Read the rest of an answer whose reader stopped at its end marker, so the
        connection goes back to the pool; give up (and close it) past small bounds."""
        import httpx2

        if self._drained:
            return  # once: a second try would only wait out the same bound again
        self._drained = True
        if self._chunks is None:
            self._chunks = self.response.aiter_bytes()
        left = DRAIN_BYTES
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                async for chunk in self._chunks:
                    left -= len(chunk)
                    if left < 0:
                        return
            self._ended = True
        except (TimeoutError, httpx2.HTTPError):
            return


def _nothing() -> None:
    return None


async def _close(chunks: AsyncIterator[bytes] | None) -> None:
    """Close an async generator of the answer's bytes, best effort: the connection is
    closed next whatever happens here."""
    aclose = getattr(chunks, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception:
        pass


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def http_limits(settings: Settings) -> httpx2.Limits:
    """httpx2 pool limits from the ``[http]`` table, for a shared AsyncClient."""
    import httpx2
    from modelplug import http_options

    options = http_options(settings)
    return httpx2.Limits(
        max_connections=options.max_connections,
        max_keepalive_connections=min(options.max_keepalive_connections, options.max_connections),
        keepalive_expiry=options.keepalive_expiry,
    )
