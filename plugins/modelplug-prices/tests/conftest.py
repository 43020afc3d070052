"""A stand-in provider plugin for the price tests: it resolves ``provider/model`` for a
few provider names (hosted ones with ``local=False``, local servers with ``local=True``)
and streams one scripted Response, so a test can run the client's whole pricing path."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from modelplug import hookimpl
from modelplug.contract.settings import Settings
from modelplug.contract.types import (
    Done,
    Endpoint,
    Event,
    Message,
    Request,
    Response,
    Route,
    Usage,
)
from modelplug.testing import calm_hypothesis

HOSTED = ("anthropic", "anthropic-batch", "openai", "openrouter", "acme-cloud")
LOCAL = ("ollama", "lmstudio", "llamacpp", "vllm")


class StandInProvider:
    """Serves HOSTED and LOCAL provider names; every call answers ``usage``."""

    name = "stand-in-provider"

    def __init__(self, usage: Usage | None = None, price_factor: float = 1.0) -> None:
        self.usage = usage or Usage()
        self.price_factor = price_factor

    @hookimpl
    def modelplug_resolve(self, spec: str, settings: Settings) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider not in HOSTED + LOCAL or not model:
            return None
        return Route(
            provider=provider,
            model=model,
            endpoint=Endpoint(type="stand-in", local=provider in LOCAL),
        )

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event]:
        return self._play(route)

    async def _play(self, route: Route) -> AsyncIterator[Event]:
        yield Done(
            response=Response(
                message=Message(role="assistant", content="ok"),
                usage=self.usage,
                model=route.name,
                price_factor=self.price_factor,
            )
        )


@pytest.fixture
def stand_in() -> type[StandInProvider]:
    return StandInProvider


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
