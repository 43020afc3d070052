"""Tools sent to a model that cannot call them: one Notice, the same for every provider.

A server without tool support answers such a request in plain text with ``end_turn``
(or refuses it), which reads like a model that chose not to call a tool. The call is
still sent (what is known may be stale, and a server may handle tools in a generic way
its probe does not show), but first the caller hears why no call will come and what
would change that. ``complete()`` without ``on_event`` logs it as a warning, as every
Notice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug.contract.types import Notice

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route
    from modelplug.contract.types import Request

__all__ = ["KIND", "tools_unsupported"]

KIND = "tools_unsupported"
# How to run a server with tool calls, by Endpoint.server.
SERVER_HINTS = {
    "llamacpp": "llama-server with --jinja and a chat template that has tools",
    "ollama": "a model whose `ollama show` lists the tools capability",
    "vllm": "vllm serve with --enable-auto-tool-choice and a --tool-call-parser",
}


def tools_unsupported(
    client: ClientSurface, route: Route, request: Request, *, said: str | None = None
) -> Notice | None:
    """The Notice for ``request``'s tools on ``route`` when the model cannot call them:
    ``said`` is what the plugin itself learnt (Ollama's capabilities), else the route's
    ``supports_tools = False`` decides. None when the request has no tools to call,
    when nothing says the model cannot, or when the model's tool calls are read from its
    text (a ``text_tool_calls`` mode: the tools are then the prompt's business)."""
    if not request.tools or request.tool_choice == "none":
        return None
    info = route.info
    if info.text_tool_calls not in (None, "off"):
        return None
    if said is None:
        if info.supports_tools is not False:
            return None
        said = _who_said(client, route)
    name = route.name
    count = len(request.tools)
    hint = SERVER_HINTS.get(route.endpoint.server or route.endpoint.type)
    server = f" ({hint})" if hint else ""
    message = (
        f"{name} cannot call tools ({said}), so the {count} tool{'s' * (count != 1)} of "
        "this request will not be called: expect a plain-text answer, or the server's "
        f"refusal. Use a model or server that can call tools{server}; if your prompt asks "
        f'for calls written as text, set text_tool_calls = "lines" under [models."{name}"]; '
        "if the model can call tools, set supports_tools = true there."
    )
    return Notice(
        kind=KIND,
        message=message,
        details={"model": name, "tools": [tool.name for tool in request.tools], "said": said},
    )


def _who_said(client: ClientSurface, route: Route) -> str:
    own = client.settings.model_settings(route.provider, route.model)
    if own is not None and own.supports_tools is False:
        return "your settings say supports_tools = false"
    probed = client.probe_cache().get(route)
    if probed is not None and probed[0].supports_tools is False:
        again = f"`modelplug resolve --probe {route.name}`"
        return f"a probe of the server said so; {again} asks again"
    return f"{route.plugin or 'its provider plugin'} says supports_tools = false"
