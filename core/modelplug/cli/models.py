"""``modelplug models``: the models the installed plugins and your settings offer.

Listed per provider: the models your settings name (the default model, ``[models]``
entries, aliases, roles, fallback chains); for a server on this machine or one of your
own providers, the models the server lists when asked (llama.cpp, vLLM, LM Studio:
``GET /v1/models``; Ollama: ``/api/tags``); for the others, or a server that does not
answer (said so), each provider's example model from the plugin that declares it. Or
the specs given on the command line. Each with its context
window and max output, and who said so (your settings, the provider plugin, a catalog
plugin such as modelplug-prices through ``modelplug_model_info``), and its price per
million tokens as the pricing hooks answer it for a million tokens, with their source.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from modelplug.cli.output import money
from modelplug.contract.errors import ModelplugError

if TYPE_CHECKING:
    from collections.abc import Callable

    from modelplug.client.client import Client
    from modelplug.client.served_models import Served
    from modelplug.contract.routes import Route

__all__ = ["add_parser", "run"]

MILLION = 1_000_000


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    models = sub.add_parser(
        "models",
        help="the models plugins and settings offer: context windows, prices, sources",
    )
    models.add_argument(
        "specs",
        nargs="*",
        metavar="SPEC",
        help="describe these models (provider/model, aliases, roles) instead",
    )
    models.add_argument("--json", action="store_true", help="print JSON")
    models.set_defaults(handler=run)


@dataclass
class Listed:
    """One model and every reason it is listed, and what to know about the listing
    (a server that did not answer)."""

    spec: str
    listed_by: list[str] = field(default_factory=list)
    note: str | None = None


def run(args: argparse.Namespace, client: Client) -> int:
    listed = _asked(args.specs) if args.specs else _offered(client)
    rows = [_describe(client, item) for item in listed.values()]
    merged = _merged(rows)
    if args.json:
        print(json.dumps(merged, indent=2))
    else:
        _print(merged)
    # A spec you named that resolves to nothing is yours to fix; one your settings name
    # is shown with its error, and the listing is still a listing.
    return 2 if args.specs and any("error" in row for row in merged) else 0


def _asked(specs: list[str]) -> dict[str, Listed]:
    return {spec: Listed(spec, ["the command line"]) for spec in specs}


def _offered(client: Client) -> dict[str, Listed]:
    """Every spec the settings and the declared providers name, with why."""
    settings = client.settings
    listed: dict[str, Listed] = {}

    def add(spec: str, why: str, note: str | None = None) -> None:
        item = listed.setdefault(spec, Listed(spec))
        item.listed_by.append(why)
        item.note = item.note or note

    if settings.model:
        add(settings.model, f"the default model ({settings.source_of('model')})")
    for spec in settings.models:
        if "/" in spec:  # a bare model id's entry applies to that id on any provider
            add(spec, f"[models] ({settings.source_of('models')})")
    for name, spec in settings.aliases.items():
        add(spec, f"alias {name}")
    for name, spec in settings.roles.items():
        add(spec, f"role {name}")
    for name, chain in settings.fallbacks.items():
        for spec in chain:
            add(spec, f"fallback for {name}")
    from modelplug.host.known_providers import KNOWN_PROVIDERS

    # What the local servers and the user's own providers serve now (all asked at
    # once, a few seconds at most).
    served = client.served_models()
    for provider, declared in client.declared_providers().items():
        answer = served.get(provider)
        if answer is not None and answer.models is not None:
            _add_served(listed, add, answer)
            continue
        note = None
        if answer is not None:
            note = (
                f"the server at {answer.url or provider} did not answer ({answer.error}), so "
                "this is the plugin's example, not a model it is known to serve"
            )
        example = next(((e.example, p) for e, p in declared if e.example), None)
        known = KNOWN_PROVIDERS.get(provider)
        if example is not None:
            add(f"{provider}/{example[0]}", f"example of {example[1]}", note)
        elif known is not None:
            add(
                f"{provider}/{known.example}",
                f"example for {provider} (core's provider table)",
                note,
            )
        elif not any(spec.partition("/")[0] == provider for spec in listed):
            listed[f"{provider}/"] = Listed(f"{provider}/", [f"provider of {declared[0][1]}"])
    return listed


def _add_served(
    listed: dict[str, Listed], add: Callable[[str, str, str | None], None], answer: Served
) -> None:
    where = answer.url or answer.provider
    if not answer.models:
        listed[f"{answer.provider}/"] = Listed(
            f"{answer.provider}/",
            [f"asked the server at {where}"],
            note=f"the server at {where} lists no model; load one there",
        )
    for model in answer.models or ():
        add(f"{answer.provider}/{model}", f"served by the server at {where}", None)


def _describe(client: Client, item: Listed) -> dict[str, Any]:
    sources: dict[str, str] = {}
    if item.spec.endswith("/"):  # a provider that names no model of its own
        provider = item.spec[:-1]
        return {
            "spec": item.spec,
            "listed_by": item.listed_by,
            "error": item.note
            or f"no model known for {provider}; name one as {provider}/<model id>",
        }
    try:
        route = client._resolve(item.spec, sources)
    except ModelplugError as exc:
        return {"spec": item.spec, "listed_by": item.listed_by, "error": str(exc)}
    info = route.info
    note = {"note": item.note} if item.note else {}
    return {
        "name": route.name,
        "provider": route.provider,
        "model": route.model,
        "served_by": route.plugin,
        "listed_by": item.listed_by,
        "context_window": info.context_window,
        "context_window_source": sources.get("context_window"),
        "max_output_tokens": info.max_output_tokens,
        "max_output_tokens_source": sources.get("max_output_tokens"),
        "price": _price(client, route),
        **note,
    }


def _price(client: Client, route: Route) -> dict[str, str] | None:
    """Input and output per million tokens, as the pricing hooks price a million of
    each; None when none knows the model."""
    from modelplug.contract.types import Usage

    per_input = client.price(route, Usage(input=MILLION, output=0))
    per_output = client.price(route, Usage(input=0, output=MILLION))
    if per_input is None or per_output is None:
        return None
    return {
        "input": str(per_input.amount.normalize()),
        "output": str(per_output.amount.normalize()),
        "currency": per_input.currency,
        "source": per_input.source,
    }


def _merged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per model: specs that name the same model (an alias and its target)
    are one model listed for every reason."""
    by_name: dict[str, dict[str, Any]] = {}
    unresolved: list[dict[str, Any]] = []
    for row in rows:
        if "error" in row:
            unresolved.append(row)
            continue
        seen = by_name.get(row["name"])
        if seen is None:
            by_name[row["name"]] = row
        else:
            seen["listed_by"] += [w for w in row["listed_by"] if w not in seen["listed_by"]]
    ordered = sorted(by_name.values(), key=lambda r: (r["provider"], r["model"]))
    return [*ordered, *unresolved]


def _print(rows: list[dict[str, Any]]) -> None:
    if not rows:
        print('no models: name one with -m, or set model = "provider/model" in your settings')
        return
    provider = None
    for row in rows:
        if "error" in row:
            if row["spec"].endswith("/"):
                print(f"{row['spec'][:-1]}  ({'; '.join(row['listed_by'])}): {row['error']}")
                continue
            print(f"{row['spec']}: cannot resolve it ({'; '.join(row['listed_by'])})")
            print(f"    {row['error']}")
            continue
        if row["provider"] != provider:
            provider = row["provider"]
            print(f"{provider}  (served by {row['served_by'] or 'unknown'})")
        print(f"  {row['name']}")
        print(f"    listed by: {'; '.join(row['listed_by'])}")
        if row.get("note"):
            print(f"    note: {row['note']}")
        print(f"    context window: {_figure(row, 'context_window')}")
        print(f"    max output: {_figure(row, 'max_output_tokens')}")
        price = row["price"]
        if price is None:
            print(
                "    price: unknown (no pricing table knows it; set one in your settings: "
                f'[models."{row["name"]}"] price = {{ input = ..., output = ... }})'
            )
        else:
            currency = price["currency"]
            cost_in = money(Decimal(price["input"]), currency)
            cost_out = money(Decimal(price["output"]), currency)
            print(
                f"    price per million tokens: input {cost_in}, output {cost_out} "
                f"({price['source']})"
            )


def _figure(row: dict[str, Any], name: str) -> str:
    value = row[name]
    if value is None:
        return "unknown"
    return f"{value:,} ({row[f'{name}_source']})"
