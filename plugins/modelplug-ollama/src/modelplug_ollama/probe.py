"""What Ollama says about a model: ``/api/show`` (the context length it was trained
for, its capabilities, the ``num_ctx`` of its parameters) and ``/api/ps`` (the context
length of the loaded model, when the server reports it); and which models it has,
``/api/tags``.

What was learnt is kept per Client and model (:func:`known_for`), so the stream can size
``num_ctx`` and refuse tools to a model without them, without asking again.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modelplug import ModelInfo, Route

from .errors import OllamaError
from .http import HTTP, request_headers
from .providers import DEFAULT_CONTEXT_WINDOW

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = [
    "Known",
    "known_for",
    "learn",
    "list_models",
    "num_ctx_for",
    "probe",
    "read_ps",
    "read_show",
]


@dataclass(frozen=True)
class Known:
    """What ``/api/show`` (and ``/api/ps``) said about one model; None: not said."""

    trained: int | None = None  # model_info["<arch>.context_length"]
    parameter: int | None = None  # "num_ctx" in the model's parameters (its Modelfile)
    loaded: int | None = None  # /api/ps context_length of the running model
    capabilities: tuple[str, ...] | None = None

    def can(self, capability: str) -> bool | None:
        return None if self.capabilities is None else capability in self.capabilities


# Client -> (base URL, model) -> Known. Weak: a closed, dropped Client takes its
# knowledge with it.
_KNOWN: weakref.WeakKeyDictionary[CallContext, dict[tuple[str, str], Known]] = (
    weakref.WeakKeyDictionary()
)


def known_for(client: CallContext, route: Route) -> Known | None:
    """What this client has learnt about the route's model (None: nothing yet)."""
    return _KNOWN.get(client, {}).get((route.endpoint.base_url or "", route.model))


def _remember(client: CallContext, route: Route, known: Known) -> None:
    _KNOWN.setdefault(client, {})[(route.endpoint.base_url or "", route.model)] = known


def _tokens(value: Any) -> int | None:
    """A token count: a positive int (JSON's true is not 1 here)."""
    return value if type(value) is int and value > 0 else None


def _parameter_num_ctx(parameters: Any) -> int | None:
    """``num_ctx`` from the parameters text (``"num_ctx 4096\\nstop ..."``)."""
    if not isinstance(parameters, str):
        return None
    for line in parameters.splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx" and value.strip().isdigit():
            return int(value.strip()) or None
    return None


def read_show(show: dict[str, Any]) -> Known:
    """The facts in an ``/api/show`` answer."""
    info = show.get("model_info")
    info = info if isinstance(info, dict) else {}
    arch = info.get("general.architecture")
    trained = _tokens(info.get(f"{arch}.context_length")) if isinstance(arch, str) else None
    if trained is None:
        # An answer without general.architecture: any "<arch>.context_length".
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length") and _tokens(value):
                trained = value
                break
    capabilities = show.get("capabilities")
    caps = (
        tuple(c for c in capabilities if isinstance(c, str))
        if isinstance(capabilities, list)
        else None
    )
    return Known(
        trained=trained,
        parameter=_parameter_num_ctx(show.get("parameters")),
        capabilities=caps,
    )


def read_ps(listing: dict[str, Any], model: str) -> int | None:
    """The loaded context length of ``model`` in an ``/api/ps`` answer."""
    models = listing.get("models")
    for entry in models if isinstance(models, list) else []:
        if isinstance(entry, dict) and model in (entry.get("name"), entry.get("model")):
            return _tokens(entry.get("context_length"))
    return None


def num_ctx_for(client: CallContext, route: Route, known: Known | None) -> int:
    """The context window every request asks Ollama to load: the user's
    ``context_window`` for the model; else the model's own ``num_ctx`` parameter; else
    the default window, capped at the length the model was trained for. The same
    window the client compacts at, so Ollama never cuts a conversation silently."""
    settings = client.settings.model_settings(route.provider, route.model)
    if settings is not None and settings.context_window is not None:
        return settings.context_window
    if known is not None and known.parameter is not None:
        return known.parameter
    if known is not None and known.trained is not None:
        return min(DEFAULT_CONTEXT_WINDOW, known.trained)
    return DEFAULT_CONTEXT_WINDOW


async def _get(
    client: CallContext, route: Route, method: str, path: str, body: Any = None
) -> dict[str, Any]:
    """Ollama's JSON answer, an object; an OllamaError for anything else."""
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider, required=False)
    headers = request_headers(route, key, client.settings, accept="application/json")
    content = None if body is None else json.dumps(body).encode()
    url = f"{route.endpoint.base_url}{path}"
    return await HTTP.call_json(client, route, url, headers=headers, method=method, body=content)


async def learn(client: CallContext, route: Route) -> Known:
    """Ask ``/api/show`` about the route's model and remember the answer. A model
    Ollama does not have and a server that is not there are errors (the call would
    fail the same way); any other failure is remembered as "nothing known", so a
    server without ``/api/show`` (a proxy) is asked once, not on every call."""
    try:
        show = await _get(client, route, "POST", "/api/show", {"model": route.model})
    except OllamaError as exc:
        if exc.error_class.kind in ("not_found", "unreachable", "auth"):
            raise
        known = Known()
    else:
        known = read_show(show)
    _remember(client, route, known)
    return known


async def probe(route: Route, client: CallContext) -> ModelInfo:
    """``modelplug resolve --probe``: /api/show, then /api/ps for the loaded window."""
    show = await _get(client, route, "POST", "/api/show", {"model": route.model})
    known = read_show(show)
    try:
        running = await _get(client, route, "GET", "/api/ps")
    except OllamaError as exc:
        if exc.error_class.kind == "unreachable":
            raise
        running = {}  # /api/ps only adds the loaded window
    loaded = read_ps(running, route.model)
    if loaded is not None:
        known = Known(
            trained=known.trained,
            parameter=known.parameter,
            loaded=loaded,
            capabilities=known.capabilities,
        )
    _remember(client, route, known)
    window = num_ctx_for(client, route, known)
    notes = [f"probed Ollama /api/show{' and /api/ps' if loaded is not None else ''}"]
    if known.trained is not None:
        notes.append(f"trained for {known.trained:,} tokens (model_info)")
    if known.parameter is not None:
        notes.append(f"the model's parameters set num_ctx {known.parameter}")
    if loaded is not None:
        notes.append(f"loaded now with a context of {loaded:,} tokens (/api/ps)")
    else:
        notes.append("not loaded now (/api/ps does not list it)")
    notes.append(f"every request sends num_ctx {window}, so Ollama loads that window")
    if known.capabilities is not None:
        notes.append(f"capabilities: {', '.join(known.capabilities) or 'none'}")
    thinking = known.can("thinking")
    return ModelInfo(
        context_window=window,
        supports_tools=known.can("tools"),
        supports_images=known.can("vision"),
        thinking=None if thinking is None else "optional" if thinking else "never",
        notes=notes,
    )


async def list_models(route: Route, client: CallContext) -> list[str]:
    """The models this Ollama has pulled, as ``/api/tags`` names them (``qwen3:8b``):
    what ``modelplug models`` shows for it instead of an example."""
    tags = await _get(client, route, "GET", "/api/tags")
    models = tags.get("models")
    names = [
        entry.get("name") or entry.get("model")
        for entry in (models if isinstance(models, list) else [])
        if isinstance(entry, dict)
    ]
    return [name for name in names if isinstance(name, str) and name]
