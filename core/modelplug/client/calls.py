"""Running one call: the request checked, the provider's stream guarded, the Response
finished (answering model, cost) and failures turned into ModelError.

Apart from client.py because this is where the pydantic types are needed: a Client that
is made and resolves a route, without calling a model, never imports them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from modelplug.client.cut_calls import truncated_tool_calls
from modelplug.client.repetition_stop import StreamWatch, repetition_notice, stopped_response
from modelplug.client.splice import Splice, SpliceReader
from modelplug.contract.errors import (
    ErrorClass,
    ModelError,
    ModelplugError,
    RequestError,
    describe_error,
)
from modelplug.contract.secrets import clean_exception, redact, redact_data
from modelplug.contract.types import (
    Done,
    Event,
    Message,
    Notice,
    Repetition,
    Request,
    RequestLike,
    Response,
    TextDelta,
    ThinkingDelta,
)
from modelplug.host.http_options import OpenStreams, http_options, pool_notice

if TYPE_CHECKING:
    from modelplug.client.observers import Observers
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route

#: What ``on_event`` is: called with every event of a call as it arrives.
EventCallback = Callable[["Event"], None]

__all__ = ["EventCallback", "clean_error", "coerce_request", "dispatch", "guarded_stream"]

log = logging.getLogger("modelplug")
# Notice kinds complete() without a callback logs at INFO, not WARNING: ``route`` says
# which deployment of a model group answers (modelplug-router), on every call.
INFO_NOTICES = frozenset({"route"})
# The Client.async_http key of each loop's open-stream count.
OPEN_STREAMS = "modelplug.open-streams"


def coerce_request(
    request: RequestLike | None,
    fields: Mapping[str, Any],
    *,
    client: ClientSurface | None = None,
    spec: str | Route | None = None,
) -> Request:
    """A Request from whatever the caller gave; RequestError names every problem.

    ``messages=[...]`` stands for the request when no other is given (LiteLLM's and the
    OpenAI SDK's habit). Another client's argument (``model=``, ``api_key=``...) is
    refused with what to write instead, naming what ``client`` knows of ``spec`` (its
    key variable, its plugin's settings, the user's settings file).
    """
    unknown = [name for name in fields if name not in Request.model_fields]
    if unknown:
        from modelplug.client.call_habits import misplaced_arguments

        hints = misplaced_arguments(unknown, client, spec)
        if hints is not None:
            raise RequestError(f"invalid request: {hints}")
    if "messages" in fields and not isinstance(request, (Mapping, Request)):
        if request is not None:
            raise RequestError(
                "invalid request: the conversation is given twice, as the second argument "
                "and as messages=; pass it once"
            )
        request, fields = (
            {"messages": fields["messages"]},
            {name: value for name, value in fields.items() if name != "messages"},
        )
    try:
        from modelplug.client.conversation import as_request

        return as_request(request if request is not None else "", **fields)
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise RequestError(f"invalid request: {problems}") from None
    except (TypeError, ValueError) as exc:
        raise RequestError(f"invalid request: {exc}") from None


def _problem(error: Any) -> str:
    """One validation error as ``where: what``; an unknown keyword lists the fields."""
    where = ".".join(str(p) for p in error["loc"]) or "request"
    if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
        from modelplug.client.call_habits import not_a_field

        return not_a_field(where, list(Request.model_fields))
    return f"{where}: {error['msg']}"


async def guarded_stream(
    client: ClientSurface,
    spec: str | Route | None,
    request: RequestLike | None,
    fields: Mapping[str, Any],
    observers: Observers | None = None,
) -> AsyncIterator[Event]:
    """:meth:`Client.astream`'s body: deltas, notices, then exactly one priced Done.

    ``observers`` hear each retry notice and the finished call's usage (see
    :mod:`modelplug.client.observers`). A Done whose tool call the output limit cut is
    raised as a TruncatedToolCallError instead (see :mod:`modelplug.client.cut_calls`).
    """
    req = coerce_request(request, fields, client=client, spec=spec)
    # reasoning_budget "auto": thinking sized from the window before anything is sent.
    sized: Notice | None = None
    if req.reasoning_budget or (req.thinking and client.settings.reasoning_budget):
        from modelplug.client.auto_budget import auto_budget

        req, sized = await auto_budget(client, client.route_for(spec), req)
    if req.output_schema is not None:
        from modelplug.client.structured import check_schema, structured_stream

        check_schema(req.output_schema)
        route = client.route_for(spec)
        refuse_overlong_prompt(route, req)
        stream = structured_stream(client, route, req)
    else:
        route = client.route_for(spec)
        refuse_overlong_prompt(route, req)
        stream = client.open_stream(route, req)
    # Streams open on this client and loop: at [http] max_connections, say so first
    # rather than wait for a connection in silence (see modelplug.host.http_options).
    streams = client.async_http(
        OPEN_STREAMS, lambda: OpenStreams(http_options(client.settings).max_connections)
    )
    notice = pool_notice(streams.count, streams.limit)
    # Tools to a model known not to call them: said before the call, which still goes.
    unsupported = client.tools_unsupported(route, req) if req.tools else None
    # The repetition guard: each channel is scanned once ``scan_every`` characters
    # arrived on it, so a delta costs one addition and one comparison.
    watch = StreamWatch.of(client, route, req)
    scan_every = watch.scan_every
    unscanned = unthought = 0
    tripped: Repetition | None = None
    streams.count += 1
    # The guard lives inline (not in a nested generator): one async-generator layer
    # less per event on the hot path. It keeps what was shown (for a partial
    # Response), prices the Done, redacts notices and turns failures into ModelError.
    # The policies hand it the provider's stream once they have made their decisions
    # (see modelplug.client.splice), so on the hot path it reads that stream itself.
    text: list[str] = []
    thought: list[str] = []
    done = False
    # A failure is raised after the except blocks, not inside them: raised there it
    # would chain the raw exception being handled as its __context__.
    failure: ModelplugError | None = None
    reader = SpliceReader(stream)
    try:
        if notice is not None:
            yield notice
        if unsupported is not None:
            yield unsupported
        if sized is not None:
            yield sized
        while True:
            finished: list[Event] | None = None
            error: Exception | None = None
            try:
                async for event in reader.source:
                    kind = type(event)
                    if kind is TextDelta:
                        # Read once: an attribute of a pydantic model is a slow lookup.
                        piece = event.text
                        text.append(piece)
                        unscanned += len(piece)
                        if unscanned >= scan_every:
                            unscanned = 0
                            tripped = watch.scan("content", text)
                            if tripped is not None:
                                yield event
                                break
                    elif kind is Done:
                        event, said = watch.done(event, req)
                        finished = await reader.done(event)
                        if said is not None:  # the guard's tool kind
                            finished.insert(0, said)
                        break
                    elif kind is Splice:
                        reader.take(event)
                        break
                    elif kind is ThinkingDelta:
                        piece = event.text
                        thought.append(piece)
                        unthought += len(piece)
                        if unthought >= scan_every:
                            unthought = 0
                            tripped = watch.scan("reasoning", thought)
                            if tripped is not None:
                                yield event
                                break
                    elif kind is Notice:
                        event = _redacted(event)
                        if observers is not None:
                            await observers.notice(event)
                    yield event
                else:
                    break  # ended without a Done: reported below
                if tripped is not None:
                    # A loop: close the provider's stream now (no more tokens made),
                    # and end with what it showed, the copies trimmed.
                    stopped = stopped_response(route, req, "".join(text), "".join(thought), tripped)
                    finished = [
                        repetition_notice(tripped),
                        *await reader.cut(Done(response=stopped)),
                    ]
            except Exception as exc:
                if not reader.finishers:
                    raise
                finished, error = await reader.failed(exc)
            if error is not None:
                for event in finished or ():
                    event = _shown(event, text, thought)
                    if observers is not None and type(event) is Notice:
                        await observers.notice(event)
                    yield event
                raise error
            if finished is not None:
                # A policy's last words (a policy that swallowed a failure may end
                # with a Done of its own).
                for event in finished:
                    if type(event) is Done:
                        response = _finish(client, route, event.response)
                        if observers is not None:
                            await observers.finished(response)
                        cut = truncated_tool_calls(route, req, response)
                        if cut is not None:
                            raise cut
                        yield Done(response=response)
                        done = True
                        break
                    event = _shown(event, text, thought)
                    if observers is not None and type(event) is Notice:
                        await observers.notice(event)
                    yield event
                break
    except ModelError as exc:
        if exc.partial is None:
            # Named for the model that failed (a fallback's), not the one asked.
            exc.partial = _partial(exc.route or route, text, thought)
        failure = exc
    except (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt):
        raise
    except ModelplugError as exc:
        # A missing key, a bad setting, an exhausted script: not a model failure.
        failure = exc
    except Exception as exc:
        error_class = client.classify(exc, route)
        partial = getattr(exc, "partial", None)
        if isinstance(partial, Message):
            partial = Response(message=partial, stop_reason="other", model=route.name)
        if not isinstance(partial, Response):
            partial = _partial(route, text, thought)
        message = describe_error(exc, error_class)
        failure = ModelError(message, error_class=error_class, route=route, partial=partial)
        failure.__cause__ = exc
        failure.__suppress_context__ = True
    finally:
        streams.count -= 1
        # Close the provider's stream now, not at garbage collection: an abort must
        # reach it while its HTTP client is still open (to cancel a batch, say).
        await reader.aclose()
        if not done:
            await _let_closings_run()
    if failure is not None:
        raise clean_error(failure)
    if not done:
        raise ModelError(
            f"the {route.provider} plugin ended its stream without a Done event",
            error_class=ErrorClass(kind="other", reason="stream ended early"),
            route=route,
            partial=_partial(route, text, thought),
        )


# Who may give a context window that a prompt is refused by before it is sent: the
# user's settings and the server itself. A plugin's default is a guess, and a catalog's
# figure may be older than the model.
WINDOW_SOURCES = {
    "settings": "as your settings say",
    "probe": "as a probe of the server found it",
}


def refuse_overlong_prompt(route: Route, request: Request) -> None:
    """Raise a context_overflow ModelError, before anything is sent, for a prompt surely
    longer than the route's context window, when that window is known (see
    :data:`WINDOW_SOURCES`); otherwise let the call go and the server judge."""
    info = route.info
    window = info.context_window
    said = WINDOW_SOURCES.get(info.context_window_source or "")
    if window is None or said is None:
        return
    from modelplug.contract.estimate import CHARS_PER_TOKEN, estimate_tokens, fewest_prompt_tokens

    found = fewest_prompt_tokens(request, window)
    if found is None:
        return
    words, characters = found
    answer = f"the answer's max_tokens ({request.max_tokens:,})" if request.max_tokens else ""
    again = (
        f" (`modelplug resolve --probe {route.name}` asks it again)"
        if info.context_window_source == "probe"
        else ""
    )
    raise ModelError(
        f"the prompt is longer than {route.name}'s context window of {window:,} tokens "
        f"({said}{again}), so it was not sent: at least {words:,} tokens (one per word; "
        f"about {estimate_tokens(characters):,} at {CHARS_PER_TOKEN} characters a token). "
        f"About {window * CHARS_PER_TOKEN:,} characters fit, less "
        f"{answer or 'what the answer needs'}. Shorten or compact the conversation, or "
        "load the model with a larger window (e.g. llama-server -c, "
        f'OLLAMA_CONTEXT_LENGTH) and set context_window under [models."{route.name}"] '
        "to match",
        error_class=ErrorClass(
            kind="context_overflow", reason="the prompt is longer than the context window"
        ),
        route=route,
    )


async def _let_closings_run() -> None:
    """Give the loop the two turns that finish what a stream cut short dropped.

    An async generator dropped unfinished (httpx2 leaves one of httpcore's so, when an
    answer is closed mid-body) is closed by asyncio as a task: queued when the generator
    is collected, created on the next turn, run on the one after. Run here, it ends
    within this call; left queued, it runs whenever the loop next runs, which for the
    sync API's private loop may be while the interpreter is torn down (where it fails,
    and Python prints "Task exception was never retrieved").
    """
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def _redacted(notice: Notice) -> Notice:
    """``notice`` with every secret masked: itself when it held none (a notice comes on
    every call of a model group: no copy made for nothing)."""
    message, details = redact(notice.message), redact_data(notice.details)
    if message is notice.message and details is notice.details:
        return notice
    return notice.model_copy(update={"message": message, "details": details})


def _shown(event: Event, text: list[str], thought: list[str]) -> Event:
    """An event a policy yielded at the end of a spliced stream, as the hot loop would
    have shown it."""
    if isinstance(event, TextDelta):
        text.append(event.text)
    elif isinstance(event, ThinkingDelta):
        thought.append(event.text)
    elif isinstance(event, Notice):
        return _redacted(event)
    return event


def clean_error(error: ModelplugError) -> ModelplugError:
    """``error`` holding no secret anywhere a caller may look: its chained causes (see
    :func:`modelplug.contract.secrets.clean_exception`), and the attributes a plugin's error keeps
    (a server's headers and body, the partial Response's metadata, the reason)."""
    clean_exception(error)
    for name, value in list(vars(error).items()):
        if isinstance(value, Response):
            cleaned: Any = _clean_response(value)
        elif isinstance(value, ErrorClass):
            reason = redact(value.reason)
            cleaned = value if reason == value.reason else dataclasses.replace(value, reason=reason)
        elif isinstance(value, Mapping) and not isinstance(value, dict):
            cleaned = redact_data(dict(value))
        else:
            cleaned = redact_data(value)
        if cleaned is not value:
            setattr(error, name, cleaned)
    return error


def _clean_response(response: Response) -> Response:
    """The Response with nothing secret in its metadata (a key a server echoed in an
    unknown field or a header a plugin kept)."""
    metadata = redact_data(response.metadata)
    if metadata is response.metadata:
        return response
    return response.model_copy(update={"metadata": metadata})


def _finish(client: ClientSurface, route: Route, response: Response) -> Response:
    answered = response.model or route.name
    updates: dict[str, Any] = {"model": answered}
    if response.message.model is None:
        updates["message"] = response.message.model_copy(update={"model": answered})
    metadata = redact_data(response.metadata)
    if metadata is not response.metadata:
        updates["metadata"] = metadata
    if response.cost is None:
        priced = route if answered == route.name else _route_named(client, answered, route)
        cost = client.price(priced, response.usage, response.price_factor)
        updates["cost"] = cost if cost is not None else response.server_cost
    return response.model_copy(update=updates)


def _route_named(client: ClientSurface, name: str, fallback: Route) -> Route:
    try:
        return client.resolve(name)
    except ModelplugError:
        return fallback


def _partial(route: Route, text: list[str], thought: list[str]) -> Response | None:
    """What the stream showed before it failed, or None when it showed nothing."""
    if not text and not thought:
        return None
    return Response.partial(route.name, "".join(text), "".join(thought))


def dispatch(event: Event, on_event: EventCallback | None) -> Response | None:
    """One event of complete()/acomplete(): the Response of a Done; any other event to
    ``on_event``, or a notice to the log when there is no callback."""
    if isinstance(event, Done):
        return event.response
    if on_event is not None:
        on_event(event)
    elif isinstance(event, Notice):
        # Which route answers a call (a model group's pick) is news on every call, not
        # a warning: kept for a log that asks for INFO.
        level = logging.INFO if event.kind in INFO_NOTICES else logging.WARNING
        log.log(level, "%s", event.message)
    return None
