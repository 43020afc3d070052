"""modelplug-acme: the Acme chat API, streamed over server-sent events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from modelplug import (
    CallContext,
    Done,
    Event,
    Message,
    Provider,
    Request,
    Response,
    Route,
    Settings,
    StopReason,
    TextBlock,
    TextDelta,
    ToolCallStart,
    ToolUseBlock,
    Usage,
    declared_providers,
    estimated_usage,
    hookimpl,
    user_endpoint,
)
from modelplug_kit import ProviderHTTP, SSEFramer, WireErrors, provider_headers

TYPE = "acme"
BASE_URL = "https://api.acme.example/v1"
KEY_ENV = "ACME_API_KEY"
HTTP = ProviderHTTP("modelplug-acme", section="acme", errors=WireErrors("acme"))


@hookimpl
def modelplug_providers(settings: Settings) -> list[Provider]:
    return declared_providers(settings, TYPE, builtin=["acme"], example="acme-small")


@hookimpl
def modelplug_resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    name, _, model = spec.partition("/")
    if provider_type != TYPE or not model:
        return None
    endpoint = user_endpoint(
        settings, name, TYPE, builtin=name == "acme", base_url=BASE_URL, api_key_env=KEY_ENV
    )
    return None if endpoint is None else Route(provider=name, model=model, endpoint=endpoint)


@hookimpl
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> AsyncIterator[Event] | None:
    if route.endpoint.type != TYPE:
        return None
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    return stream(route, request, client, key)


def body(route: Route, request: Request) -> bytes:
    messages = [item for message in request.messages for item in turn(message)]
    tools = [{"name": t.name, "parameters": t.input_schema} for t in request.tools]
    wire = {"model": route.model, "system": request.system, "messages": messages}
    return json.dumps({**wire, "tools": tools, "max_tokens": request.max_tokens}).encode()


def turn(message: Message) -> list[dict[str, Any]]:
    """One neutral message as Acme's items: its text, its tool calls, its tool results."""
    items: list[dict[str, Any]] = []
    if message.text:
        items.append({"role": message.role, "content": message.text})
    for call in message.tool_calls:
        items.append({"role": "tool_call", "id": call.id, "name": call.name, "input": call.input})
    for result in message.tool_results:
        items.append({"role": "tool_result", "id": result.tool_use_id, "content": result.text})
    return items


class Reader:
    """What one answer has produced so far, read one event at a time."""

    def __init__(self, route: Route) -> None:
        self.route = route
        self.text: list[str] = []
        self.calls: list[ToolUseBlock] = []
        self.usage: Usage | None = None  # set by the done event: the end marker

    def feed(self, events: Iterable[tuple[str, str]]) -> Iterator[Event]:
        for name, data in events:
            try:
                event = self.read(name, json.loads(data))
            except (ValueError, LookupError, TypeError, AttributeError):
                raise HTTP.errors.transient(
                    self.route,
                    f"acme sent an event it cannot read: {data[:80]!r}",
                    reason="malformed stream event",
                    partial=self.partial(),
                ) from None
            if event is not None:
                yield event

    def read(self, name: str, event: Any) -> Event | None:
        if self.usage is not None:
            return None  # after the end marker nothing counts
        if name == "delta":
            self.text.append(event["text"])
            return TextDelta(text=event["text"])
        if name == "tool":
            call = ToolUseBlock(id=event["id"], name=event["name"], input=event["input"])
            self.calls.append(call)
            return ToolCallStart(id=call.id, name=call.name, index=len(self.calls) - 1)
        if name == "done":
            self.usage = Usage(input=event["usage"]["input"], output=event["usage"]["output"])
        if name == "error":
            raise HTTP.errors.in_stream(self.route, event, partial=self.partial())
        return None

    def partial(self, stop: StopReason = "other") -> Response:
        text = "".join(self.text)
        message = Message(
            role="assistant", content=[TextBlock(text=text), *self.calls], model=self.route.name
        )
        usage = self.usage or estimated_usage(0, len(text))
        return Response(message=message, stop_reason=stop, usage=usage, model=self.route.name)


async def stream(
    route: Route, request: Request, client: CallContext, key: str | None
) -> AsyncIterator[Event]:
    reader = Reader(route)
    url = f"{route.endpoint.base_url}/chat"
    auth = {"authorization": f"Bearer {key}"} if key else None  # a local server takes none
    headers = provider_headers(route, client.settings, auth=auth)
    framer = SSEFramer()
    payload = body(route, request)
    async with HTTP.stream(
        client, route, url, body=payload, headers=headers, whole=False
    ) as answer:
        answer.partial = reader.partial
        async for chunk in answer:
            for event in reader.feed(framer.feed(chunk)):
                yield event
        for event in reader.feed(framer.close()):  # a last event without its blank line
            yield event
    if reader.usage is None:
        raise HTTP.errors.transient(
            route, "the stream ended before its done event", reason="cut", partial=reader.partial()
        )
    yield Done(response=reader.partial("tool_use" if reader.calls else "end_turn"))
