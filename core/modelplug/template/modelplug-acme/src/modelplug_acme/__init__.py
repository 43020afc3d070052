"""modelplug-acme: the Acme chat API, streamed over server-sent events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from modelplug.plugin import (
    Client,
    Endpoint,
    Provider,
    ProviderHTTP,
    Route,
    Settings,
    SSEFramer,
    WireErrors,
    declared_providers,
    estimated_usage,
    hookimpl,
    provider_headers,
    user_endpoint,
)
from modelplug.types import (
    Done,
    Event,
    Message,
    Request,
    Response,
    StopReason,
    TextBlock,
    TextDelta,
    ToolCallStart,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

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
    endpoint = user_endpoint(settings, name, TYPE, base_url=BASE_URL, api_key_env=KEY_ENV)
    if endpoint is None and name == "acme":
        endpoint = Endpoint(type=TYPE, base_url=BASE_URL, api_key_env=KEY_ENV)
    return None if endpoint is None else Route(provider=name, model=model, endpoint=endpoint)


@hookimpl
def modelplug_stream(route: Route, request: Request, client: Client) -> AsyncIterator[Event] | None:
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
    for result in message.content:
        if isinstance(result, ToolResultBlock):
            items.append({"role": "tool_result", "id": result.tool_use_id, "content": result.text})
    return items


class Reader:
    """What one answer has produced so far, read one event at a time."""

    def __init__(self, route: Route) -> None:
        self.route = route
        self.text: list[str] = []
        self.calls: list[ToolUseBlock] = []
        self.usage: Usage | None = None  # set by the done event: the end marker

    def read(self, name: str, data: str) -> Event | None:
        event = json.loads(data)
        if name == "delta":
            self.text.append(event["text"])
            return TextDelta(text=event["text"])
        if name == "tool":
            call = ToolUseBlock(id=event["id"], name=event["name"], input=event["input"])
            self.calls.append(call)
            return ToolCallStart(id=call.id, name=call.name, index=len(self.calls) - 1)
        if name == "done":
            self.usage = Usage(input=event["usage"]["input"], output=event["usage"]["output"])
        return None

    def partial(self, stop: StopReason = "other") -> Response:
        text = "".join(self.text)
        message = Message(
            role="assistant", content=[TextBlock(text=text), *self.calls], model=self.route.name
        )
        usage = self.usage or estimated_usage(0, len(text))
        return Response(message=message, stop_reason=stop, usage=usage, model=self.route.name)


async def stream(
    route: Route, request: Request, client: Client, key: str | None
) -> AsyncIterator[Event]:
    reader = Reader(route)
    url = f"{route.endpoint.base_url}/chat"
    auth = {"authorization": f"Bearer {key}"} if key else None  # a local server takes none
    headers = provider_headers(route, client.settings, auth=auth)
    framer = SSEFramer()
    async with HTTP.stream(
        client, route, url, body=body(route, request), headers=headers
    ) as answer:
        answer.partial = reader.partial
        async for chunk in answer:
            for name, data in framer.feed(chunk):
                try:
                    event = reader.read(name, data)
                except (ValueError, KeyError, TypeError):
                    raise HTTP.errors.transient(
                        route,
                        f"acme sent an event it cannot read: {data[:80]!r}",
                        reason="malformed stream event",
                        partial=reader.partial(),
                    ) from None
                if event is not None:
                    yield event
    if reader.usage is None:
        raise HTTP.errors.transient(
            route, "the stream ended before its done event", reason="cut", partial=reader.partial()
        )
    yield Done(response=reader.partial("tool_use" if reader.calls else "end_turn"))
