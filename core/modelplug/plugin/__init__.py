"""The plugin kit: what every provider, catalog or policy plugin builds on.

A plugin imports from here, from :mod:`modelplug.types` (the neutral model) and, for
specialised work, from the kit's three parts below; never from core's other modules.
These names are the contract of modelplug 1.x; everything else in core may change.
Names load on first use, so importing the kit from a plugin's entry module costs
nothing at ``modelplug plugins``.

Hooks and settings
    :data:`hookimpl` marks an implementation (the specs: :mod:`modelplug.hookspecs`);
    :class:`Client` (what the hooks are given), :class:`Settings`,
    :func:`read_options` (a plugin's ``[table]`` into a typed record), :func:`warn`.

Routes and a provider type's tables
    :class:`Route`, :class:`Endpoint`, :class:`ModelInfo`, :class:`Price`,
    :class:`Provider` (what ``modelplug_providers`` returns); for the user's
    ``[providers.NAME]`` tables (:mod:`modelplug.provider_table`):
    :func:`declared_providers`, :func:`user_endpoint`, :func:`provider_options`,
    :func:`check_base_url`, :func:`is_loopback_url`.

Errors
    :class:`ErrorClass`, :data:`ErrorKind` and the exceptions a provider raises or
    catches: :class:`ModelplugError`, :class:`ModelError`, :class:`RequestError`,
    :class:`ConfigError`, :class:`MissingKeyError`; :func:`class_for_status` (the
    status-to-ErrorClass table) and :func:`retry_after_from_headers`.

The HTTP path (:mod:`modelplug.provider_http`)
    :class:`ProviderHTTP` sends a provider's request and reads its answer: the shared
    client, one resend on a dead keep-alive connection, statuses and non-stream answers
    to the plugin's errors (:class:`WireErrors`, :class:`StatusError`), partial output
    on a cut or a stall, early close and connection reuse; :class:`Answer` is one
    answer, :class:`Timeouts` the timeouts every plugin has under the same names;
    :func:`provider_headers`, and :func:`error_body`, :func:`error_message`,
    :func:`error_type` for error bodies.

Embeddings
    :func:`embed_batches` splits a long input list into a provider's batches,
    :func:`gather_batches` sends them concurrently up to a bound, keeping their order
    and naming the inputs of a batch that failed; for the OpenAI answer shape every
    compatible server sends (:mod:`modelplug.openai_embeddings`),
    :func:`read_openai_embeddings` reads one batch's answer into an
    :class:`EmbeddingsBatch` (JSON or base64 vectors, classified errors) and
    :func:`combine_embeddings` makes the call's Embeddings of them.

Reading a stream
    :class:`SSEFramer` and :class:`NDJSONFramer` (bytes to whole events),
    :func:`parse_arguments` (tool-call arguments, repaired when loose),
    :func:`estimated_usage` (for servers that report none), :func:`is_replayable`
    (whether a thinking or vendor block may go back to a model).

Secrets
    :func:`redact`, :func:`redact_data` (every string of JSON-like data),
    :func:`register_secret`. Header values come from
    ``client.settings.provider_headers(route.provider)`` at send time (a Route holds
    their names only); keys from ``client.settings.api_key(variable, provider)``.

The kit's parts
    :mod:`modelplug.plugin.wire` (tool calls written as text, the loose-JSON repair,
    token estimates, replaying whole conversations), :mod:`modelplug.plugin.schema`
    (structured output: JSON Schema translated to what an API accepts) and
    :mod:`modelplug.plugin.policy` (for policy plugins: finding policies, handing a
    stream over, core's classifier, a shared local store).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug._lazy import lazy_exports

#: The names of this part of the kit and the module of core each lives in: the one list
#: (``__all__``, ``dir()`` and the type checkers' view below are checked against it).
KIT = {
    "retry_after_from_headers": "builtin.classify",
    "Client": "client",
    "ConfigError": "errors",
    "ErrorClass": "errors",
    "ErrorKind": "errors",
    "MissingKeyError": "errors",
    "ModelError": "errors",
    "ModelplugError": "errors",
    "RequestError": "errors",
    "class_for_status": "errors",
    "embed_batches": "embed_batches",
    "gather_batches": "embed_batches",
    "estimated_usage": "estimate",
    "parse_arguments": "loose_json",
    "NDJSONFramer": "ndjson",
    "EmbeddingsBatch": "openai_embeddings",
    "combine_embeddings": "openai_embeddings",
    "read_openai_embeddings": "openai_embeddings",
    "read_options": "options",
    "hookimpl": "plugins",
    "Answer": "provider_http",
    "ProviderHTTP": "provider_http",
    "StatusError": "provider_http",
    "Timeouts": "provider_http",
    "WireErrors": "provider_http",
    "error_body": "provider_http",
    "error_message": "provider_http",
    "error_type": "provider_http",
    "provider_headers": "provider_http",
    "declared_providers": "provider_table",
    "provider_options": "provider_table",
    "user_endpoint": "provider_table",
    "redact": "redact",
    "redact_data": "redact",
    "register_secret": "redact",
    "is_replayable": "replay",
    "Endpoint": "routes",
    "ModelInfo": "routes",
    "Price": "routes",
    "Provider": "routes",
    "Route": "routes",
    "Settings": "settings",
    "check_base_url": "settings",
    "is_loopback_url": "settings",
    "warn": "settings",
    "SSEFramer": "sse",
}
__all__ = sorted(KIT)

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, KIT)

if TYPE_CHECKING:
    from ..builtin.classify import retry_after_from_headers as retry_after_from_headers
    from ..client import Client as Client
    from ..embed_batches import embed_batches as embed_batches
    from ..embed_batches import gather_batches as gather_batches
    from ..errors import (
        ConfigError as ConfigError,
    )
    from ..errors import (
        ErrorClass as ErrorClass,
    )
    from ..errors import (
        ErrorKind as ErrorKind,
    )
    from ..errors import (
        MissingKeyError as MissingKeyError,
    )
    from ..errors import (
        ModelError as ModelError,
    )
    from ..errors import (
        ModelplugError as ModelplugError,
    )
    from ..errors import (
        RequestError as RequestError,
    )
    from ..errors import (
        class_for_status as class_for_status,
    )
    from ..estimate import estimated_usage as estimated_usage
    from ..loose_json import parse_arguments as parse_arguments
    from ..ndjson import NDJSONFramer as NDJSONFramer
    from ..openai_embeddings import (
        EmbeddingsBatch as EmbeddingsBatch,
    )
    from ..openai_embeddings import (
        combine_embeddings as combine_embeddings,
    )
    from ..openai_embeddings import (
        read_openai_embeddings as read_openai_embeddings,
    )
    from ..options import read_options as read_options
    from ..plugins import hookimpl as hookimpl
    from ..provider_http import (
        Answer as Answer,
    )
    from ..provider_http import (
        ProviderHTTP as ProviderHTTP,
    )
    from ..provider_http import (
        StatusError as StatusError,
    )
    from ..provider_http import (
        Timeouts as Timeouts,
    )
    from ..provider_http import (
        WireErrors as WireErrors,
    )
    from ..provider_http import (
        error_body as error_body,
    )
    from ..provider_http import (
        error_message as error_message,
    )
    from ..provider_http import (
        error_type as error_type,
    )
    from ..provider_http import (
        provider_headers as provider_headers,
    )
    from ..provider_table import (
        declared_providers as declared_providers,
    )
    from ..provider_table import (
        provider_options as provider_options,
    )
    from ..provider_table import (
        user_endpoint as user_endpoint,
    )
    from ..redact import (
        redact as redact,
    )
    from ..redact import (
        redact_data as redact_data,
    )
    from ..redact import (
        register_secret as register_secret,
    )
    from ..replay import is_replayable as is_replayable
    from ..routes import (
        Endpoint as Endpoint,
    )
    from ..routes import (
        ModelInfo as ModelInfo,
    )
    from ..routes import (
        Price as Price,
    )
    from ..routes import (
        Provider as Provider,
    )
    from ..routes import (
        Route as Route,
    )
    from ..settings import (
        Settings as Settings,
    )
    from ..settings import (
        check_base_url as check_base_url,
    )
    from ..settings import (
        is_loopback_url as is_loopback_url,
    )
    from ..settings import (
        warn as warn,
    )
    from ..sse import SSEFramer as SSEFramer
