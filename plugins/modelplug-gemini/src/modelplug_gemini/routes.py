"""Which specs this plugin serves and what it knows about Gemini models.

Light on purpose: it runs on every ``resolve`` and imports neither httpx2 nor
google-auth.
"""

from __future__ import annotations

import re
from typing import Literal

from modelplug.plugin import (
    Endpoint,
    ModelInfo,
    Provider,
    Route,
    Settings,
    declared_providers,
    user_endpoint,
)

__all__ = [
    "DEFAULT_KEY_VARIABLE",
    "GEMINI",
    "VERTEX",
    "endpoint_for",
    "endpoint_types",
    "model_generation",
    "providers",
    "resolve",
    "thinking_mode",
]

GEMINI = "gemini"
VERTEX = "vertex"
endpoint_types = (GEMINI, VERTEX)
DEFAULT_KEY_VARIABLE = "GEMINI_API_KEY"
# Google's own tools read GOOGLE_API_KEY too; it is asked for only when
# GEMINI_API_KEY is not set (and only for a provider that names no variable itself).
SECOND_KEY_VARIABLE = "GOOGLE_API_KEY"
EXAMPLE = "gemini-2.5-flash"

_GENERATION = re.compile(r"^gemini-(\d+)(?:\.(\d+))?")


def model_generation(model: str) -> tuple[int, int] | None:
    """``(2, 5)`` for ``gemini-2.5-flash``, ``(3, 0)`` for ``gemini-3-pro-preview``;
    None for an id that does not say (a tuned model, ``gemma-3``...)."""
    match = _GENERATION.match(model.removeprefix("models/"))
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def thinking_mode(model: str) -> Literal["always", "optional", "never"] | None:
    """2.5 Pro and the 3 models always think; 2.5 Flash and Flash-Lite think when asked
    (a budget of 0 turns it off); 2.0 and older never do."""
    generation = model_generation(model)
    if generation is None:
        return None
    if generation >= (3, 0) or (generation == (2, 5) and "pro" in model):
        return "always"
    if generation == (2, 5):
        return "optional"
    return "never"


def _split(spec: str) -> tuple[str, str] | None:
    provider, sep, model = spec.partition("/")
    if sep:
        return provider, model
    if spec.startswith("gemini-"):
        return GEMINI, spec
    return None


def resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """The Route for ``gemini/<model>``, ``vertex/<model>``, a bare ``gemini-*`` id, or
    ``<name>/<model>`` where ``name`` is the user's own provider of type ``gemini`` or
    ``vertex``."""
    parts = _split(spec)
    if parts is None:
        return None
    provider, model = parts
    if provider_type is not None and provider_type not in endpoint_types:
        return None
    endpoint = endpoint_for(provider, settings) if model else None
    if endpoint is None:
        return None
    model = model.removeprefix("models/")
    return Route(
        provider=provider,
        model=model,
        endpoint=endpoint,
        info=ModelInfo(
            supports_tools=True,
            supports_images=True,
            thinking=thinking_mode(model),
            structured_output="native",
        ),
    )


def endpoint_for(provider: str, settings: Settings) -> Endpoint | None:
    """The endpoint of ``provider`` (None: not this plugin's). Without a base URL it is
    Google's, decided when sending (Vertex's host depends on its location). Vertex
    authenticates with Google Cloud credentials, not a key: it is never local by its
    address."""
    own = settings.providers.get(provider)
    kind = own.type if own is not None else provider
    if kind not in endpoint_types:
        return None  # the user gave this name to another kind of provider
    return user_endpoint(
        settings,
        provider,
        kind,
        builtin=provider in endpoint_types,
        needs_base_url=False,
        api_key_env=DEFAULT_KEY_VARIABLE if kind == GEMINI else None,
        local=False if kind == VERTEX else None,
    )


def providers(settings: Settings) -> list[Provider]:
    """``gemini`` and ``vertex`` and every user provider of those types, all native
    (Google's own APIs)."""
    return sorted(
        (
            declared
            for kind in endpoint_types
            for declared in declared_providers(
                settings, kind, builtin=[kind], native=True, example=EXAMPLE
            )
        ),
        key=lambda p: p.name,
    )
