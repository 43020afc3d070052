"""The plugin kit: everything a provider, catalog or policy plugin builds on, in one place.

A plugin imports from here (and from :mod:`modelplug.types` for the neutral model),
never from core's other modules: what is listed below is the contract of modelplug
1.x, and everything else in core may change. Names load on first use, so importing
this module from a plugin's entry module costs nothing at ``modelplug plugins``.

Hooks
    :data:`hookimpl` marks an implementation; the specs are in :mod:`modelplug.hookspecs`.

Routes and settings
    :class:`Route`, :class:`Endpoint`, :class:`ModelInfo`, :class:`Price`,
    :class:`Provider` (what ``modelplug_providers`` returns), :class:`Settings`,
    :class:`ProviderSettings`, :func:`check_base_url`, :func:`is_loopback_url`,
    :func:`read_options` (a plugin's ``[table]`` into a typed record), :func:`warn`;
    for a provider type's side of the user's ``[providers.NAME]`` tables (see
    :mod:`modelplug.provider_table`): :func:`declared_providers` (what
    ``modelplug_providers`` returns), :func:`user_endpoint` (a user provider's Endpoint,
    checked once) and :func:`provider_options` (the type's own keys, typed).

Errors
    :class:`ErrorClass` and the exception family (:class:`ModelplugError`,
    :class:`ModelError`, :class:`RequestError`, :class:`ConfigError`, ...);
    :func:`class_for_status` (the status-to-ErrorClass table),
    :func:`describe_error` (one line for a failure, the way core words it),
    :func:`classify_generic` (core's classifier as a function),
    :func:`retry_after_from_headers`, :func:`retry_after_of`, :func:`parse_retry_after`.

HTTP
    :class:`ProviderHTTP` (see :mod:`modelplug.provider_http`): the one HTTP path of a
    provider, from sending to the last byte: the shared client, a resend on a dead
    keep-alive connection, statuses and non-stream answers to the plugin's classified
    errors (:class:`WireErrors`), partial output on a cut or a stall, early close and
    connection reuse; :class:`Timeouts` (``connect_timeout``, ``first_byte_timeout``,
    ``read_timeout``, ``write_timeout``), :func:`provider_headers`, and
    :func:`error_body`, :func:`error_message`, :func:`error_type` for error bodies.

Streams
    :func:`http_limits` (the ``[http]`` pool size for a shared httpx2 client, see
    :mod:`modelplug.http_pool`; :func:`http_options`, :class:`HTTPOptions`),
    :class:`SSEFramer` (bytes to whole server-sent events), :class:`NDJSONFramer` (bytes
    to whole lines of newline-delimited JSON), :class:`HeldText` (tool calls
    written as text), :func:`parse_arguments` and :func:`repair_loose_json` (the one
    loose-JSON repair; it never closes a truncation), :func:`estimate_tokens` and
    :func:`estimated_usage` (the one estimate for servers that report no usage).

Replay and secrets
    :func:`is_replayable`, :func:`replayable_blocks`, :func:`replayable_messages` (which
    thinking and vendor blocks may go back to which model); :func:`redact`,
    :func:`redact_data` (every string of JSON-like data), :func:`register_secret` and
    :func:`clean_exception` (an error whose chained causes hold nothing raw). Header
    values: ``client.settings.provider_headers(route.provider)`` at send time (a
    Route's ``endpoint.headers`` holds only the names).

Structured output
    ``Request.output_schema`` (an :class:`~modelplug.types.OutputSchema`) reaches a
    provider only in native mode; map it to the API's own field. :func:`openai_strict`,
    :func:`openai_json_schema` and :func:`inline_refs` translate a schema to what an API
    accepts, raising :class:`Untranslatable` rather than changing its meaning;
    :func:`undo_strict` reads a strict answer back.

Policies
    :func:`find_policies` (the policies of one kind registered on a client, so a policy
    can step aside for a user's own or skip them all when it re-opens a stream);
    :class:`Offer`, :class:`Splice` and :class:`SpliceReader` (see
    :mod:`modelplug.splice`): a wrapper that has made its decisions hands the rest of
    the stream to its consumer and is sent the Done back, instead of passing every
    event on itself. :class:`LocalDB` (see :mod:`modelplug.local_db`): an SQLite file
    the processes of one machine share (owner-only, WAL, one atomic write at a time,
    never stalling the event loop), for state a policy keeps between runs in
    ``client.settings.data_dir()``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "CHARS_PER_TOKEN",
    "Answer",
    "Client",
    "ConfigError",
    "Endpoint",
    "ErrorClass",
    "ErrorKind",
    "HTTPOptions",
    "HeldText",
    "LocalDB",
    "MissingKeyError",
    "ModelError",
    "ModelInfo",
    "ModelplugError",
    "ModelplugWarning",
    "NDJSONFramer",
    "NoProviderError",
    "Offer",
    "PluginError",
    "PluginLoadError",
    "Price",
    "Provider",
    "ProviderHTTP",
    "ProviderSettings",
    "RequestError",
    "Route",
    "SSEFramer",
    "Settings",
    "Splice",
    "SpliceReader",
    "StatusError",
    "TextCallError",
    "Timeouts",
    "UnknownProviderError",
    "Untranslatable",
    "WireErrors",
    "check_base_url",
    "class_for_status",
    "classify_generic",
    "clean_exception",
    "declared_providers",
    "describe_error",
    "error_body",
    "error_message",
    "error_type",
    "estimate_tokens",
    "estimated_usage",
    "find_policies",
    "hookimpl",
    "hookspec",
    "http_limits",
    "http_options",
    "inline_refs",
    "is_loopback_url",
    "is_replayable",
    "openai_json_schema",
    "openai_strict",
    "parse_arguments",
    "parse_retry_after",
    "provider_headers",
    "provider_options",
    "read_options",
    "redact",
    "redact_data",
    "register_secret",
    "repair_loose_json",
    "replayable_blocks",
    "replayable_messages",
    "retry_after_from_headers",
    "retry_after_of",
    "status_of",
    "undo_strict",
    "user_endpoint",
    "warn",
]

_WHERE = {
    "hookimpl": "plugins",
    "hookspec": "hookspecs",
    "find_policies": "plugins",
    "Client": "client",
    "Settings": "settings",
    "ProviderSettings": "settings",
    "ModelplugWarning": "settings",
    "check_base_url": "settings",
    "is_loopback_url": "settings",
    "warn": "settings",
    "read_options": "options",
    "Route": "routes",
    "Endpoint": "routes",
    "ModelInfo": "routes",
    "Price": "routes",
    "Provider": "routes",
    "ErrorClass": "errors",
    "ErrorKind": "errors",
    "ModelplugError": "errors",
    "ModelError": "errors",
    "RequestError": "errors",
    "ConfigError": "errors",
    "MissingKeyError": "errors",
    "UnknownProviderError": "errors",
    "NoProviderError": "errors",
    "PluginError": "errors",
    "PluginLoadError": "errors",
    "TextCallError": "errors",
    "class_for_status": "errors",
    "describe_error": "errors",
    "classify_generic": "builtin.classify",
    "status_of": "builtin.classify",
    "retry_after_from_headers": "builtin.classify",
    "retry_after_of": "builtin.classify",
    "parse_retry_after": "builtin.classify",
    "SSEFramer": "sse",
    "Answer": "provider_http",
    "ProviderHTTP": "provider_http",
    "Timeouts": "provider_http",
    "WireErrors": "provider_http",
    "StatusError": "provider_http",
    "error_body": "provider_http",
    "error_message": "provider_http",
    "error_type": "provider_http",
    "provider_headers": "provider_http",
    "declared_providers": "provider_table",
    "provider_options": "provider_table",
    "user_endpoint": "provider_table",
    "Offer": "splice",
    "Splice": "splice",
    "SpliceReader": "splice",
    "LocalDB": "local_db",
    "NDJSONFramer": "ndjson",
    "HTTPOptions": "http_pool",
    "http_limits": "http_pool",
    "http_options": "http_pool",
    "HeldText": "held_text",
    "parse_arguments": "loose_json",
    "repair_loose_json": "loose_json",
    "CHARS_PER_TOKEN": "estimate",
    "estimate_tokens": "estimate",
    "estimated_usage": "estimate",
    "is_replayable": "replay",
    "replayable_blocks": "replay",
    "replayable_messages": "replay",
    "redact": "redact",
    "redact_data": "redact",
    "clean_exception": "redact",
    "register_secret": "redact",
    "Untranslatable": "schema_translate",
    "inline_refs": "schema_translate",
    "openai_json_schema": "schema_translate",
    "openai_strict": "schema_translate",
    "undo_strict": "schema_translate",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'modelplug.plugin' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"modelplug.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from .builtin.classify import (
        classify_generic,
        parse_retry_after,
        retry_after_from_headers,
        retry_after_of,
        status_of,
    )
    from .client import Client
    from .errors import (
        ConfigError,
        ErrorClass,
        ErrorKind,
        MissingKeyError,
        ModelError,
        ModelplugError,
        NoProviderError,
        PluginError,
        PluginLoadError,
        RequestError,
        TextCallError,
        UnknownProviderError,
        class_for_status,
        describe_error,
    )
    from .estimate import CHARS_PER_TOKEN, estimate_tokens, estimated_usage
    from .held_text import HeldText
    from .hookspecs import hookspec
    from .http_pool import HTTPOptions, http_limits, http_options
    from .local_db import LocalDB
    from .loose_json import parse_arguments, repair_loose_json
    from .ndjson import NDJSONFramer
    from .options import read_options
    from .plugins import find_policies, hookimpl
    from .provider_http import (
        Answer,
        ProviderHTTP,
        StatusError,
        Timeouts,
        WireErrors,
        error_body,
        error_message,
        error_type,
        provider_headers,
    )
    from .provider_table import declared_providers, provider_options, user_endpoint
    from .redact import clean_exception, redact, redact_data, register_secret
    from .replay import is_replayable, replayable_blocks, replayable_messages
    from .routes import Endpoint, ModelInfo, Price, Provider, Route
    from .schema_translate import (
        Untranslatable,
        inline_refs,
        openai_json_schema,
        openai_strict,
        undo_strict,
    )
    from .settings import (
        ModelplugWarning,
        ProviderSettings,
        Settings,
        check_base_url,
        is_loopback_url,
        warn,
    )
    from .splice import Offer, Splice, SpliceReader
    from .sse import SSEFramer
