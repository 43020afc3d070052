"""``GET /v1/models``: what callers may name.

The ``[gateway] models`` allow-list when set. Else what the gateway can serve: the
user's aliases, roles and model groups and default model, the ``[models."provider/model"]`` entries,
the models the local servers and the user's own providers list now (asked as ``modelplug
models`` asks them, kept for :data:`SERVED_FOR` seconds so a client polling the list
does not poll the servers), and the example model of each hosted provider whose key is
set. Any other ``provider/model`` spec works too; the list is what a model picker
offers.
"""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any

from modelplug import ModelplugError

if TYPE_CHECKING:
    from modelplug import Client

    from .app_protocol import GatewayApp

__all__ = ["SERVED_FOR", "model_list", "model_names", "served_model_list"]

SERVED_FOR = 30.0  # seconds a server's list is kept

# A gateway -> (when asked, "provider/model" names the servers listed). Weak: a gateway
# that goes takes its list with it.
_SERVED: weakref.WeakKeyDictionary[GatewayApp, tuple[float, list[str]]] = (
    weakref.WeakKeyDictionary()
)


def model_names(gateway: GatewayApp) -> list[str]:
    """The names the settings give: the allow-list, else aliases, roles, model groups,
    the default model and the ``[models]`` entries that name a provider."""
    if gateway.options.models is not None:
        return list(gateway.options.models)
    settings = gateway.client.settings
    names = list(settings.aliases) + [r for r in settings.roles if r not in settings.aliases]
    # Model groups (modelplug-router's [groups]): one name for several deployments.
    names += [g for g in settings.options.get("groups", {}) if g not in names]
    if settings.model and settings.model not in names:
        names.append(settings.model)
    names += [spec for spec in settings.models if "/" in spec and spec not in names]
    return names


async def ask_servers(gateway: GatewayApp) -> None:
    """Ask the local servers and the user's own providers what they serve, unless they
    were asked less than :data:`SERVED_FOR` seconds ago (a server that does not answer
    lists nothing)."""
    kept = _SERVED.get(gateway)
    now = time.monotonic()
    if kept is not None and now - kept[0] < SERVED_FOR:
        return
    answers = await gateway.client.aserved_models()
    names = [
        f"{provider}/{model}"
        for provider, served in answers.items()
        for model in served.models or ()
    ]
    _SERVED[gateway] = (now, names)


def keyed_examples(client: Client) -> list[str]:
    """The example model of each hosted provider whose key is set (a server of this
    machine is listed by what it serves, not by an example)."""
    names: list[str] = []
    for provider, declared in client.declared_providers().items():
        example = next((entry.example for entry, _ in declared if entry.example), None)
        if example is None:
            continue
        try:
            route = client.resolve(f"{provider}/{example}")
        except ModelplugError:  # a provider that does not resolve is not servable
            continue
        variable = route.endpoint.api_key_env
        if route.endpoint.local or not variable:
            continue
        if client.settings.api_key(variable, provider, required=False):
            names.append(route.name)
    return names


async def served_model_list(gateway: GatewayApp) -> dict[str, Any]:
    """:func:`model_list` with the servers asked first (when their answer is old)."""
    if gateway.options.models is None:
        await ask_servers(gateway)
    return model_list(gateway)


def model_list(gateway: GatewayApp) -> dict[str, Any]:
    """The list in both SDKs' shapes: the allow-list, else the settings' names, what
    the servers listed when last asked, and the hosted examples whose key is set."""
    names = model_names(gateway)
    if gateway.options.models is None:
        served = _SERVED.get(gateway, (0.0, []))[1]
        for name in [*served, *keyed_examples(gateway.client)]:
            if name not in names:
                names.append(name)
    # Both SDKs' list shapes at once: OpenAI's object/owned_by, Anthropic's type/paging.
    return {
        "object": "list",
        "data": [
            {
                "id": name,
                "object": "model",
                "type": "model",
                "created": 0,
                "created_at": "1970-01-01T00:00:00Z",
                "display_name": name,
                "owned_by": "modelplug",
            }
            for name in names
        ],
        "has_more": False,
        "first_id": names[0] if names else None,
        "last_id": names[-1] if names else None,
    }
