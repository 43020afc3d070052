"""Hooks are checked when they register, and a hook that raises is that plugin's error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from modelplug import PluginError, PluginLoadError, Provider, Route, hookimpl
from modelplug.contract.types import Event, Usage


class AsyncStream:
    name = "async-stream"

    @hookimpl
    async def modelplug_stream(self, route: Route) -> AsyncIterator[Event] | None:  # type: ignore[misc]
        return None


class AsyncGeneratorStream:
    name = "async-gen-stream"

    @hookimpl
    async def modelplug_stream(self, route: Route) -> AsyncIterator[Event]:
        if False:
            yield  # pragma: no cover


class AsyncProbe:
    name = "async-probe"

    @hookimpl
    async def modelplug_probe(self, route: Route) -> None:
        return None


@pytest.mark.parametrize(
    ("plugin", "hook"),
    [
        (AsyncStream(), "modelplug_stream"),
        (AsyncGeneratorStream(), "modelplug_stream"),
        (AsyncProbe(), "modelplug_probe"),
    ],
)
def test_an_async_def_hook_is_refused_naming_plugin_hook_and_fix(
    make_client: Any, plugin: object, hook: str
) -> None:
    with pytest.raises(PluginLoadError) as caught:
        make_client(plugin, strict=True)

    message = str(caught.value)
    assert repr(plugin.name) in message
    assert hook in message
    assert "plain def" in message


def test_a_refused_plugin_leaves_the_echo_model_working(make_client: Any) -> None:
    with pytest.warns(UserWarning, match="async def"):
        client = make_client(AsyncStream())

    assert client.complete("echo", "still here").text == "still here"
    assert not next(p for p in client.plugins() if p.name == "async-stream").enabled


class Broken:
    """Every "who handles this?" hook raises a bug of its own."""

    name = "broken"

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name="bad", type="bad")]

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        if spec.startswith("bad/"):
            raise KeyError("a bug in resolve")
        return None

    @hookimpl
    def modelplug_model_info(self, route: Route) -> Any:
        if route.provider == "echo" and route.model == "info":
            raise AttributeError("a bug in model_info")
        return None

    @hookimpl
    def modelplug_price(self, route: Route) -> Any:
        if route.model == "price":
            raise ZeroDivisionError("a bug in price")
        return None

    @hookimpl
    def modelplug_classify_error(self, error: BaseException) -> Any:
        if isinstance(error, LookupError):
            raise TypeError("a bug in classify")
        return None


@pytest.mark.parametrize(
    ("call", "hook"),
    [
        (lambda c: c.resolve("bad/x"), "modelplug_resolve"),
        (lambda c: c.resolve("echo/info"), "modelplug_model_info"),
        (
            lambda c: c.price(Route(provider="echo", model="price"), Usage()),
            "modelplug_price",
        ),
        (lambda c: c.classify(LookupError("x")), "modelplug_classify_error"),
    ],
)
def test_an_exception_inside_a_hook_names_the_plugin(
    make_client: Any, call: Any, hook: str
) -> None:
    client = make_client(Broken())

    with pytest.raises(PluginError) as caught:
        call(client)

    assert caught.value.plugin == "broken"
    assert caught.value.hook == hook
    assert "the plugin 'broken' failed in " + hook in str(caught.value)
    assert caught.value.__cause__ is not None


def test_a_deliberate_config_error_from_a_plugin_passes_unchanged(make_client: Any) -> None:
    from modelplug import ConfigError

    class Strict:
        @hookimpl
        def modelplug_resolve(self, spec: str) -> Route | None:
            if spec == "strict/":
                raise ConfigError("the spec 'strict/' names no model")
            return None

    client = make_client(Strict())

    with pytest.raises(ConfigError, match="names no model"):
        client.resolve("strict/")


def test_client_plugins_takes_objects_and_enable_takes_names(make_client: Any) -> None:
    from modelplug import Client

    with pytest.raises(TypeError, match=r"Client\(enable=\['modelplug-prices'\]\)"):
        Client(plugins=["modelplug-prices"], entry_points=False)  # type: ignore[list-item]
    client = make_client(enable=["echo"])
    assert client.resolve("echo").provider == "echo"
