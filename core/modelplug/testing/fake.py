"""A scripted model for tests: ``FakeModel``.

A step is a Response, a function of the Request that returns one (so a test can assert
what the model received), or an exception to raise. Every request is recorded; when the
script ends the next call raises :class:`ScriptExhaustedError`. Register it as a plugin:
``Client(plugins=[FakeModel([...])])``; it serves ``fake/<any model>`` (or the provider
name you give it).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, TypeAlias

from modelplug.contract.errors import ScriptExhaustedError
from modelplug.contract.hookspecs import hookimpl
from modelplug.contract.types import (
    Block,
    Done,
    Endpoint,
    Event,
    Message,
    ModelInfo,
    Price,
    Provider,
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
)

__all__ = ["FakeModel", "Step", "reply", "structured", "text", "thinking", "tool_use"]

Step: TypeAlias = Response | Callable[[Request], Response] | BaseException


def reply(
    *blocks: Block | str, stop_reason: StopReason | None = None, usage: Usage | None = None
) -> Response:
    """A Response made of ``blocks`` (strings become text blocks). The stop reason is
    ``tool_use`` when a block is a call, else ``end_turn``."""
    content: list[Block] = [TextBlock(text=b) if isinstance(b, str) else b for b in blocks]
    if stop_reason is None:
        stop_reason = (
            "tool_use" if any(isinstance(b, ToolUseBlock) for b in content) else "end_turn"
        )
    return Response(
        message=Message(role="assistant", content=content),
        stop_reason=stop_reason,
        usage=usage or Usage(),
    )


def text(value: str, *, usage: Usage | None = None) -> Response:
    """A plain text answer."""
    return reply(value, usage=usage)


def structured(value: Any, *, usage: Usage | None = None) -> Response:
    """A structured answer: ``value`` (a dict, list, or pydantic model instance) as the
    JSON text a model constrained to a schema would write."""
    if hasattr(value, "model_dump_json"):
        return reply(value.model_dump_json(), usage=usage)
    return reply(json.dumps(value, ensure_ascii=False), usage=usage)


def tool_use(name: str, input: dict[str, Any] | None = None, *, id: str | None = None) -> Response:
    """An answer that calls one tool."""
    block = ToolUseBlock(name=name, input=input or {})
    if id:
        block.id = id
    return reply(block)


def thinking(thought: str, answer: str, *, signature: str = "sig") -> Response:
    """An answer with a thinking block before the text."""
    wire = {"type": "thinking", "thinking": thought, "signature": signature}
    return reply(ThinkingBlock(text=thought, signature=signature, wire=wire), answer)


class FakeModel:
    """A scripted model, registered as a plugin.

    :param steps: the script; see the module docstring.
    :param provider: the provider name it serves (default ``fake``).
    :param price: USD per million tokens, if its responses should be priced.
    :param delay: seconds to wait before each event (to test cancellation).
    """

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        provider: str = "fake",
        price: Price | None = None,
        delay: float = 0.0,
    ) -> None:
        self.steps: list[Step] = list(steps)
        self.provider = provider
        self.name = f"fake:{provider}"
        self.price = price
        self.delay = delay
        self.requests: list[Request] = []
        self.routes: list[Route] = []

    def add(self, *steps: Step) -> FakeModel:
        """Append steps to the script; returns the model, for chaining."""
        self.steps.extend(steps)
        return self

    @property
    def remaining(self) -> int:
        """How many scripted steps are left."""
        return len(self.steps)

    @hookimpl
    def modelplug_resolve(self, spec: str, provider_type: str | None) -> Route | None:
        """Serve ``{provider}/...`` specs (the hook: see
        :func:`modelplug.contract.hookspecs.modelplug_resolve`)."""
        provider, _, model = spec.partition("/")
        if provider != self.provider or provider_type not in (None, self.provider):
            return None
        return Route(
            provider=self.provider,
            model=model or "model",
            endpoint=Endpoint(type=self.provider),
            info=ModelInfo(
                context_window=200_000,
                max_output_tokens=32_000,
                supports_tools=True,
                # Scripted answers are the JSON itself, as a constrained model writes it.
                structured_output="native",
                price=self.price,
                price_source="fake" if self.price else None,
            ),
        )

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        """Declare the fake provider's name (the hook)."""
        return [Provider(name=self.provider, type=self.provider)]

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event] | None:
        """Play the next scripted step for a route of this fake provider (the hook)."""
        if route.endpoint.type != self.provider:
            return None
        return self._play(route, request)

    async def _play(self, route: Route, request: Request) -> AsyncIterator[Event]:
        self.requests.append(request)
        self.routes.append(route)
        if not self.steps:
            raise ScriptExhaustedError(
                f"the fake model {route.name} was called {len(self.requests)} times but its "
                "script has no step left; add one with FakeModel.add(...)"
            )
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        response = step(request) if callable(step) else step
        response = response.model_copy(deep=True)
        response.model = route.name
        response.message.model = route.name
        for index, block in enumerate(response.message.content):
            if self.delay:
                await asyncio.sleep(self.delay)
            if isinstance(block, TextBlock) and block.text:
                yield TextDelta(text=block.text)
            elif isinstance(block, ThinkingBlock) and block.text:
                if request.thinking is None or not request.thinking.hide:
                    yield ThinkingDelta(text=block.text)
            elif isinstance(block, ToolUseBlock):
                yield ToolCallStart(id=block.id, name=block.name, index=index)
        if not response.usage.input and not response.usage.output:
            response.usage = _estimate(request, response)
        yield Done(response=response)


def _estimate(request: Request, response: Response) -> Usage:
    # 4 characters per token, like the adapters' estimate, flagged as not reported.
    sent = len(request.system or "") + sum(
        len(json.dumps(m.model_dump(mode="json"))) for m in request.messages
    )
    got = len(json.dumps(response.message.model_dump(mode="json")))
    return Usage(input=max(1, sent // 4), output=max(1, got // 4), reported=False)
