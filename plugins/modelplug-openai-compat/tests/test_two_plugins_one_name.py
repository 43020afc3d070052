"""When a native plugin serves ``ollama`` (or ``openai``), this plugin's Chat
Completions path stays reachable as ``ollama-openai`` (``openai-chat``), and a user
pins this plugin for the name with ``type = "openai-compatible"``."""

from __future__ import annotations

from collections.abc import AsyncIterator

from modelplug import Endpoint, Provider, Route, hookimpl
from modelplug.contract.types import Done, Event, Message, Response, TextBlock

ANSWER = [{"choices": [{"delta": {"content": "compat"}, "finish_reason": "stop"}]}]


class NativeOllama:
    """A stand-in for the native Ollama plugin: it declares ``ollama`` natively."""

    @hookimpl
    def modelplug_providers(self, settings):
        return [Provider(name="ollama", type="ollama", native=True)]

    @hookimpl
    def modelplug_resolve(self, spec, settings, provider_type):
        if provider_type != "ollama":
            return None
        return Route(
            provider="ollama",
            model=spec.partition("/")[2],
            endpoint=Endpoint(type="ollama", base_url="http://localhost:11434"),
        )

    @hookimpl
    def modelplug_stream(self, route, request, client):
        if route.endpoint.type != "ollama":
            return None
        return self._answer(route)

    async def _answer(self, route: Route) -> AsyncIterator[Event]:
        message = Message(role="assistant", content=[TextBlock(text="native")], model=route.name)
        yield Done(response=Response(message=message, model=route.name))


def test_the_native_plugin_serves_ollama_when_both_are_installed(compat):
    client = compat(None, NativeOllama())
    route = client.resolve("ollama/qwen3")
    assert route.endpoint.type == "ollama"
    assert route.plugin != "modelplug-openai-compat"
    assert client.complete("ollama/qwen3", "hi").text == "native"


def test_ollama_openai_reaches_ollama_through_chat_completions(compat):
    client = compat(None, NativeOllama())
    route = client.resolve("ollama-openai/qwen3")
    assert route.plugin == "modelplug-openai-compat"
    assert route.endpoint.type == "openai-compatible"
    assert (route.endpoint.base_url, route.endpoint.server) == (
        "http://localhost:11434/v1",
        "ollama",
    )
    assert route.endpoint.local is True


def test_openai_chat_is_the_openai_preset_under_its_own_name(compat):
    route = compat().resolve("openai-chat/gpt-4o-mini")
    assert route.plugin == "modelplug-openai-compat"
    assert (route.endpoint.base_url, route.endpoint.api_key_env, route.endpoint.server) == (
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        "openai",
    )


def test_the_user_pins_this_plugin_for_ollama(compat, wire_server):
    # [providers.ollama] type = "openai-compatible" in the user's file.
    wire_server.add_sse(ANSWER, done=True)
    client = compat(None, NativeOllama(), name="ollama")
    route = client.resolve("ollama/qwen3")
    assert route.plugin == "modelplug-openai-compat" and route.endpoint.server == "ollama"
    assert client.complete("ollama/qwen3", "hi").text == "compat"
    assert wire_server.requests[-1].path == "/v1/chat/completions"
