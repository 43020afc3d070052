"""Keyword arguments other clients take in a call and a modelplug call does not.

Someone coming from LiteLLM or the OpenAI SDK writes ``complete(model=..., api_key=...,
api_base=..., timeout=..., stream=True)``. Each of these is refused before anything is
sent, with what to write instead: the model is the first argument; a key or a server
address lives in the environment and the user's own settings file, never in a call (so
a key is not in code, and a project cannot point one elsewhere); timeouts are the
provider plugin's settings. A key passed this way is never repeated in the message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from modelplug.contract.errors import ModelplugError

if TYPE_CHECKING:
    from pathlib import Path

    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route
    from modelplug.contract.settings import Settings

__all__ = [
    "HABITS",
    "SDK_BASE_URLS",
    "ignored_base_url",
    "ignored_base_url_warning",
    "misplaced_arguments",
    "not_a_field",
]

# Named when the call's route does not resolve, so its own key variable is unknown.
_KEY_VARIABLES = "OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ..."


class Call:
    """What a hint may name about the call: its spec, and its route when it resolves
    (resolved only for a hint that names it: resolving may print the echo note).
    A plain class: a dataclass would cost this module's import a millisecond, and
    client.py imports it on every start."""

    def __init__(self, client: ClientSurface | None, spec: str | Route | None) -> None:
        self.client = client
        self.spec = spec
        self._route: list[Route | None] = []

    @property
    def route(self) -> Route | None:
        if not self._route:
            self._route.append(self._resolve())
        return self._route[0]

    def _resolve(self) -> Route | None:
        if self.client is None:
            return None
        try:
            return self.client.route_for(self.spec)
        except (ModelplugError, TypeError):
            return None  # a hint does without; the call reports it when it is sent


def _provider(call: Call) -> str:
    if isinstance(call.spec, str) and "/" in call.spec:
        return call.spec.partition("/")[0]
    route = call.route
    return route.provider if route is not None else "NAME"


def _user_file(call: Call) -> str:
    path = call.client.settings.user_path if call.client is not None else None
    if path is None:
        from modelplug.host.settings import user_config_path

        path = user_config_path()
    return f"your own settings file ({path})"


def _hint_model(call: Call) -> str:
    from modelplug.host.known_providers import example_spec

    return (
        'the model is the first argument: complete("provider/model", prompt), e.g. '
        f'complete("{example_spec("ollama")}", "hi"); Client(model=...) sets a default '
        "for every call"
    )


def _hint_base_url(call: Call) -> str:
    provider = _provider(call)
    return (
        "a call takes no server address: only your own settings file points a provider "
        f'(and its key) at a server. Set base_url = "http://..." under [providers.{provider}] '
        f"in {_user_file(call)}"
    )


def _hint_key(call: Call) -> str:
    route = call.route
    if route is not None and not route.endpoint.api_key_env:
        return (
            f"a call takes no key, and {route.provider} is sent none; if its server needs "
            f'one, put it in an environment variable and name it with api_key_env = "VAR" '
            f"under [providers.{route.provider}] in {_user_file(call)}"
        )
    where = (
        f"the environment variable {route.endpoint.api_key_env}"
        if route is not None
        else f"the provider's key variable ({_KEY_VARIABLES}; api_key_env under "
        "[providers.NAME] names one of your own)"
    )
    return (
        "a call takes no key, so none sits in code, a log or a traceback: put it in "
        f"{where}, or in credentials.toml beside your settings file (mode 0600)"
    )


def _hint_timeout(call: Call) -> str:
    from modelplug.contract.settings import normalize_plugin_name

    route = call.route
    section = normalize_plugin_name(route.plugin) if route and route.plugin else "PLUGIN"
    return (
        "a call takes no timeout: the provider plugin's settings bound each wait "
        f"(connect_timeout, first_byte_timeout, read_timeout, write_timeout under [{section}], "
        "in seconds); to bound a whole call, await acomplete() inside asyncio.timeout(seconds)"
    )


def _hint_stream(call: Call) -> str:
    return (
        "complete() returns the whole Response; for the events as they arrive call "
        "modelplug.stream(...) (async: astream), whose last event, Done, holds the Response"
    )


def _hint_retries(call: Call) -> str:
    return (
        "retries and fallbacks are the modelplug-fallback policy's: retries = N under "
        "[fallback] in your settings"
    )


def _hint_headers(call: Call) -> str:
    provider = _provider(call)
    return (
        f"a provider's headers come from headers = {{...}} under [providers.{provider}] in "
        f"{_user_file(call)}; other fields for the provider go in extra={{...}}"
    )


def _renamed(name: str, note: str = "") -> Callable[[Call], str]:
    return lambda call: f"modelplug names it {name}={note}"


Hint = Callable[[Call], str]
HABITS: dict[str, Hint] = {
    "model": _hint_model,
    "api_base": _hint_base_url,
    "base_url": _hint_base_url,
    "api_key": _hint_key,
    "timeout": _hint_timeout,
    "request_timeout": _hint_timeout,
    "stream": _hint_stream,
    "num_retries": _hint_retries,
    "max_retries": _hint_retries,
    "fallbacks": _hint_retries,
    "extra_headers": _hint_headers,
    "headers": _hint_headers,
    "max_completion_tokens": _renamed("max_tokens"),
    "response_format": _renamed(
        "output_schema", " (a pydantic model or a JSON Schema dict; see Structured output)"
    ),
    "custom_llm_provider": lambda call: (
        'name the provider in the spec: complete("provider/model", ...)'
    ),
}


def misplaced_arguments(
    names: list[str], client: ClientSurface | None, spec: str | Route | None
) -> str | None:
    """What to write instead of each of ``names`` that is another client's habit, one
    clause per argument; None when none is. What ``client`` makes of ``spec`` (its
    route's key variable, provider and plugin) makes the hints exact."""
    habits = [name for name in names if name in HABITS]
    if not habits:
        return None
    call = Call(client, spec)
    return "; ".join(f"{name}=: {HABITS[name](call)}" for name in habits)


def not_a_field(name: str, fields: list[str]) -> str:
    """The message for a keyword that is no Request field and no known habit."""
    return (
        f"{name}=: not a Request field (the fields: {', '.join(fields)}); a provider's own "
        "request fields go in extra={...}"
    )


# The official SDKs take a server address from these, beside their key variable.
SDK_BASE_URLS = {"OPENAI_API_KEY": "OPENAI_BASE_URL", "ANTHROPIC_API_KEY": "ANTHROPIC_BASE_URL"}


def ignored_base_url(settings: Settings, route: Route) -> str | None:
    """The SDK's base-URL variable that is set for ``route``'s key and that modelplug
    does not read, when the user's own file chose no address for the provider; else
    None.

    Not read because an environment variable is not only the user's word: a project's
    ``.env`` file reaches it (editors and tools load one on opening a folder), and a
    cloned repository must never point a key at its own server. So the address comes
    from the user's own settings file alone, and the variable is named, once, with the
    setting that does what the user meant.
    """
    variable = SDK_BASE_URLS.get(route.endpoint.api_key_env or "")
    if variable is None or not settings.getenv(variable):
        return None
    own = settings.providers.get(route.provider)
    if own is not None and own.base_url:
        return None  # the user's file chose; the variable is another tool's
    return variable


def ignored_base_url_warning(variable: str, route: Route, user_file: Path | None) -> str:
    where = f" in your own settings file ({user_file})" if user_file else ""
    return (
        f"{variable} is set, and modelplug does not read it: only your own settings file "
        "points a key at a server (a project's .env file can set a variable). Calls to "
        f"{route.provider} go to {route.endpoint.base_url or 'its default server'}; to "
        f'send them elsewhere, set base_url = "..." under [providers.{route.provider}]'
        f"{where}, or unset {variable} to silence this"
    )
