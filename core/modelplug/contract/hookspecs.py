"""The hook specs: the contract every modelplug plugin implements.

All "who handles this?" hooks are ``firstresult``: an implementation returns None to let
another plugin try. Core's own defaults are registered in the same plugin manager and
marked ``trylast`` (the user's price and model-info overrides are ``tryfirst``).
Implementations may accept any subset of a hook's arguments, as pluggy allows.

A provider plugin serves a provider *type* (``route.endpoint.type``), not a provider
name: a user's ``[providers.work] type = "anthropic"`` reaches the anthropic plugin.
When two plugins declare the same provider name, core decides which type it has (see
:func:`modelplug_providers`) and passes it to :func:`modelplug_resolve`.

A hook is never handed the concrete Client: an argument named ``client`` is the caller
seen as a :class:`~modelplug.contract.context.CallContext` (settings, the shared HTTP
clients, price and classify, and for policies the next stream), and each spec below says
what it may use of it. A plugin imports what it needs from the top-level packages:
``modelplug`` (these markers, the neutral types, routes, errors, settings) and, for a
provider's plumbing, ``modelplug_kit``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import argparse

    from modelplug.contract.context import CallContext
    from modelplug.contract.errors import ErrorClass
    from modelplug.contract.repetition import RepetitionDetector, RepetitionGuard
    from modelplug.contract.routes import ModelInfo, Provider, Route
    from modelplug.contract.settings import Settings
    from modelplug.contract.transcripts import TranscribeRequest, Transcript
    from modelplug.contract.types import (
        Cost,
        Embeddings,
        EmbedRequest,
        Event,
        KeyBudget,
        ParsedText,
        Request,
        ToolSpec,
        Usage,
    )

hookspec = pluggy.HookspecMarker("modelplug")
hookimpl = pluggy.HookimplMarker("modelplug")

__all__ = [
    "hookspec",
    "modelplug_classify_error",
    "modelplug_cli_commands",
    "modelplug_close",
    "modelplug_count_tokens",
    "modelplug_describe_route",
    "modelplug_embed",
    "modelplug_key_budget",
    "modelplug_list_models",
    "modelplug_model_info",
    "modelplug_parse_text_tool_calls",
    "modelplug_price",
    "modelplug_probe",
    "modelplug_providers",
    "modelplug_repetition_detector",
    "modelplug_resolve",
    "modelplug_stream",
    "modelplug_transcribe",
]


@hookspec(firstresult=True)
def modelplug_resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """Turn a model spec into a Route.

    Called by :meth:`Client.resolve` after aliases and roles have been expanded, so
    ``spec`` is a concrete ``provider/model`` (split at the first ``/``; the model part
    may itself contain ``/``) or a bare model id. A bare id of a known vendor's family
    (``claude-sonnet-4-6``, ``gemini-2.5-flash``, ``gpt-5``) arrives as that vendor's
    spec (``anthropic/claude-sonnet-4-6``): core's one rule,
    :data:`modelplug.host.known_providers.BARE_FAMILIES`.

    .. versionadded:: 0.1
    .. versionchanged:: 1.0 ``provider_type``.

    :param spec: the concrete spec to resolve.
    :param settings: the merged settings (user, project, environment, explicit). Only
        ``settings.providers`` — which only the user's own file can set — may supply a
        base URL, headers or a key variable.
    :param provider_type: the type core chose for the spec's provider name: the
        ``type`` of the user's ``[providers.NAME]`` when there is one, else the type of
        the winning :class:`~modelplug.contract.routes.Provider` declaration (a native one over
        a generic one). None when no plugin declared the name (a bare model id, or a
        name only an in-house adapter knows). Serve the spec only when this is one of
        your types, or when it is None and you recognise the spec yourself.
    :return: the Route (provider name, model id, endpoint, model info) when this plugin
        serves the spec, or None to let another plugin try. Raise ConfigError for a
        spec that is yours but wrong (``anthropic/`` names no model).
    """


@hookspec(firstresult=True)
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> AsyncIterator[Event] | None:
    """Open a stream of events for a route this plugin serves.

    Called by :meth:`Client.astream` (and the sync facades) once per call, after
    :func:`modelplug_resolve`. Policies such as retries and fallbacks are
    ``wrapper=True`` implementations of this same hook: they receive the provider's
    iterator from ``yield`` and return one that wraps it. A wrapper that re-opens a
    stream calls ``client.open_stream(route, request, exclude=[...])`` with the policies
    of its kind (:func:`modelplug.find_policies`), so policies never nest. A
    wrapper that only decides things before the output and at the end returns an
    :class:`~modelplug.Offer`: once its decisions are made it hands the rest of
    the stream to a consumer that takes it and is sent the Done (or thrown the failure)
    back, so it costs nothing per event (see :mod:`modelplug.client.splice`).

    :param route: the resolved route (no key in it; read the key with
        ``client.settings.api_key(route.endpoint.api_key_env, route.provider)`` when the
        request is sent).
    :param request: the validated request.
    :param client: the calling client as a :class:`~modelplug.contract.context.CallContext`:
        ``settings`` (keys, headers, the plugin's table), ``async_http`` (the shared HTTP
        clients), ``price`` and ``classify``; a policy also ``open_stream`` and ``policies``.
    :return: an async iterator that yields TextDelta, ThinkingDelta, ToolCallStart and
        Notice events and then exactly one Done carrying the whole Response; or None
        when this plugin does not serve ``route.endpoint.type``. Errors are raised from
        the iterator; an error after output carries the partial Response as
        ``.partial``. The implementation is a plain ``def`` (an ``async def`` is
        refused when the plugin registers, since it could never return None).

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def modelplug_repetition_detector(
    route: Route, request: Request, guard: RepetitionGuard, client: CallContext
) -> RepetitionDetector | None:
    """Supply the detector that watches one stream for a loop, in place of core's.

    Called by the client once per call, before its stream is read, unless the
    repetition guard is off for the call (``[repetition] off = true``, or the call's
    ``repetition=False``). Core's own answer, trylast, is the default detector
    (:class:`modelplug.builtin.loop_detector.LoopDetector`): the same bytes repeated
    exactly for a long span. The detector returned replaces it for this stream: core
    feeds it the content and reasoning text every ``detector.scan_every`` characters,
    and when ``scan`` returns a :class:`~modelplug.Repetition` core closes the
    provider's stream and ends the call with stop reason ``repetition``.

    :param route: the resolved route of the call.
    :param request: the validated request (its conversation, tools, sampling).
    :param guard: the thresholds in effect for the call: the call's
        ``repetition=RepetitionGuard(...)``, else the ``[repetition]`` settings table.
    :param client: the calling client as a CallContext (``settings`` for the plugin's
        own table).
    :return: a new detector for this one stream, or None to let another plugin (in the
        end, core's default) answer. A detector must be cheap per call of ``scan``:
        it runs on the stream's hot path.

    .. versionadded:: 2.0
    """


@hookspec(firstresult=True)
def modelplug_price(
    route: Route, usage: Usage, price_factor: float, settings: Settings
) -> Cost | None:
    """Price the usage of one response.

    Called by the client once per response, after the stream's Done event, unless the
    response already carries a cost; also by ``modelplug price``.

    :param route: the route that answered (provider, model, endpoint, model info).
    :param usage: token counts as the provider reported them, or as estimated
        (``usage.reported`` is False then). ``usage.input`` excludes cache reads and
        writes (they are ``cache_read`` and ``cache_write``, each priced at its own
        rate); ``usage.output`` includes reasoning tokens. Build one from a wire's
        numbers with ``usage_from_openai`` / ``from_anthropic`` / ... so the rule holds.
    :param price_factor: multiplier for token prices (0.5 for batch responses); per-use
        charges such as web searches stay at full price.
    :param settings: the merged settings (a table reads its own options from them).
    :return: the cost, or None when this table does not know the model, so another
        pricing plugin can try. Never return zero to mean "unknown".

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def modelplug_classify_error(error: BaseException, route: Route | None) -> ErrorClass | None:
    """Say what kind of failure an error is.

    Called whenever a stream raises, by the client and by retry and fallback policies.
    Provider plugins recognise their SDK's or their wire's errors; core's trylast
    generic classifier reads plain properties (status, code, type, message, cause,
    Retry-After) and always answers.

    :param error: the exception the provider raised.
    :param route: the route the error happened on, when known.
    :return: the ErrorClass, or None when this plugin does not recognise the error.
        An exception raised here is reported as a PluginError naming this plugin.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def modelplug_parse_text_tool_calls(
    text: str,
    tools: list[ToolSpec],
    mode: str,
    final: bool,
    state: dict[str, Any] | None,
) -> ParsedText | None:
    """Read tool calls that a model wrote as text instead of as real tool calls.

    Called by adapters (through :class:`modelplug.contract.held_text.HeldText`) when the server
    sent no real calls: with ``final=False`` on every text delta while streaming, and
    once with ``final=True`` at the end.

    :param text: the whole reply text so far (with ``final=True``: the whole reply).
    :param tools: the request's tools; every call's name must be one of them.
    :param mode: the model's mode from settings (``whole``, ``lines``, ``off`` or a
        plugin's own dialect such as ``heredoc``).
    :param final: True when the reply is complete.
    :param state: an opaque dict owned by the reader: the caller (HeldText, the one
        place that drives this hook) makes an empty dict per reply and passes the same
        one on every call, never reading or changing it, so a reader can keep where
        its scan stopped and resume there instead of re-reading ``text``. None when
        the caller keeps no state: then read ``text`` from the start.
    :return: with ``final=False``, a ParsedText whose ``hold_from`` says from which
        character text must not be shown yet (None: show it all); with ``final=True``,
        the prose without the calls and the calls as tool_use blocks. Return None when
        this plugin does not handle ``mode``. A pure function of its arguments (and
        ``state``): no I/O, no global state.

    .. versionadded:: 0.1
    .. versionchanged:: 1.0 ``state`` is documented as the reader's own.
    """


@hookspec(firstresult=True)
def modelplug_model_info(route: Route, settings: Settings) -> ModelInfo | None:
    """Describe a model: context window, max output, tool support, thinking.

    Called by :meth:`Client.resolve` after :func:`modelplug_resolve`. The answer fills
    only what the route's own info leaves unknown; the user's settings always win.

    :param route: the route as the provider plugin built it.
    :param settings: the merged settings.
    :return: what this catalog knows about the model, or None when it knows nothing.

    .. versionadded:: 0.1
    """


@hookspec
def modelplug_providers(settings: Settings) -> list[Provider]:  # type: ignore[empty-body]
    """Declare the provider names this plugin serves and the type of each.

    Called by :meth:`Client.resolve` to decide a provider name's type, when listing
    providers, and when a spec names an unknown provider (so the error can say which
    are installed). Every implementation is called.

    The rule when two plugins declare one name (``ollama`` by both the native Ollama
    plugin and openai-compat's preset): the type of the user's own
    ``[providers.NAME]`` wins; else a ``native=True`` declaration beats a generic one;
    else the first plugin by name. ``modelplug resolve`` shows which plugin serves.

    .. versionadded:: 0.1
    .. versionchanged:: 1.0 returns :class:`~modelplug.contract.routes.Provider` records, not
       names.

    :param settings: the merged settings (user-defined providers live there).
    :return: one Provider per name, e.g. ``[Provider(name="ollama",
        type="openai-compatible")]``; the user's providers of your types included.
    """


@hookspec(firstresult=True)
def modelplug_probe(route: Route, client: CallContext) -> Awaitable[ModelInfo] | None:
    """Ask a server what it actually serves: the context window it loaded, tool support.

    Called by :meth:`Client.aprobe` and ``modelplug resolve --probe``. Core keeps the
    answer for a day (:mod:`modelplug.client.probe_cache`) and lays it over the route's info on
    every later resolve; a note of ``modelplug_resolve`` that asks the user to run
    ``modelplug resolve --probe`` is left out once a probe gave the context window.

    :param route: the route to probe.
    :param client: the calling client as a CallContext (``settings``, ``async_http``).
    :return: an awaitable of the ModelInfo the server reports, or None when this
        plugin cannot probe ``route`` (decide by ``route.endpoint.type`` and, for a
        generic type, ``route.endpoint.server``). A plain ``def``: an ``async def`` is
        refused when the plugin registers.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def modelplug_list_models(route: Route, client: CallContext) -> Awaitable[list[str]] | None:
    """Ask the server behind a provider which models it serves now.

    Called by :meth:`Client.alist_models`: ``modelplug models`` lists what a local
    server (or one of the user's own providers) actually serves instead of an example,
    and the gateway's ``GET /v1/models`` offers it. Core bounds the wait and says when
    the server did not answer.

    :param route: a route of the provider to ask; only its endpoint (and the provider's
        key and headers) matter, its model is any.
    :param client: the calling client as a CallContext (``settings``, ``async_http``).
    :return: an awaitable of the model ids the server lists (without the provider name,
        as ``provider/<id>`` takes them), or None when this plugin cannot ask the route's
        server (decide by ``route.endpoint.type``). A failure to reach it raises the
        plugin's classified error. A plain ``def``: an ``async def`` is refused when the
        plugin registers.

    .. versionadded:: 1.1
    """


@hookspec
def modelplug_cli_commands(
    subparsers: argparse._SubParsersAction[Any], client: CallContext
) -> None:
    """Add subcommands to the ``modelplug`` command.

    Called once when the CLI builds its parser. Add a parser with
    ``subparsers.add_parser(name, help=...)`` and ``set_defaults(handler=fn)``, where
    ``fn(args, client) -> int`` returns the exit code.

    :param subparsers: the CLI's subparsers action.
    :param client: the Client the CLI runs with (the whole Client: a command runs calls;
        typed as the CallContext, whose ``settings`` is what most commands read).
    :return: None.

    .. versionadded:: 0.1
    """


@hookspec
def modelplug_describe_route(route: Route, client: CallContext) -> Awaitable[dict[str, Any]] | None:
    """Say what this plugin applies to a call on a route, as things stand now.

    Called by ``modelplug resolve`` (its text and its ``--json``) once the route is
    resolved, so a user sees what a policy would do with a call there: a fallback chain
    and what in it is cooling down, the budgets and rate limits that count the call and
    how much of each is used. Every implementation is called.

    :param route: the resolved route.
    :param client: the calling client as a CallContext (its ``settings``, where the
        policy's stores are chosen).
    :return: None when nothing of this plugin applies to the route; else an awaitable
        (a policy's stores may be across the network) of one section,
        ``{"section": "fallback", "lines": ["chain: a/m -> b/m", ...], ...}``:
        ``section`` names it (its key in the JSON), ``lines`` are what the text output
        prints under that name, every other key is the same facts as JSON data. A
        plain ``def``, like :func:`modelplug_probe`; never a key or other secret.

    .. versionadded:: 1.1
    """


@hookspec(firstresult=True)
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Awaitable[Embeddings] | None:
    """Embed texts on a route this plugin serves.

    Called by :meth:`Client.aembed` (and :meth:`Client.embed`) once per call, after
    :func:`modelplug_resolve`; core has checked the inputs (a non-empty list of
    non-empty strings). Policies are ``wrapper=True`` implementations of this same
    hook, as for :func:`modelplug_stream`: they receive the provider's awaitable from
    ``yield`` and return one that wraps it (reserve before, settle after, retry a
    failure); one that re-sends calls ``client.open_embed(route, request,
    exclude=[...])`` with the policies of its kind.

    :param route: the resolved route (no key in it; read it at send time).
    :param request: the inputs in order, ``dimensions`` (None: the model's own size)
        and ``extra`` (provider fields the plugin documents; refuse unknown ones with a
        RequestError naming them).
    :param client: the calling client as a CallContext (``settings``, ``async_http``).
    :return: None when this plugin does not embed ``route.endpoint.type``; else an
        awaitable of :class:`~modelplug.Embeddings` with one vector per input, in the
        inputs' order, and ``usage.input`` as the server counted it (estimated, with
        ``reported=False``, when it says nothing). Split a long list into batches of
        the provider's limit (``modelplug_kit.embed_batches`` and
        ``gather_batches``). Raise classified errors as from a stream; a plain ``def``,
        like :func:`modelplug_probe`.

    .. versionadded:: 1.1
    """


@hookspec(firstresult=True)
def modelplug_transcribe(
    route: Route, request: TranscribeRequest, client: CallContext
) -> Awaitable[Transcript] | None:
    """Turn speech into text on a route this plugin serves.

    Called by :meth:`Client.atranscribe` (and :meth:`Client.transcribe`, ``modelplug
    transcribe`` and the gateway's ``POST /v1/audio/transcriptions``) once per call,
    after :func:`modelplug_resolve`; core has checked the request (audio bytes not
    empty, a file name). Policies may wrap it (``wrapper=True``) as they wrap
    :func:`modelplug_embed`.

    :param route: the resolved route (no key in it; read it at send time).
    :param request: the audio's bytes and file name (its extension tells the container:
        send it as the multipart file's name, or map it to a MIME type with
        ``modelplug.audio_mime_type``), ``language`` (ISO-639-1) and ``prompt`` when
        the caller gave them, ``temperature``, and ``extra`` (provider fields the
        plugin documents; refuse unknown ones with a RequestError naming them).
    :param client: the calling client as a CallContext (``settings``, ``async_http``).
    :return: None when this plugin does not transcribe for ``route.endpoint.type``;
        else an awaitable of :class:`~modelplug.Transcript`: the text, the language and
        the audio's duration when the server says them, and ``usage`` as the server
        counted it (``reported=False`` when it counted no tokens). Raise classified
        errors as from a stream; a plain ``def``, like :func:`modelplug_embed`.

    .. versionadded:: 2.0
    """


@hookspec(firstresult=True)
def modelplug_count_tokens(
    route: Route, content: str | Request, client: CallContext
) -> Awaitable[int | None] | None:
    """Count tokens as the route's server will, before anything is sent.

    Called by :meth:`Client.acount_tokens` (``content`` a str) and
    :meth:`Client.acount_prompt` (``content`` a Request), so by ``modelplug count`` and by
    a thinking budget of ``"auto"``, which needs the prompt's size. Core keeps an answer
    of None (the endpoint cannot count) for the client's life and does not ask again;
    it turns a raised error into None for that one call and asks again next time.

    :param route: the resolved route (no key in it; read it at send time).
    :param content: a str is text alone, counted by the model's tokenizer with no chat
        template around it (llama.cpp's and vLLM's ``/tokenize``); a Request is the
        whole prompt the model would read, its system, messages and tools rendered as
        the server renders them (Anthropic's ``count_tokens``, Gemini's
        ``countTokens``, llama.cpp's ``/apply-template``).
    :param client: the calling client as a CallContext (``settings``, ``async_http``).
    :return: None when this plugin does not serve ``route.endpoint.type``; else an
        awaitable of the exact count, or of None when the endpoint cannot count this
        ``content`` (no count API at all, or its count path answered 404: a fact about
        the endpoint, not an error). Never an estimate: a guess is not a count. Any
        other failure (unreachable, a 5xx, a refused key) raises the plugin's classified
        error. A plain ``def``, like :func:`modelplug_probe`.

    .. versionadded:: 2.0
    """


@hookspec(firstresult=True)
def modelplug_key_budget(
    route: Route, client: CallContext, source: str | None
) -> Awaitable[KeyBudget | None] | None:
    """Read the spend, limit and reset of the key a route sends, from its endpoint.

    Called by :meth:`Client.akey_budget` (so by ``modelplug budget``). Core remembers,
    per base URL and key (a fingerprint of it, never the key), which source answered or
    that none did, and passes what it remembered as ``source``: the first call probes,
    later calls make one request.

    :param route: the resolved route (no key in it; read it at send time).
    :param client: the calling client as a CallContext (``settings``, ``async_http``).
    :param source: None to probe every budget endpoint this plugin knows for the route's
        server, in its order, each with a short bounded timeout; else the
        :class:`~modelplug.BudgetSource` that answered last time, to ask only that one.
    :return: None when this plugin does not serve ``route.endpoint.type``; else an
        awaitable of the :class:`~modelplug.KeyBudget` as the source states it (its
        ``source`` and ``currency`` named), or of None when the endpoint exposes no key
        budget (every probed path answered 404, 405 or 501, or something that is not
        a budget: a fact about the endpoint, which core remembers and answers with
        :class:`~modelplug.NoKeyBudgetError`). A transport failure, a timeout, a 5xx or
        a refused key raises the plugin's classified error, which core does not
        remember. A plain ``def``, like :func:`modelplug_probe`.

    .. versionadded:: 2.0
    """


@hookspec
def modelplug_close(client: CallContext) -> None:
    """Release what this plugin holds open for ``client`` outside an event loop: the
    connections of an SQLite store it chose for the client, a file.

    Called by :meth:`Client.close` and :meth:`Client.aclose` (so by ``with`` and
    ``async with`` too, and at interpreter exit for a Client left open), after the HTTP
    clients of :meth:`Client.async_http` are closed: what lives on a loop belongs there,
    and is closed with its loop. Every implementation is called, perhaps more than once
    for one client, which may make calls again afterwards: closing must be harmless to
    repeat, and what it closed is opened again on its next use. A store that other
    clients of the process share may be closed too, on that rule. A plain ``def``.

    :param client: the client being closed, as a CallContext (a store chosen for it is
        found by its ``settings``).
    :return: None.

    .. versionadded:: 1.1
    """
