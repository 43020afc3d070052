"""``GET /v1/models``: what callers may name. The ``[gateway] models`` allow-list when
set; else the user's aliases and roles (a spec such as ``provider/model`` works too, but
the list of every model every provider has is not the gateway's to fetch per call)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import Gateway

__all__ = ["model_list", "model_names"]


def model_names(gateway: Gateway) -> list[str]:
    if gateway.options.models is not None:
        return list(gateway.options.models)
    settings = gateway.client.settings
    names = list(settings.aliases) + [r for r in settings.roles if r not in settings.aliases]
    if settings.model and settings.model not in names:
        names.append(settings.model)
    return names


def model_list(gateway: Gateway) -> dict[str, Any]:
    names = model_names(gateway)
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
