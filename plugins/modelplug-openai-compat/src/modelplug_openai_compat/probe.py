"""Ask a local server what it actually loaded: llama.cpp ``/props``, Ollama
``/api/show`` (and ``/api/ps`` for a running model), vLLM ``/v1/models``, LM Studio
``/api/v0/models``. Chosen by the endpoint's server (``Endpoint.server``: a preset's
own, or ``server = "..."`` in the user's ``[providers.NAME]``), never by the name.
And which models a server serves: ``GET /v1/models``, which every one of them answers."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Literal

from modelplug import ModelInfo, Route

from .errors import OpenAICompatError
from .http import HTTP, request_headers

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["list_models", "probe_for"]


def _root(base_url: str) -> str:
    """The server root: the base URL without its OpenAI ``/v1`` suffix."""
    return base_url[:-3] if base_url.endswith("/v1") else base_url


def _probe_headers(client: CallContext, route: Route) -> dict[str, str]:
    """The headers a call to the provider sends (its configured headers, and its key as
    ``Authorization: Bearer`` when the endpoint names one and it is set), asking for
    JSON. A missing key is no failure here: a keyless local server is still probed."""
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider, required=False)
    return request_headers(route, key, client.settings, accept="application/json")


async def _call(
    client: CallContext, route: Route, method: str, url: str, json_body: Any = None
) -> dict[str, Any]:
    """The server's answer, a JSON object; a ModelError for anything else."""
    body = None if json_body is None else json.dumps(json_body).encode()
    headers = _probe_headers(client, route)
    return await HTTP.call_json(client, route, url, headers=headers, method=method, body=body)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tokens(value: Any) -> int | None:
    """A token count a server reported: a positive int. JSON's true is not 1 here,
    though Python counts a bool as an int."""
    return value if type(value) is int and value > 0 else None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


async def probe_llamacpp(client: CallContext, route: Route) -> ModelInfo:
    props = await _call(client, route, "GET", _root(route.endpoint.base_url or "") + "/props")
    settings = _dict(props.get("default_generation_settings"))
    n_ctx = settings.get("n_ctx") or props.get("n_ctx")
    tools = _dict(props.get("chat_template_caps")).get("supports_tools")
    return ModelInfo(
        context_window=_tokens(n_ctx),
        supports_tools=tools if isinstance(tools, bool) else None,
        notes=["probed llama.cpp /props (default_generation_settings.n_ctx)"],
    )


async def probe_ollama(client: CallContext, route: Route) -> ModelInfo:
    root = _root(route.endpoint.base_url or "")
    show = await _call(client, route, "POST", root + "/api/show", {"model": route.model})
    notes = ["probed Ollama /api/show"]
    window: int | None = None
    running: dict[str, Any]
    try:
        running = await _call(client, route, "GET", root + "/api/ps")
    except OpenAICompatError:
        # /api/ps only refines the window; an Ollama without it is still probed.
        running = {}
    for model in _dicts(running.get("models")):
        if model.get("name") == route.model or model.get("model") == route.model:
            loaded = _tokens(model.get("context_length"))
            if loaded is not None:
                window = loaded
                notes.append("context window as loaded, from /api/ps")
    if window is None:
        for line in str(show.get("parameters") or "").splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                window = int(value.strip())
                notes.append("context window from the model's num_ctx parameter")
    if window is None:
        for key, value in _dict(show.get("model_info")).items():
            if key.endswith(".context_length") and _tokens(value) is not None:
                window = value
                notes.append(
                    "context window the model was trained for; Ollama may load less "
                    "(set OLLAMA_CONTEXT_LENGTH)"
                )
    capabilities = show.get("capabilities")
    tools = "tools" in capabilities if isinstance(capabilities, list) else None
    thinking: Literal["optional", "never"] | None = None
    if isinstance(capabilities, list):
        thinking = "optional" if "thinking" in capabilities else "never"
    return ModelInfo(context_window=window, supports_tools=tools, thinking=thinking, notes=notes)


async def probe_vllm(client: CallContext, route: Route) -> ModelInfo:
    listing = await _call(client, route, "GET", f"{route.endpoint.base_url}/models")
    for model in _dicts(listing.get("data")):
        if model.get("id") == route.model and _tokens(model.get("max_model_len")) is not None:
            return ModelInfo(
                context_window=model["max_model_len"],
                notes=["probed vLLM /v1/models (max_model_len)"],
            )
    return ModelInfo(notes=[f"vLLM does not list {route.model}"])


async def probe_lmstudio(client: CallContext, route: Route) -> ModelInfo:
    root = _root(route.endpoint.base_url or "")
    listing = await _call(client, route, "GET", root + "/api/v0/models")
    for model in _dicts(listing.get("data")):
        if model.get("id") != route.model:
            continue
        loaded = _tokens(model.get("loaded_context_length"))
        most = _tokens(model.get("max_context_length"))
        caps = model.get("capabilities")
        tools = "tool_use" in caps if isinstance(caps, list) else None
        if loaded is not None:
            return ModelInfo(
                context_window=loaded,
                supports_tools=tools,
                notes=["probed LM Studio /api/v0/models (loaded_context_length)"],
            )
        if most is not None:
            return ModelInfo(
                context_window=most,
                supports_tools=tools,
                notes=[
                    "probed LM Studio /api/v0/models: the model's maximum context; "
                    "LM Studio may load less"
                ],
            )
    return ModelInfo(notes=[f"LM Studio does not list {route.model}"])


async def list_models(client: CallContext, route: Route) -> list[str]:
    """The ids of ``GET {base_url}/models``, the list every OpenAI-compatible server
    answers (llama.cpp, vLLM, LM Studio, Ollama's ``/v1``, LiteLLM): what ``modelplug
    models`` shows for a local server instead of an example."""
    listing = await _call(client, route, "GET", f"{route.endpoint.base_url}/models")
    ids = (model.get("id") for model in _dicts(listing.get("data")))
    return [model_id for model_id in ids if isinstance(model_id, str) and model_id]


PROBES = {
    "llamacpp": probe_llamacpp,
    "ollama": probe_ollama,
    "vllm": probe_vllm,
    "lmstudio": probe_lmstudio,
}


def probe_for(route: Route, client: CallContext) -> Awaitable[ModelInfo] | None:
    probe = PROBES.get(route.endpoint.server or "")
    if probe is None:
        return None
    return probe(client, route)
