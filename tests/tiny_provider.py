"""A provider plugin as small as one can be, on the kit's HTTP path, for the tests of
the conformance suite (tests/test_conformance_suite.py): it serves the type ``tiny``,
posts to ``<base_url>/generate`` with the key in ``x-tiny-key``, and reads
``data: {"text": "..."}`` events up to ``data: [DONE]``.

``Tiny`` keeps every rule; each subclass below breaks one, the way a plugin written in
a hurry would, so that the suite can be shown to catch it.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from collections.abc import AsyncIterator
from typing import Any

from modelplug import Client, Endpoint, Route, Settings, hookimpl
from modelplug.contract.types import Done, Event, Message, Request, Response, TextBlock, TextDelta
from modelplug_kit import ProviderHTTP, SSEFramer, WireErrors, provider_headers

TYPE = "tiny"
# A recorded-looking answer in this wire's shape (invented for these tests).
ANSWER = (
    b'data: {"text": "Small"}\n\n'
    b'data: {"text": " is"}\n\n'
    b'data: {"text": " beautiful."}\n\n'
    b"data: [DONE]\n\n"
)
TEXT = "Small is beautiful."


class Tiny:
    """The provider, registered as an object: ``Client(plugins=[Tiny()])``."""

    name = "tiny"  # the plugin's name, so its settings table is [tiny]
    section = "tiny"

    def __init__(self) -> None:
        # One HTTP path per instance: two variants on one Client must not share a pool.
        self.http = ProviderHTTP(
            f"tiny-{id(self)}", section=self.section, errors=self.errors(self.section)
        )

    def errors(self, section: str) -> WireErrors:
        return WireErrors(section)

    @hookimpl
    def modelplug_resolve(
        self, spec: str, settings: Settings, provider_type: str | None
    ) -> Route | None:
        provider, _, model = spec.partition("/")
        own = settings.providers.get(provider)
        if provider_type != TYPE or own is None:
            return None
        endpoint = Endpoint(type=TYPE, base_url=own.base_url, api_key_env=own.api_key_env)
        return Route(provider=provider, model=model, endpoint=endpoint)

    @hookimpl
    def modelplug_stream(
        self, route: Route, request: Request, client: Client
    ) -> AsyncIterator[Event] | None:
        if route.endpoint.type != TYPE:
            return None
        key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
        return self.answer(route, client, key or "")

    async def answer(self, route: Route, client: Client, key: str) -> AsyncIterator[Event]:
        text: list[str] = []

        def partial() -> Response:
            return reply(route, "".join(text), stop="other")

        headers = provider_headers(route, client.settings, auth={"x-tiny-key": key})
        url = f"{route.endpoint.base_url}/generate"
        done = False
        async with self.http.stream(client, route, url, body=b"{}", headers=headers) as answer:
            answer.partial = partial
            framer = SSEFramer()
            async for chunk in answer:
                for _, data in framer.feed(chunk):
                    done = data == "[DONE]"
                    if done:
                        break
                    piece = self.read(route, data, partial)
                    text.append(piece)
                    yield TextDelta(text=piece)
                if done:
                    break
        # The Done after the block: the consumer closes this generator once it has the
        # Done, and a block left that way closes the connection instead of keeping it.
        if not done:
            raise self.http.errors.transient(
                route, "tiny: the stream ended before [DONE]", reason="cut", partial=partial()
            )
        yield Done(response=reply(route, "".join(text)))

    def read(self, route: Route, data: str, partial: Any) -> str:
        try:
            return str(json.loads(data)["text"])
        except (ValueError, KeyError, TypeError):
            raise self.http.errors.transient(
                route,
                "tiny sent an event it cannot read",
                reason="malformed event",
                partial=partial(),
            ) from None


def reply(route: Route, text: str, stop: str = "end_turn") -> Response:
    message = Message(role="assistant", content=[TextBlock(text=text)] if text else [])
    return Response(message=message, stop_reason=stop, model=route.name)  # type: ignore[arg-type]


# -- each breaks one rule -------------------------------------------------------------------


class WarnsWithTheKey(Tiny):
    """Says which key it sends, in a warning."""

    async def answer(self, route: Route, client: Client, key: str) -> AsyncIterator[Event]:
        warnings.warn(f"tiny: sending with the key {key}", stacklevel=1)
        async for event in super().answer(route, client, key):
            yield event


class PrintsWhatItSends(Tiny):
    """Prints its request headers, key and all, to stderr (a debugging aid left in)."""

    async def answer(self, route: Route, client: Client, key: str) -> AsyncIterator[Event]:
        print(f"tiny: POST /generate x-tiny-key={key}", file=sys.stderr)
        async for event in super().answer(route, client, key):
            yield event


class LogsAKeyItNeverRegistered(Tiny):
    """Reads the key from the environment itself, not through ``settings.api_key``, so
    the redactor never learns it, and logs what it sends."""

    @hookimpl
    def modelplug_stream(
        self, route: Route, request: Request, client: Client
    ) -> AsyncIterator[Event] | None:
        if route.endpoint.type != TYPE:
            return None
        key = client.settings.getenv(route.endpoint.api_key_env or "") or ""
        logging.getLogger("tiny").debug("sending with x-tiny-key: %s", key)
        return self.answer(route, client, key)


class OwnClientEveryCall(Tiny):
    """Opens its own HTTP client for every call: no connection is ever used twice."""

    async def answer(self, route: Route, client: Client, key: str) -> AsyncIterator[Event]:
        self.calls = getattr(self, "calls", 0) + 1
        self.http = ProviderHTTP(
            f"tiny-{id(self)}-{self.calls}", section=self.section, errors=self.errors(self.section)
        )
        async for event in super().answer(route, client, key):
            yield event


class ReadsTheWholeBodyFirst(Tiny):
    """Reads the whole answer before showing any of it: a consumer that stops early
    cannot close anything, the body has been read already."""

    async def answer(self, route: Route, client: Client, key: str) -> AsyncIterator[Event]:
        headers = provider_headers(route, client.settings, auth={"x-tiny-key": key})
        url = f"{route.endpoint.base_url}/generate"
        async with self.http.stream(client, route, url, body=b"{}", headers=headers) as answer:
            raw = await answer.read()
        text: list[str] = []
        for _, data in SSEFramer().feed(raw):
            if data == "[DONE]":
                yield Done(response=reply(route, "".join(text)))
                return
            text.append(self.read(route, data, lambda: None))
            yield TextDelta(text=text[-1])


class LetsJSONErrorsEscape(Tiny):
    """Parses every event with a bare json.loads: a malformed one escapes as a
    JSONDecodeError."""

    def read(self, route: Route, data: str, partial: Any) -> str:
        return str(json.loads(data)["text"])


class NamesTheWrongTable(Tiny):
    """Its errors name a settings table it does not read: a user told to raise
    read_timeout in [tiny-http] changes nothing."""

    def errors(self, section: str) -> WireErrors:
        return WireErrors("tiny-http")


class RetriesEverything(Tiny):
    """Calls every status error transient and retryable, a 401 too."""

    def errors(self, section: str) -> WireErrors:
        class Blunt(WireErrors):
            def status(self, status: int, headers: Any, body: bytes, route: Route) -> Any:
                return self.transient(route, f"tiny answered {status}", reason="error")

        return Blunt(section)


class NotOnTheKit(Tiny):
    """Sends with an httpx2 client of its own, one per call, and none of the kit's
    care: a pooled connection the server had closed is an error, not a resend."""

    async def answer(self, route: Route, client: Client, key: str) -> AsyncIterator[Event]:
        import httpx2

        text: list[str] = []
        url = f"{route.endpoint.base_url}/generate"
        try:
            async with (
                httpx2.AsyncClient() as http,
                http.stream("POST", url, content=b"{}", headers={"x-tiny-key": key}) as got,
            ):
                framer = SSEFramer()
                async for chunk in got.aiter_bytes():
                    for _, data in framer.feed(chunk):
                        if data == "[DONE]":
                            yield Done(response=reply(route, "".join(text)))
                            return
                        text.append(self.read(route, data, lambda: None))
                        yield TextDelta(text=text[-1])
        except httpx2.HTTPError as exc:
            raise self.http.errors.transient(
                route, f"tiny: {type(exc).__name__}", reason="failed"
            ) from None
