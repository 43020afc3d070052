"""What ``resolve()`` returns: a Route, its Endpoint, the ModelInfo known about the model
and its Price.

These are plain dataclasses, not pydantic models, because every start resolves a route:
keeping pydantic off that path is most of what makes ``Client().resolve()`` cheap. Copy
one with :func:`dataclasses.replace`. pydantic still takes them as fields and through
``TypeAdapter(Route)`` when a route must be stored as JSON.
"""

from __future__ import annotations

import builtins
import dataclasses
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from modelplug.contract.records import to_decimal

__all__ = ["Endpoint", "ModelInfo", "Price", "Provider", "Route", "StructuredMode", "TextCallMode"]

TextCallMode = Literal["whole", "lines", "off"] | str
# How a model can answer in a JSON Schema: the provider constrains decoding to it
# (native), a single forced tool whose input is the object (tool), or the schema in the
# system prompt (prompt). "unknown": core picks tool when the model has tools, else prompt.
StructuredMode = Literal["native", "tool", "prompt", "unknown"]


@dataclass(kw_only=True)
class Price:
    """USD per million tokens, and per web search. Numbers given as int, str or float
    become exact Decimals (a float by its shortest repr); NaN and infinity are refused."""

    input: Decimal
    output: Decimal
    cache_read: Decimal | None = None
    cache_write: Decimal | None = None
    web_search: Decimal | None = None

    @classmethod
    def free(cls) -> Price:
        """Nothing for any kind of token: a model on a server of your own."""
        zero = Decimal(0)
        return cls(input=zero, output=zero, cache_read=zero, cache_write=zero)

    def __post_init__(self) -> None:
        for spec in dataclasses.fields(self):
            value = getattr(self, spec.name)
            if value is not None:
                try:
                    setattr(self, spec.name, to_decimal(value))
                except ValueError as exc:
                    raise ValueError(f"Price.{spec.name}: {exc}") from None


@dataclass(kw_only=True)
class ModelInfo:
    """What is known about one model. None means unknown, not zero."""

    context_window: int | None = None
    max_output_tokens: int | None = None
    supports_tools: bool | None = None
    supports_images: bool | None = None
    thinking: Literal["always", "optional", "never"] | None = None
    text_tool_calls: TextCallMode | None = None
    reasoning_dialect: str | None = None
    structured_output: StructuredMode | None = None
    price: Price | None = None
    price_source: str | None = None
    #: An embedding model's own vector size (None: not an embedding model, or unknown);
    #: its ``context_window`` is then the input limit of one text.
    embedding_dimensions: int | None = None
    #: Whether the server cuts a text longer than ``context_window`` (True) or refuses
    #: it (False); None: unknown. Core refuses an input before sending only when False.
    embedding_truncates: bool | None = None
    #: Who gave ``context_window``: ``"settings"`` (a ``[models]`` entry), ``"probe"``
    #: (the server, asked), or the plugin that assumed it; set by ``Client.resolve``.
    #: Core refuses a prompt too long for the window before sending it only when the
    #: window is the settings' or the server's word, never a plugin's default.
    context_window_source: str | None = None
    notes: list[str] = field(default_factory=list)

    def merged_over(self, base: ModelInfo) -> ModelInfo:
        """This info with ``base`` filling every field this one leaves unknown."""
        known = {
            spec.name: getattr(self, spec.name)
            for spec in dataclasses.fields(self)
            if spec.name != "notes" and getattr(self, spec.name) is not None
        }
        notes = [*base.notes, *(n for n in self.notes if n not in base.notes)]
        return dataclasses.replace(base, **known, notes=notes)

    def public_dict(self) -> dict[str, Any]:
        """The info as JSON-ready values (prices as decimal strings)."""
        data: dict[str, Any] = _plain(self)
        return data


HEADER_MASK = "***"


@dataclass(kw_only=True)
class Endpoint:
    """Where and how to reach a provider. Holds the *name* of the key variable, never
    the key, and the *names* of the provider's headers, never their values.

    ``headers`` maps each header name the user's settings give the provider to
    ``"***"``, whatever values it is built with: a Route is printed, logged, pickled,
    stored as JSON (``TypeAdapter(Route)``, ``dataclasses.asdict``) and carried by every
    error, so it holds no secret at all. A plugin reads the values when it sends a
    request, as it reads the key: ``client.settings.provider_headers(route.provider)``.
    """

    type: str
    base_url: str | None = None
    api_key_env: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    allow_insecure_http: bool = False
    local: bool = False
    # The server software behind an endpoint of a generic type (``llamacpp``, ``vllm``,
    # ``ollama``...), so probes, reasoning dialects and quirks apply to a provider the
    # user named ``lab``. None when unknown or when the type says it all.
    server: str | None = None
    # The type's own settings from the user's table (``region``), as the plugin read
    # them (:func:`modelplug.provider_options`): plain values, no secret.
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.headers = dict.fromkeys(self.headers, HEADER_MASK)

    def public_dict(self) -> dict[str, Any]:
        """A dump safe to print (header values are masked in every dump)."""
        data: dict[str, Any] = _plain(self)
        return data


@dataclass(kw_only=True)
class Route:
    """A resolved model: which provider serves it, the model id, how to reach it, and
    what is known about it. ``spec`` is what the caller asked for (an alias or role
    before expansion); ``role`` is set when the spec was a role.
    """

    provider: str
    model: str
    # Left out, the endpoint is ``Endpoint(type=provider)``: an in-house adapter that
    # is not HTTP builds ``Route(provider="lab", model=m)`` and nothing else.
    endpoint: Endpoint = field(default_factory=lambda: Endpoint(type=""))
    info: ModelInfo = field(default_factory=ModelInfo)
    spec: str | None = None
    role: str | None = None
    # The plugin whose modelplug_resolve built this route (set by the client).
    plugin: str | None = None

    def __post_init__(self) -> None:
        if not self.endpoint.type:
            self.endpoint = dataclasses.replace(self.endpoint, type=self.provider)

    @property
    def name(self) -> str:
        """``provider/model``: the name a Message records as its producer."""
        return f"{self.provider}/{self.model}"

    def public_dict(self) -> dict[str, Any]:
        """The route as JSON-ready values, header values masked (``modelplug resolve``)."""
        data: dict[str, Any] = _plain(self)
        data["endpoint"] = self.endpoint.public_dict()
        data["name"] = self.name
        return data


@dataclass(frozen=True, kw_only=True)
class Provider:
    """One provider name a plugin serves, as ``modelplug_providers`` declares it.

    :param name: the name in specs (``ollama`` in ``ollama/qwen3:8b``).
    :param type: the endpoint type the plugin's stream hook serves for it.
    :param native: True when the plugin speaks the provider's own API (the Responses
        API for ``openai``, ``/api/chat`` for ``ollama``) rather than a generic
        compatible one. When two plugins declare one name, the native one serves it
        unless the user's file pins a type with ``[providers.NAME] type = "..."``.
    :param example: an example model id, for hints (``qwen3:8b``).
    :param options: a dataclass of the keys beyond core's that a user's
        ``[providers.NAME]`` table of this type takes (``region``); core checks the
        table against it when the name resolves (an unknown key is a warning naming the
        known ones, a wrong value a ConfigError), and the plugin reads the values with
        :func:`modelplug.provider_options`. None: the type takes no other key.
    """

    name: str
    type: str
    native: bool = False
    example: str | None = None
    options: builtins.type | None = None


def _plain(record: Any) -> Any:
    """A record as JSON-ready values: nested records as dicts, Decimals as strings."""
    if dataclasses.is_dataclass(record):
        return {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)}
    if isinstance(record, Decimal):
        return str(record)
    if isinstance(record, list):
        return [_plain(v) for v in record]
    if isinstance(record, dict):
        return {k: _plain(v) for k, v in record.items()}
    return record
