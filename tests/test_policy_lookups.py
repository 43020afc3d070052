"""What a policy asks on every call (the policies of a kind, the stream hook that skips
some plugins) is found once, and found again when a plugin is added or removed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from modelplug import as_request, find_policies, hookimpl
from modelplug.client.client import Client
from modelplug.contract.types import Event, Notice, Request, Route
from modelplug.testing import FakeModel, text


class Policy:
    """A policy object of kind ``kind`` that says it was passed through."""

    def __init__(self, kind: str, said: str) -> None:
        self.modelplug_policy = kind
        self.said = said

    @hookimpl(wrapper=True)
    def modelplug_stream(self, route: Route, request: Request, client: Client) -> Any:
        inner = yield
        return None if inner is None else self.wrap(inner)

    async def wrap(self, inner: AsyncIterator[Event]) -> AsyncIterator[Event]:
        yield Notice(kind="info", message=self.said)
        async for event in inner:
            yield event


def notices(client: Client, exclude: list[object]) -> list[str]:
    stream = client.open_stream(client.resolve("fake/m"), as_request("hi"), exclude=exclude)

    async def read() -> list[str]:
        return [e.message async for e in stream if isinstance(e, Notice)]

    return asyncio.run(read())


def test_find_policies_sees_a_policy_registered_or_removed_after_it_was_asked(
    make_client: Any,
) -> None:
    client: Client = make_client(FakeModel())
    assert find_policies(client, "audit") == []
    first = Policy("audit", "first")
    client.register(first)
    assert find_policies(client, "audit") == [first]
    second = Policy("audit", "second")
    client.register(second)
    assert {id(p) for p in find_policies(client, "audit")} == {id(first), id(second)}
    client.unregister(first)
    assert find_policies(client, "audit") == [second]


def test_find_policies_answers_a_list_its_caller_may_change(make_client: Any) -> None:
    policy = Policy("audit", "only")
    client: Client = make_client(FakeModel(), policy)
    found = find_policies(client, "audit")
    found.append(object())  # the router adds itself to what it skips
    assert find_policies(client, "audit") == [policy]


def test_open_stream_skips_the_excluded_and_passes_a_policy_registered_since(
    make_client: Any,
) -> None:
    skipped = Policy("audit", "skipped")
    client: Client = make_client(FakeModel(steps=[text("a"), text("b"), text("c")]), skipped)
    assert notices(client, [skipped]) == []
    later = Policy("audit", "later")
    client.register(later)
    assert notices(client, [skipped]) == ["later"]
    client.unregister(later)
    assert notices(client, [skipped]) == []


def test_open_stream_skips_an_excluded_policy_registered_after_the_first_call(
    make_client: Any,
) -> None:
    client: Client = make_client(FakeModel(steps=[text("a"), text("b"), text("c")]))
    unseen = Policy("audit", "unseen")
    assert notices(client, [unseen]) == []  # not registered yet: nothing to skip
    client.register(unseen)
    assert notices(client, [unseen]) == []
    assert notices(client, []) == ["unseen"]
