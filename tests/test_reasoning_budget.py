"""Thinking budgets sized from the window: modelplug.reasoning_budget (the arithmetic),
``reasoning_budget="auto"`` per call and in the settings, Client.thinking_budget."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import DEFAULT_REASONING_RESERVE, hookimpl, reasoning_budget
from modelplug.client.client import Client
from modelplug.contract.errors import ConfigError
from modelplug.contract.settings import Settings
from modelplug.contract.types import (
    Done,
    Endpoint,
    Event,
    Message,
    Notice,
    Provider,
    Request,
    Response,
    Route,
    TextBlock,
)


class Lab:
    """A local provider that counts every prompt as ``prompt_tokens`` (None: cannot
    count) and keeps the requests it was sent."""

    def __init__(self, prompt_tokens: int | None = 1000, local: bool = True) -> None:
        self.prompt_tokens = prompt_tokens
        self.local = local
        self.sent: list[Request] = []

    @hookimpl
    def modelplug_resolve(self, spec: str, settings: Settings) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "lab":
            return None
        endpoint = Endpoint(type="lab", local=self.local)
        return Route(provider="lab", model=model, endpoint=endpoint)

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name="lab", type="lab")]

    @hookimpl
    def modelplug_count_tokens(self, route: Route) -> Awaitable[int | None] | None:
        return self._count() if route.provider == "lab" else None

    async def _count(self) -> int | None:
        return self.prompt_tokens

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event] | None:
        if route.provider != "lab":
            return None
        self.sent.append(request)
        return self._answer()

    async def _answer(self) -> AsyncIterator[Event]:
        message = Message(role="assistant", content=[TextBlock(text="ok")])
        yield Done(response=Response(message=message))


WINDOW = {"models": {"lab/m": {"context_window": 32768}}}


def test_the_budget_is_the_window_less_the_prompt_less_the_reserve() -> None:
    assert reasoning_budget(32768, 1000, 4096) == 27672
    assert reasoning_budget(32768, 1000, 4096, output_cap=8192) == 4096
    assert reasoning_budget(32768, 1000) == 32768 - 1000 - DEFAULT_REASONING_RESERVE


def test_no_budget_when_the_window_or_the_count_is_unknown_or_nothing_is_left() -> None:
    assert reasoning_budget(None, 1000, 0) is None
    assert reasoning_budget(32768, None, 0) is None
    assert reasoning_budget(8192, 4096, 4096) is None
    assert reasoning_budget(8192, 9000, 0) is None


def test_a_negative_reserve_is_refused() -> None:
    with pytest.raises(ValueError, match="reserve"):
        reasoning_budget(8192, 10, -1)


@given(
    st.none() | st.integers(0, 10**7),
    st.none() | st.integers(0, 10**7),
    st.integers(0, 10**6),
    st.none() | st.integers(1, 10**6),
)
def test_a_budget_never_overruns_the_room(
    window: int | None, prompt: int | None, reserve: int, cap: int | None
) -> None:
    budget = reasoning_budget(window, prompt, reserve, output_cap=cap)
    if budget is not None:
        assert window is not None and prompt is not None
        assert budget > 0 and prompt + budget + reserve <= window
        assert cap is None or budget + reserve <= cap


def test_auto_per_call_sends_the_sized_budget(make_client: Any) -> None:
    lab = Lab(prompt_tokens=1000)
    client: Client = make_client(lab, config=WINDOW)
    client.complete("lab/m", "think hard", reasoning_budget="auto", reasoning_reserve=2000)
    thinking = lab.sent[0].thinking
    assert thinking is not None and thinking.enabled
    assert thinking.budget_tokens == 32768 - 1000 - 2000


def test_auto_keeps_a_budget_the_call_gave(make_client: Any) -> None:
    lab = Lab()
    client: Client = make_client(lab, config=WINDOW)
    client.complete("lab/m", "x", reasoning_budget="auto", thinking={"budget_tokens": 1500})
    assert lab.sent[0].thinking is not None and lab.sent[0].thinking.budget_tokens == 1500


def test_auto_fits_under_max_tokens(make_client: Any) -> None:
    lab = Lab(prompt_tokens=1000)
    client: Client = make_client(lab, config=WINDOW)
    client.complete("lab/m", "x", reasoning_budget="auto", reasoning_reserve=500, max_tokens=3000)
    assert lab.sent[0].thinking is not None and lab.sent[0].thinking.budget_tokens == 2500


def events(client: Client, **fields: Any) -> list[Event]:
    return list(client.stream("lab/m", "x", **fields))


def test_no_budget_and_a_notice_when_a_local_window_is_only_a_guess(make_client: Any) -> None:
    lab = Lab()
    client: Client = make_client(lab)
    found = events(client, reasoning_budget="auto")
    notices = [e for e in found if isinstance(e, Notice)]
    assert [n.kind for n in notices] == ["thinking_budget"]
    assert "context window is not known" in notices[0].message
    thinking = lab.sent[0].thinking
    assert thinking is None or thinking.budget_tokens is None


def test_no_budget_and_a_notice_when_the_endpoint_cannot_count(make_client: Any) -> None:
    lab = Lab(prompt_tokens=None)
    client: Client = make_client(lab, config=WINDOW)
    notices = [e for e in events(client, reasoning_budget="auto") if isinstance(e, Notice)]
    assert "cannot count the prompt" in notices[0].message
    assert notices[0].details["window"] == 32768
    thinking = lab.sent[0].thinking
    assert thinking is None or thinking.budget_tokens is None


def test_a_hosted_model_s_window_from_its_plugin_is_used(make_client: Any) -> None:
    class Hosted(Lab):
        @hookimpl
        def modelplug_resolve(self, spec: str, settings: Settings) -> Route | None:
            route = super().modelplug_resolve(spec, settings)
            if route is not None:
                route.info.context_window = 200_000
            return route

    lab = Hosted(prompt_tokens=500, local=False)
    client: Client = make_client(lab)
    client.complete("lab/m", "x", reasoning_budget="auto", reasoning_reserve=0)
    assert lab.sent[0].thinking is not None
    assert lab.sent[0].thinking.budget_tokens == 200_000 - 500


def test_the_setting_sizes_only_calls_that_ask_for_thinking(make_client: Any) -> None:
    lab = Lab(prompt_tokens=1000)
    config = {**WINDOW, "reasoning_budget": "auto", "reasoning_reserve": 768}
    client: Client = make_client(lab, config=config)
    client.complete("lab/m", "no thinking asked")
    client.complete("lab/m", "think", thinking={"enabled": True})
    client.complete("lab/m", "effort", thinking={"effort": "low"})
    plain, asked, effort = lab.sent
    assert plain.thinking is None
    assert asked.thinking is not None and asked.thinking.budget_tokens == 32768 - 1000 - 768
    assert effort.thinking is not None and effort.thinking.budget_tokens is None


def test_a_wrong_setting_is_refused_naming_it(make_client: Any) -> None:
    with pytest.raises(ConfigError, match="reasoning_budget"):
        make_client(Lab(), config={"reasoning_budget": "lots"})
    with pytest.raises(ConfigError, match="reasoning_reserve"):
        make_client(Lab(), config={"reasoning_reserve": -5})


def test_client_thinking_budget(make_client: Any) -> None:
    client: Client = make_client(Lab(prompt_tokens=2768), config=WINDOW)
    assert client.thinking_budget("lab/m", "x", reserve=0) == 30000
    assert client.thinking_budget("lab/m", "x", reserve=0, max_tokens=1000) == 1000
    assert client.thinking_budget("lab/unknown-window", "x") is None
