"""The typed relay (:mod:`modelplug.contract.hook_types`, the type of ``client.hook``) says what
the hook specs say: one entry per spec, the same parameters with the same annotations,
keyword-only as pluggy calls them, and the result pluggy returns (a firstresult hook's
own return, the others a list of every answer)."""

from __future__ import annotations

import ast
import inspect
from typing import Any

import pluggy
import pytest
from modelplug.contract import hook_types, hookspecs

HOOK_TYPES = "core/modelplug/contract/hook_types.py"


def spec_options() -> dict[str, dict[str, Any]]:
    """The hook specs as pluggy finds them (the same lookup as ``add_hookspecs``)."""
    pm = pluggy.PluginManager("modelplug")
    found = {name: pm.parse_hookspec_opts(hookspecs, name) for name in dir(hookspecs)}
    return {name: dict(opts) for name, opts in found.items() if opts is not None}


def relay_entries() -> dict[str, str]:
    """``HookRelay``'s attributes and the names of their caller protocols."""
    return dict(hook_types.HookRelay.__annotations__)


SPECS = spec_options()
RELAY = relay_entries()


def normalized(annotation: object) -> str:
    """An annotation as text, with the source's spacing and line breaks taken out."""
    assert isinstance(annotation, str), f"expected a string annotation, got {annotation!r}"
    return ast.unparse(ast.parse(annotation, mode="eval"))


def test_the_specs_are_found() -> None:
    # Guards the comparison below: with no specs found, both sides would be empty.
    assert {"modelplug_resolve", "modelplug_stream", "modelplug_price"} <= set(SPECS)
    assert set(SPECS) <= set(hookspecs.__all__)


def test_every_hook_spec_has_an_entry_in_the_relay() -> None:
    missing = sorted(set(SPECS) - set(RELAY))
    assert missing == [], f"hook specs with no entry in HookRelay ({HOOK_TYPES}): {missing}"


def test_every_relay_entry_is_a_hook_spec() -> None:
    extra = sorted(set(RELAY) - set(SPECS))
    assert extra == [], f"HookRelay entries ({HOOK_TYPES}) with no hook spec: {extra}"


@pytest.mark.parametrize("name", sorted(set(SPECS) & set(RELAY)))
def test_the_relay_entry_takes_the_spec_s_arguments_by_keyword(name: str) -> None:
    spec = inspect.signature(getattr(hookspecs, name))
    caller = getattr(hook_types, RELAY[name], None)
    assert inspect.isclass(caller), f"HookRelay.{name}: {RELAY[name]} is not a class there"
    relay = inspect.signature(caller.__call__)
    self_, *parameters = relay.parameters.values()

    assert self_.name == "self"
    assert [p.name for p in parameters] == list(spec.parameters), (
        f"{name}: the relay's parameters differ from the spec's"
    )
    positional = [p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert positional == [], f"{name}: pluggy passes every argument by keyword"
    for parameter in parameters:
        expected = normalized(spec.parameters[parameter.name].annotation)
        assert normalized(parameter.annotation) == expected, f"{name}({parameter.name})"


@pytest.mark.parametrize("name", sorted(set(SPECS) & set(RELAY)))
def test_the_relay_entry_returns_what_pluggy_returns_for_the_spec(name: str) -> None:
    spec = normalized(inspect.signature(getattr(hookspecs, name)).return_annotation)
    relay = normalized(
        inspect.signature(getattr(hook_types, RELAY[name]).__call__).return_annotation
    )
    # A firstresult call returns the first answer that is not None (or None); any
    # other call returns the list of every implementation's answer.
    expected = spec if SPECS[name]["firstresult"] else f"list[{spec}]"
    assert relay == expected, f"{name} (firstresult={SPECS[name]['firstresult']})"
