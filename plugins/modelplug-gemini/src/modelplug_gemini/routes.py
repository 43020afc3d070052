"""Which specs this plugin serves and what it knows about Gemini models.

Light on purpose: it runs on every ``resolve`` and imports neither httpx2 nor
google-auth.
"""

from __future__ import annotations

import re
from typing import Literal

from modelplug import ModelInfo, Provider, Route, Settings, declared_providers, user_endpoint

__all__ = [
    "DEFAULT_KEY_VARIABLE",
    "GEMINI",
    "VERTEX",
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


def resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """The Route for ``gemini/<model>``, ``vertex/<model>``, a bare ``gemini-*`` id, or
    ``<name>/<model>`` where ``name`` is the user's own provider of type ``gemini`` or
    ``vertex``. ``provider_type`` is core's word on the name's type; a bare id belongs to
    ``gemini`` while that name is ours."""
    provider, slash, model = spec.partition("/")
    if not slash and spec.startswith("gemini-"):
        own = settings.providers.get(GEMINI)
        provider, model, provider_type = GEMINI, spec, own.type if own else GEMINI
    if provider_type not in endpoint_types or not model:
        return None
    model = model.removeprefix("models/")
    # Without a base URL: Google's, decided when sending (Vertex's host depends on its
    # location). Vertex sends Google Cloud credentials, never a key, wherever it goes:
    # it is never local by its address.
    endpoint = user_endpoint(
        settings,
        provider,
        provider_type,
        builtin=provider in endpoint_types,
        needs_base_url=False,
        api_key_env=DEFAULT_KEY_VARIABLE if provider_type == GEMINI else None,
        local=False if provider_type == VERTEX else None,
    )
    if endpoint is None:
        return None
    info = ModelInfo(
        supports_tools=True,
        supports_images=True,
        thinking=thinking_mode(model),
        structured_output="native",
    )
    return Route(provider=provider, model=model, endpoint=endpoint, info=info)


def providers(settings: Settings) -> list[Provider]:
    """``gemini`` and ``vertex`` and every user provider of those types, all native
    (Google's own APIs)."""
    gemini = declared_providers(settings, GEMINI, builtin=[GEMINI], native=True, example=EXAMPLE)
    vertex = declared_providers(settings, VERTEX, builtin=[VERTEX], native=True, example=EXAMPLE)
    return gemini + vertex
