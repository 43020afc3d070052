"""One test per hook spec: core calls each hook as its docstring says."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any, ClassVar

import pytest
from modelplug import as_request, hookimpl
from modelplug.client.client import Client
from modelplug.contract.errors import ErrorClass, ModelError
from modelplug.contract.settings import Settings
from modelplug.contract.types import (
    Cost,
    Done,
    Endpoint,
    Event,
    Message,
    ModelInfo,
    Notice,
    ParsedText,
    Provider,
    Request,
    Response,
    Route,
    TextBlock,
    TextDelta,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from modelplug.testing import FakeModel, text


class LabProvider:
    """A minimal in-house adapter: the README's example shape."""

    name = "lab"

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
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event] | None:
        if route.provider != "lab":
            return None
        return self._run(route, request)

    async def _run(self, route: Route, request: Request) -> AsyncIterator[Event]:
        yield TextDelta(text="lab:")
        yield TextDelta(text=request.messages[-1].text)
        yield Done(
            response=Response(
                message=Message(
                    role="assistant", content=[TextBlock(text="lab:" + request.messages[-1].text)]
                ),
                usage=Usage(input=1, output=2),
            )
        )


def test_modelplug_resolve(make_client: Any) -> None:
    client: Client = make_client(LabProvider())
    route = client.resolve("lab/model/with/slashes")
    assert (route.provider, route.model, route.spec) == (
        "lab",
        "model/with/slashes",
        "lab/model/with/slashes",
    )
    # A plugin that returns None lets the next one try: echo still resolves.
    assert client.resolve("echo").provider == "echo"


def test_modelplug_stream(make_client: Any) -> None:
    client: Client = make_client(LabProvider())
    events = list(client.stream("lab/m", "ping"))
    assert [type(e).__name__ for e in events] == ["TextDelta", "TextDelta", "Done"]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.response.text == "lab:ping"
    assert done.response.model == "lab/m"
    assert done.response.message.model == "lab/m"


class Shouter:
    """A wrapper=True implementation wraps whatever the provider returned."""

    name = "shouter"

    @hookimpl(wrapper=True)
    def modelplug_stream(self, route: Route, request: Request, client: Client) -> Any:
        inner = yield
        if inner is None:
            return None
        return self._wrap(inner)

    async def _wrap(self, inner: AsyncIterator[Event]) -> AsyncIterator[Event]:
        yield Notice(kind="info", message="shouting")
        async for event in inner:
            if isinstance(event, TextDelta):
                yield TextDelta(text=event.text.upper())
            else:
                yield event


def test_modelplug_stream_wrapper_wraps_the_provider_iterator(make_client: Any) -> None:
    shouter = Shouter()
    client: Client = make_client(LabProvider(), shouter)
    events = list(client.stream("lab/m", "quiet"))
    assert isinstance(events[0], Notice)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["LAB:", "QUIET"]
    # Excluding the wrapper gives the bare provider stream (how policies avoid nesting).
    bare = client.open_stream(client.resolve("lab/m"), as_request("x"), exclude=[shouter])
    import asyncio

    async def collect() -> list[Event]:
        return [e async for e in bare]

    assert [type(e).__name__ for e in asyncio.run(collect())] == ["TextDelta", "TextDelta", "Done"]


class Table:
    name = "table"

    @hookimpl
    def modelplug_price(self, route: Route, usage: Usage, price_factor: float) -> Cost | None:
        if route.model != "priced":
            return None
        amount = (
            Decimal(usage.total_input + usage.output)
            * Decimal("0.001")
            * Decimal(str(price_factor))
        )
        return Cost(amount=amount, source="test table")


def test_modelplug_price(make_client: Any) -> None:
    client: Client = make_client(LabProvider(), Table())
    priced = client.complete("lab/priced", "x")
    assert priced.cost == Cost(amount=Decimal("0.003"), source="test table")
    unknown = client.complete("lab/other", "x")
    assert unknown.cost is None  # unknown, never zero
    assert client.price(client.resolve("lab/priced"), Usage(input=10), 0.5) == Cost(
        amount=Decimal("0.005"), source="test table"
    )


def test_modelplug_price_user_override_wins_over_tables(make_client: Any) -> None:
    client: Client = make_client(
        LabProvider(),
        Table(),
        config={"models": {"lab/priced": {"price": {"input": 1, "output": 2}}}},
    )
    cost = client.complete("lab/priced", "x").cost
    assert cost is not None and cost.source == "settings"
    assert cost.amount == Decimal("0.000005")  # 1 input at $1/M + 2 output at $2/M


class Teapot(Exception):
    status_code = 418


class TeapotClassifier:
    name = "teapot"

    @hookimpl
    def modelplug_classify_error(
        self, error: BaseException, route: Route | None
    ) -> ErrorClass | None:
        if isinstance(error, Teapot):
            return ErrorClass(kind="quota", fallback=True, reason="out of tea")
        return None


def test_modelplug_classify_error(make_client: Any) -> None:
    client: Client = make_client(TeapotClassifier())
    assert client.classify(Teapot()).reason == "out of tea"

    # Other errors reach core's trylast generic classifier.
    class RateLimited(Exception):
        status_code = 429
        headers: ClassVar[dict[str, str]] = {"retry-after": "3"}

    generic = client.classify(RateLimited())
    assert (generic.kind, generic.retryable, generic.retry_after) == ("rate_limit", True, 3.0)


class PrefixReader:
    """Reads `CALL name` lines as calls; holds text from the first `C`."""

    name = "prefix-reader"

    @hookimpl
    def modelplug_parse_text_tool_calls(
        self, text: str, tools: list[ToolSpec], mode: str, final: bool, state: dict[str, Any] | None
    ) -> ParsedText | None:
        if mode != "prefix":
            return None
        assert state is not None
        state["calls"] = state.get("calls", 0) + 1
        start = text.find("C")
        if not final:
            return ParsedText(text=text, hold_from=start if start >= 0 else None)
        if start >= 0 and text[start:].startswith("CALL "):
            name = text[start + 5 :].strip()
            return ParsedText(text=text[:start], calls=[ToolUseBlock(name=name)])
        return ParsedText(text=text)


def test_modelplug_parse_text_tool_calls(make_client: Any) -> None:
    client: Client = make_client(PrefixReader())
    held = client.held_text([ToolSpec(name="look")], "prefix")
    shown = "".join(held.feed(d) for d in ["I will ", "look. ", "CA", "LL lo", "ok"])
    assert shown == "I will look. "
    rest, prose, calls = held.finish()
    assert (rest, prose) == ("", "I will look. ")
    assert [c.name for c in calls] == ["look"]
    # One state dict follows the whole reply.
    assert held._state["calls"] == 6
    # A mode no reader handles shows everything and finds no calls.
    plain = client.held_text([ToolSpec(name="look")], "unknown-mode")
    assert plain.feed("{x") == "{x"
    assert plain.finish() == ("", "{x", [])
    # Calls that came another way (native tool calls): the held text is released as is.
    native = client.held_text([ToolSpec(name="look")], "prefix")
    assert native.feed("one moment. CALL look") == "one moment. "
    assert native.release() == "CALL look"


class Catalog:
    name = "catalog"

    @hookimpl
    def modelplug_model_info(self, route: Route, settings: Settings) -> ModelInfo | None:
        return ModelInfo(
            context_window=8192, max_output_tokens=1024, supports_tools=True, notes=["from catalog"]
        )


def test_modelplug_model_info(make_client: Any) -> None:
    client: Client = make_client(
        LabProvider(), Catalog(), config={"models": {"lab/m": {"context_window": 4096}}}
    )
    info = client.resolve("lab/m").info
    assert info.context_window == 4096  # the user's settings win
    assert info.max_output_tokens == 1024  # the catalog fills what is unknown
    assert info.notes == ["from catalog"]


def test_modelplug_providers(make_client: Any) -> None:
    client: Client = make_client(LabProvider(), FakeModel(provider="scripted"))
    assert client.providers() == ["echo", "lab", "scripted"]


class Prober:
    name = "prober"

    @hookimpl
    def modelplug_probe(self, route: Route, client: Client) -> Any:
        if route.provider != "lab":
            return None

        async def ask() -> ModelInfo:
            return ModelInfo(context_window=65536, supports_tools=False)

        return ask()


def test_modelplug_probe(make_client: Any) -> None:
    client: Client = make_client(LabProvider(), Prober())
    assert client.probe("lab/m") == ModelInfo(context_window=65536, supports_tools=False)
    assert client.probe("echo") is None


class Greeter:
    name = "greeter"

    @hookimpl
    def modelplug_cli_commands(self, subparsers: Any, client: Client) -> None:
        parser = subparsers.add_parser("greet", help="say hello")
        parser.add_argument("who")
        parser.set_defaults(handler=lambda args, client: print(f"hello {args.who}") or 0)


def test_modelplug_cli_commands(make_client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from modelplug.cli import build_parser

    client: Client = make_client(Greeter())
    parser = build_parser(client)
    args = parser.parse_args(["greet", "world"])
    assert args.handler(args, client) == 0
    assert capsys.readouterr().out == "hello world\n"
    assert isinstance(parser, argparse.ArgumentParser)


def test_errors_reach_the_caller_as_model_errors_with_partial_output(make_client: Any) -> None:
    class Broken(LabProvider):
        async def _run(self, route: Route, request: Request) -> AsyncIterator[Event]:
            yield TextDelta(text="half an ans")
            raise ConnectionResetError("connection reset by peer")

    client: Client = make_client(Broken())
    with pytest.raises(ModelError) as caught:
        client.complete("lab/m", "x")
    error = caught.value
    assert error.error_class.kind == "transient" and error.retryable
    assert error.route is not None and error.route.name == "lab/m"
    assert error.partial is not None and error.partial.text == "half an ans"
    assert isinstance(error.__cause__, ConnectionResetError)


def test_fake_model_plays_its_script(make_client: Any) -> None:
    fake = FakeModel([text("one"), lambda request: text(f"saw {request.messages[-1].text}")])
    client: Client = make_client(fake)
    assert client.complete("fake/a", "x").text == "one"
    assert client.complete("fake/a", "y").text == "saw y"
    assert [r.messages[-1].text for r in fake.requests] == ["x", "y"]
    from modelplug.contract.errors import ScriptExhaustedError

    with pytest.raises(ScriptExhaustedError, match="no step left"):
        client.complete("fake/a", "z")


def test_unregistered_plugin_leaves_the_listing_and_the_hooks(make_client: Any) -> None:
    lab = LabProvider()
    client: Client = make_client(lab)
    assert "lab" in client.providers()
    client.unregister(lab)
    assert "lab" not in client.providers()
    assert all(p.name != "lab" for p in client.plugins())


def test_register_plugin_fixture_registers_for_one_test(
    modelplug_client: Client, register_plugin: Any
) -> None:
    lab = register_plugin(LabProvider())
    assert modelplug_client.complete("lab/m", "hi").text == "lab:hi"
    assert modelplug_client.host.pm.is_registered(lab)
