"""Counting before sending (modelplug.client.counting): the hook's answer is the count; a
None answer (the endpoint cannot count) is kept for the client's life; a failure is None
for that call only and asked again next time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from modelplug import hookimpl
from modelplug.client.client import Client
from modelplug.contract.errors import ErrorClass, ModelError
from modelplug.contract.settings import Settings
from modelplug.contract.types import Endpoint, Provider, Request, Route


class Counter:
    """A provider whose count endpoint answers from a script: an int, None or a failure."""

    def __init__(self, *answers: int | Exception | None) -> None:
        self.answers = list(answers)
        self.seen: list[str | Request] = []

    @hookimpl
    def modelplug_resolve(self, spec: str, settings: Settings) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "lab":
            return None
        return Route(provider="lab", model=model, endpoint=Endpoint(type="lab"))

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name="lab", type="lab")]

    @hookimpl
    def modelplug_count_tokens(
        self, route: Route, content: str | Request
    ) -> Awaitable[int | None] | None:
        if route.endpoint.type != "lab":
            return None
        self.seen.append(content)
        return self._answer()

    async def _answer(self) -> int | None:
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def unreachable() -> ModelError:
    return ModelError("connection refused", error_class=ErrorClass(kind="unreachable"))


def test_modelplug_count_tokens(make_client: Any) -> None:
    """The hook counts text alone and a whole prompt, each as given."""
    counter = Counter(7, 31)
    client: Client = make_client(counter)
    assert client.count_tokens("lab/m", "hello there") == 7
    assert client.count_prompt("lab/m", "hello", system="be brief", tools=None) == 31
    assert counter.seen[0] == "hello there"
    prompt = counter.seen[1]
    assert isinstance(prompt, Request)
    assert prompt.system == "be brief"
    assert prompt.messages[0].text == "hello"


def test_an_endpoint_that_cannot_count_is_not_asked_again(make_client: Any) -> None:
    counter = Counter(None, 5)
    client: Client = make_client(counter)
    assert client.count_tokens("lab/m", "a") is None
    assert client.count_tokens("lab/m", "b") is None
    assert len(counter.seen) == 1
    # Counting a whole prompt is another question, asked on its own.
    assert client.count_prompt("lab/m", "c") == 5


def test_a_failure_is_none_and_not_remembered(make_client: Any) -> None:
    counter = Counter(unreachable(), 12)
    client: Client = make_client(counter)
    assert client.count_tokens("lab/m", "a") is None
    assert client.count_tokens("lab/m", "a") == 12
    assert len(counter.seen) == 2


def test_a_count_that_is_not_a_whole_number_is_none(make_client: Any) -> None:
    client: Client = make_client(Counter(-3))
    assert client.count_tokens("lab/m", "a") is None


def test_the_async_forms_count(make_client: Any) -> None:
    client: Client = make_client(Counter(3, 4))

    async def both() -> tuple[int | None, int | None]:
        return (
            await client.acount_tokens("lab/m", "a"),
            await client.acount_prompt("lab/m", [{"role": "user", "content": "b"}]),
        )

    assert asyncio.run(both()) == (3, 4)


def test_a_provider_no_plugin_counts_for_is_none(make_client: Any) -> None:
    client: Client = make_client()
    assert client.count_tokens("echo", "hello") is None
    assert client.count_prompt("echo", "hello") is None
