"""The providers this plugin serves and turning a spec into a Route.

``openai`` is OpenAI's own API; a user's ``[providers.NAME] type = "openai-responses"``
is any other server of the Responses API (Azure OpenAI's v1 endpoint, a LiteLLM proxy).
Light on purpose: it runs on every ``resolve``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from modelplug import (
    Endpoint,
    ModelInfo,
    Provider,
    Route,
    Settings,
    declared_providers,
    user_endpoint,
)

from .models import thinking_mode

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_KEY", "TYPE", "is_azure", "provider_names", "resolve"]

TYPE = "openai-responses"
OPENAI = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY = "OPENAI_API_KEY"
API_NOTE = "served through the Responses API (POST {base}/responses)"


def provider_names(settings: Settings) -> list[Provider]:
    """``openai`` plus the user's providers of this type, all native (the Responses API
    is OpenAI's own, not a compatible one). A user provider named ``openai`` of another
    type takes the name."""
    return declared_providers(settings, TYPE, builtin=[OPENAI], native=True, example="gpt-5")


def is_azure(endpoint: Endpoint) -> bool:
    """Azure OpenAI takes its key in an ``api-key`` header: said by ``server = "azure"``
    or by an Azure host name."""
    if endpoint.server == "azure":
        return True
    host = (urlsplit(endpoint.base_url or "").hostname or "").lower()
    return host.endswith((".openai.azure.com", ".cognitiveservices.azure.com"))


def resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """``openai/<model>`` or ``<name>/<model>`` for a provider of this type -> Route."""
    provider, _, model = spec.partition("/")
    if not model or provider_type not in (None, TYPE):
        return None  # (a spec naming no model never comes here: core refuses it first)
    builtin = provider == OPENAI
    base_url = DEFAULT_BASE_URL if builtin else None
    endpoint = user_endpoint(
        settings, provider, TYPE, builtin=builtin, base_url=base_url, api_key_env=DEFAULT_KEY
    )
    if endpoint is None:
        return None
    info = ModelInfo(
        supports_tools=True,
        thinking=thinking_mode(model),
        structured_output="native",
        notes=[API_NOTE.format(base=endpoint.base_url)],
    )
    return Route(provider=provider, model=model, endpoint=endpoint, info=info)
