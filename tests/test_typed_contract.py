"""The contract is typed where plugin authors meet it: a plugin that calls core with a
wrong type fails the type check."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

BAD_PLUGIN = textwrap.dedent(
    """
    from modelplug import ErrorClass, Provider, Route, hookimpl
    from modelplug_kit import usage_from_openai

    route = Route(provider=7, model="m")
    error = ErrorClass(kind="exploded")
    usage = usage_from_openai({"prompt_tokens": 1}).input
    names: list[str] = [Provider(name="x", type="y")]


    @hookimpl
    def modelplug_price(route: Route) -> None:
        route.info.context_window + "tokens"
    """
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the module: core's modules are analysed once."""
    return tmp_path_factory.mktemp("mypy-cache")


def errors_of(source: str, tmp_path: Path, cache: Path) -> list[str]:
    module = tmp_path / "bad_plugin.py"
    module.write_text(source)
    out, _, _ = mypy_api.run(["--strict", "--cache-dir", str(cache), str(module)])
    return [line for line in out.splitlines() if ": error:" in line]


def test_a_plugin_calling_core_with_wrong_types_fails_the_type_check(
    tmp_path: Path, cache: Path
) -> None:
    errors = "\n".join(errors_of(BAD_PLUGIN, tmp_path, cache))

    assert 'Argument "provider" to "Route" has incompatible type "int"' in errors
    assert '"kind" to "ErrorClass" has incompatible type' in errors
    assert 'Item "None" of "Usage | None" has no attribute "input"' in errors
    assert 'List item 0 has incompatible type "Provider"' in errors
    assert 'Unsupported operand types for + ("int" and "str")' in errors


def test_the_readme_adapter_shape_passes_the_type_check(tmp_path: Path, cache: Path) -> None:
    good = textwrap.dedent(
        """
        from collections.abc import AsyncIterator

        from modelplug import Client, Route, hookimpl
        from modelplug import Done, Event, Message, Request, Response, TextBlock, TextDelta


        @hookimpl
        def modelplug_resolve(spec: str) -> Route | None:
            provider, _, model = spec.partition("/")
            return Route(provider="lab", model=model) if provider == "lab" else None


        @hookimpl
        def modelplug_stream(route: Route, request: Request, client: Client) -> AsyncIterator[Event] | None:
            return _answer() if route.endpoint.type == "lab" else None


        async def _answer() -> AsyncIterator[Event]:
            yield TextDelta(text="hi")
            message = Message(role="assistant", content=[TextBlock(text="hi")])
            yield Done(response=Response(message=message))
        """
    )
    assert errors_of(good, tmp_path, cache) == []
