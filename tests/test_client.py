"""The Client: model choice, aliases and roles, sync facades, cost and errors."""

from __future__ import annotations

import asyncio
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug.client.client import Client
from modelplug.contract.errors import ModelplugError, UnknownProviderError
from modelplug.contract.types import Done, Notice, Price, TextDelta, Usage
from modelplug.testing import FakeModel, text


def test_model_choice_order(
    make_client: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    client: Client = make_client()
    assert client.choose_model() == "echo"
    assert "no model chosen" in capsys.readouterr().err
    Path("modelplug.toml").write_text('model = "project/m"\n')
    assert make_client().choose_model() == "project/m"
    monkeypatch.setenv("MODELPLUG_MODEL", "env/m")
    assert make_client().choose_model() == "env/m"
    assert make_client(model="arg/m").choose_model() == "arg/m"
    assert make_client().choose_model("call/m") == "call/m"


def test_echo_note_is_printed_once_per_client(
    make_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    client: Client = make_client()
    client.complete(None, "a")
    client.complete(None, "b")
    assert capsys.readouterr().err.count("no model chosen") == 1


def test_aliases_and_roles_resolve_to_specs(make_client: Any) -> None:
    client: Client = make_client(
        FakeModel(),
        config={
            "aliases": {"quick": "fast", "fast": "fake/small"},
            "roles": {"worker": "fake/big"},
            "model": "fake/main",
        },
    )
    route = client.resolve("quick")
    assert (route.name, route.spec, route.role) == ("fake/small", "quick", None)
    worker = client.resolve("worker")
    assert (worker.name, worker.role) == ("fake/big", "worker")
    explore = client.resolve("explore")  # a built-in role that is not set: the default model
    assert (explore.name, explore.role) == ("fake/main", "explore")


def test_a_client_made_for_an_unset_role_calls_the_default_model(
    make_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Client("worker") makes the role the client's default: an unset role must fall back
    # past it (to the settings' model, else echo), not to itself.
    client: Client = make_client(FakeModel(), model="worker", config={"model": "fake/main"})
    assert (client.resolve().name, client.resolve().role) == ("fake/main", "worker")
    bare: Client = make_client(model="worker")
    assert (bare.resolve().name, bare.resolve().role) == ("echo/echo", "worker")
    assert bare.complete(None, "hi").text
    assert "no model chosen" in capsys.readouterr().err


def test_a_role_must_not_name_a_role(make_client: Any) -> None:
    client: Client = make_client(config={"roles": {"worker": "smart", "smart": "echo"}})
    with pytest.raises(ModelplugError, match="role 'worker' names the role 'smart'"):
        client.resolve("worker")


def test_alias_cycle_is_a_clear_error(make_client: Any) -> None:
    client: Client = make_client(config={"aliases": {"a": "b", "b": "a"}})
    with pytest.raises(ModelplugError, match="cycle: a -> b -> a"):
        client.resolve("a")


def test_unknown_provider_names_it_and_lists_installed_ones(make_client: Any) -> None:
    client: Client = make_client(FakeModel(provider="scripted"))
    with pytest.raises(UnknownProviderError) as caught:
        client.resolve("acme/large")
    message = str(caught.value)
    assert "Unknown provider 'acme'" in message
    assert "Installed providers: echo, scripted" in message
    assert "pip install" not in message  # no distribution of that name exists


def test_user_provider_of_an_unserved_type_says_so(
    make_client: Any, modelplug_config_dir: Path
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.lab]\ntype = "grpc"\nbase_url = "https://x.example"\n'
    )
    client: Client = make_client()
    with pytest.raises(UnknownProviderError, match="type 'grpc', which no enabled plugin serves"):
        client.resolve("lab/m")


def test_a_provider_type_no_plugin_serves_is_answered_with_the_types_that_exist(
    modelplug_config_dir: Path,
) -> None:
    pytest.importorskip("modelplug_openai_compat")
    import modelplug

    (modelplug_config_dir / "config.toml").write_text(
        '[providers.lab]\ntype = "openai-compat"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    with (
        modelplug.Client(enable=["modelplug-openai-compat"]) as client,
        pytest.raises(UnknownProviderError) as caught,
    ):
        client.complete("lab/m", "hi")
    message = str(caught.value)
    assert "did you mean 'openai-compatible'?" in message
    assert "Types the enabled plugins serve: echo, openai-compatible." in message
    # Provider names are not types: listing them sent the user after the wrong thing.
    assert "llamacpp" not in message


def test_sync_stream_works_inside_a_running_event_loop(make_client: Any) -> None:
    client: Client = make_client()

    async def notebook_cell() -> tuple[str, list[str]]:
        # What a Jupyter cell does: call the sync API while a loop runs in this thread.
        response = client.complete("echo", "inside a loop")
        words = [e.text for e in client.stream("echo", "x y") if isinstance(e, TextDelta)]
        return response.text, words

    assert asyncio.run(notebook_cell()) == ("inside a loop", ["x", " y"])


def test_sync_stream_pays_no_thread_hop_outside_a_loop(make_client: Any) -> None:
    seen: set[int] = set()

    def record(request: Any) -> Any:
        seen.add(threading.get_ident())
        return text("ok")

    client: Client = make_client(FakeModel([record]))
    assert client.complete("fake/m", "x").text == "ok"
    assert seen == {threading.get_ident()}


def test_sync_stream_hands_over_a_bounded_batch_of_a_burst(make_client: Any) -> None:
    # A burst of events with no wait between them (one network read can complete
    # hundreds) reaches the sync consumer in batches of at most HANDOVER, in order.
    from modelplug import hookimpl
    from modelplug.client.client import HANDOVER
    from modelplug.contract.types import Endpoint, Route

    produced: list[int] = []
    ahead: list[int] = []
    burst = HANDOVER * 5 + 3

    class Burst:
        name = "burst"

        @hookimpl
        def modelplug_resolve(self, spec: str) -> Any:
            return Route(provider="burst", model="m", endpoint=Endpoint(type="burst"))

        @hookimpl
        def modelplug_stream(self, route: Any) -> Any:
            async def run() -> Any:
                from modelplug.contract.types import Response

                for n in range(burst):
                    produced.append(n)
                    yield TextDelta(text=f"{n} ")
                yield Done(response=Response.partial(route.name, "", ""))

            return run() if route.provider == "burst" else None

    client: Client = make_client(Burst())
    words = []
    for event in client.stream("burst/m", "x"):
        if isinstance(event, TextDelta):
            ahead.append(len(produced) - len(words))
            words.append(event.text)
    assert words == [f"{n} " for n in range(burst)]
    # Ahead of the consumer: at most one batch, and the event on its way into the next.
    assert max(ahead) <= HANDOVER + 1


def test_async_api_and_sync_api_give_the_same_response(make_client: Any) -> None:
    client: Client = make_client()
    sync = client.complete("echo", "same words here")
    async_ = asyncio.run(client.acomplete("echo", "same words here"))
    assert sync == async_


def test_cost_is_none_when_unknown_and_zero_only_when_free(make_client: Any) -> None:
    unpriced = FakeModel([text("a", usage=Usage(input=10, output=5))])
    priced = FakeModel(
        [text("b", usage=Usage(input=1_000_000, output=0))],
        provider="paid",
        price=Price(input=Decimal("2.5"), output=Decimal(10)),
    )
    client: Client = make_client(unpriced, priced)
    assert client.complete("fake/m", "x").cost is None
    cost = client.complete("paid/m", "x").cost
    assert cost is not None and cost.amount == Decimal("2.5") and cost.currency == "USD"
    free = client.complete("echo", "x").cost
    assert free is not None and free.amount == 0


def test_a_route_does_not_share_the_settings_price(make_client: Any) -> None:
    client: Client = make_client(config={"models": {"echo": {"price": {"input": 1, "output": 2}}}})
    route = client.resolve("echo")
    assert route.info.price == Price(input=Decimal(1), output=Decimal(2))
    assert route.info.price_source == "settings"
    assert route.info.price is not client.settings.models["echo"].price


def test_notices_reach_on_event_or_the_log(
    make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from modelplug import hookimpl

    class Narrator:
        name = "narrator"

        @hookimpl(wrapper=True)
        def modelplug_stream(self, route: Any, request: Any, client: Any) -> Any:
            inner = yield

            async def wrap() -> Any:
                yield Notice(kind="retry", message="waiting 1 s", delay=1.0)
                async for event in inner:
                    yield event

            return wrap()

    client: Client = make_client(Narrator())
    seen: list[Any] = []
    client.complete("echo", "x", on_event=seen.append)
    assert [e.message for e in seen if isinstance(e, Notice)] == ["waiting 1 s"]
    with caplog.at_level("WARNING", logger="modelplug"):
        client.complete("echo", "x")
    assert "waiting 1 s" in caplog.text


def test_stream_without_done_is_an_error(make_client: Any) -> None:
    from modelplug import hookimpl
    from modelplug.contract.errors import ModelError

    class Truncating:
        name = "truncating"

        @hookimpl
        def modelplug_resolve(self, spec: str) -> Any:
            from modelplug.contract.types import Endpoint, Route

            return (
                Route(provider="cut", model="m", endpoint=Endpoint(type="cut"))
                if spec == "cut/m"
                else None
            )

        @hookimpl
        def modelplug_stream(self, route: Any) -> Any:
            async def run() -> Any:
                yield TextDelta(text="part")

            return run() if route.provider == "cut" else None

    client: Client = make_client(Truncating())
    with pytest.raises(ModelError, match="without a Done event") as caught:
        client.complete("cut/m", "x")
    assert caught.value.partial is not None and caught.value.partial.text == "part"


def test_breaking_out_of_a_sync_stream_cancels_it(make_client: Any) -> None:
    fake = FakeModel([text("one two three")], delay=0.01)
    client: Client = make_client(fake)
    for event in client.stream("fake/m", "x"):
        assert not isinstance(event, Done)
        break
    # The client stays usable after an abandoned stream.
    assert client.complete("echo", "still works").text == "still works"


def test_module_level_functions_use_a_default_client(
    modelplug_config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelplug

    monkeypatch.setattr(modelplug, "_default", None)
    assert modelplug.complete("echo", "module level").text == "module level"
    assert asyncio.run(modelplug.acomplete("echo", "async too")).text == "async too"
    events = list(modelplug.stream("echo", "a b"))
    assert isinstance(events[-1], Done)
    modelplug.default_client().close()


def test_closing_an_async_stream_reaches_the_provider_at_once(make_client: Any) -> None:
    from modelplug import hookimpl
    from modelplug.contract.types import Endpoint, Route

    closed: list[str] = []

    class Slow:
        name = "slow"

        @hookimpl
        def modelplug_resolve(self, spec: str) -> Any:
            return (
                Route(provider="slow", model="m", endpoint=Endpoint(type="slow"))
                if spec == "slow/m"
                else None
            )

        @hookimpl
        def modelplug_stream(self, route: Any) -> Any:
            async def run() -> Any:
                try:
                    yield TextDelta(text="first")
                    await asyncio.sleep(30)
                finally:
                    closed.append("provider closed")

            return run() if route.provider == "slow" else None

    client: Client = make_client(Slow())

    async def abort_after_first_event() -> None:
        stream = client.astream("slow/m", "x")
        async for _ in stream:
            break
        await stream.aclose()
        assert closed == ["provider closed"]

    asyncio.run(abort_after_first_event())
