"""Stream one call: the request, the SSE reading, the events and the final Response.

One JSON parse per event: the kit's SSEFramer cuts the bytes into events, each is a
whole ``GenerateContentResponse`` read by :class:`~modelplug_gemini.reader.Reader`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from modelplug.plugin import ConfigError, SSEFramer, redact
from modelplug.types import Done, Event, Request, Route

from .auth import auth_headers, vertex_credentials
from .errors import GeminiError, auth_failed, http_error, malformed_call, stream_broken, unreachable
from .http import Target, shared_http, target_for
from .reader import MALFORMED, Reader
from .request import build_body
from .routes import VERTEX

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Client

__all__ = ["Parser", "open_stream", "stream_generate"]


async def open_stream(
    route: Route, client: Client, body: bytes | None
) -> tuple[httpx2.Response, Target]:
    """Send one authenticated request about the route's model: with a ``body``, the
    ``streamGenerateContent`` POST; without, a GET of the model resource (the probe).
    The response is streamed; the caller closes it."""
    import httpx2

    shared = shared_http(client)
    credentials = None
    project = None
    if route.endpoint.type == VERTEX:
        credentials, project = vertex_credentials(shared, route)
    target = target_for(route, client, project)
    if route.endpoint.type == VERTEX and not target.project:
        raise ConfigError(
            f"the provider {route.provider} needs a Google Cloud project: set vertex_project "
            "under [gemini] in your settings, or GOOGLE_CLOUD_PROJECT"
        )
    try:
        headers = await auth_headers(client, route, credentials)
    except Exception as exc:
        if type(exc).__module__.startswith("google.auth"):
            raise auth_failed(route, redact(str(exc))[:300]) from None
        raise
    headers["content-type"] = "application/json"
    http = shared.http
    if body is None:
        request = http.build_request("GET", target.model_url, headers=headers)
    else:
        request = http.build_request("POST", target.stream_url, content=body, headers=headers)
    try:
        response = await http.send(request, stream=True)
    except httpx2.ConnectError:
        raise unreachable(route, target.base) from None
    except httpx2.TimeoutException as exc:
        raise stream_broken(
            route,
            f"{route.provider} did not answer in time ({type(exc).__name__})",
            reason="timed out",
        ) from None
    except httpx2.TransportError as exc:
        raise stream_broken(
            route,
            f"the request to {route.provider} failed: {type(exc).__name__}",
            reason="connection lost",
        ) from None
    return response, target


class Parser:
    """Bytes in, events out, then the Response: the whole reading of one stream, apart
    from the network (so it can be fed any split of recorded bytes)."""

    def __init__(self, route: Route, request: Request) -> None:
        self.route = route
        self.reader = Reader(route, request)
        self.framer = SSEFramer()

    def feed(self, chunk: bytes) -> list[Event]:
        out: list[Event] = []
        for _, data in self.framer.feed(chunk):
            out.extend(_read(self.reader, self.route, data))
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        for _, data in self.framer.close():
            out.extend(_read(self.reader, self.route, data))
        return out

    def finish(self, sent: int) -> Done:
        """The Done event, or the classified error of a stream that did not finish."""
        reader, route = self.reader, self.route
        if not reader.finished:
            raise stream_broken(
                route,
                f"the stream from {route.provider} ended before the model finished "
                "(no finishReason)",
                reason="the stream ended early",
                partial=reader.partial(),
            )
        if reader.finish_reason in MALFORMED:
            raise malformed_call(route, reader.finish_message or "", reader.partial())
        return Done(response=reader.response(sent))


async def stream_generate(route: Route, request: Request, client: Client) -> AsyncIterator[Event]:
    """The events of one call, ending with exactly one Done."""
    import httpx2

    body = build_body(request, route)
    payload = json.dumps(body, ensure_ascii=False).encode()
    response, target = await open_stream(route, client, payload)
    parser = Parser(route, request)
    try:
        if response.status_code >= 300:
            try:
                raw = await response.aread()
            except httpx2.HTTPError:
                raw = b""
            raise http_error(response.status_code, response.headers, raw, route)
        try:
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    yield event
            for event in parser.close():
                yield event
        except httpx2.ReadTimeout:
            raise stream_broken(
                route,
                f"{route.provider} sent nothing for {target.read_timeout:g} s (read_timeout); "
                "the stream stalled",
                reason="the stream stalled",
                partial=parser.reader.partial(),
            ) from None
        except (httpx2.TransportError, httpx2.DecodingError) as exc:
            raise stream_broken(
                route,
                f"the connection to {route.provider} dropped mid-stream ({type(exc).__name__})",
                reason="connection lost",
                partial=parser.reader.partial(),
            ) from None
        yield parser.finish(len(payload))
    finally:
        await response.aclose()


def _read(reader: Reader, route: Route, data: str) -> list[Event]:
    try:
        event = json.loads(data)
    except ValueError:
        raise _malformed(route, data, reader) from None
    if type(event) is not dict:
        raise _malformed(route, data, reader)
    try:
        events = reader.event(event)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        # A part of a shape no model sends (a name that is not a string, say): the
        # stream is unreadable from here, and what came before is kept.
        raise stream_broken(
            route,
            f"{route.provider} sent an event this plugin cannot read ({type(exc).__name__})",
            reason="malformed stream event",
            partial=reader.partial(),
        ) from None
    if reader.error is not None:
        raise http_error(
            None, {}, json.dumps({"error": reader.error}).encode(), route, reader.partial()
        )
    return events


def _malformed(route: Route, data: str, reader: Reader) -> GeminiError:
    return stream_broken(
        route,
        f"{route.provider} sent an event that is not a JSON object: {redact(data.strip())[:200]!r}",
        reason="malformed stream event",
        partial=reader.partial(),
    )
