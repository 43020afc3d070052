"""The gateway's ASGI app: route, read the body (bounded in size and time), check it,
admit the caller, run the call through the Client, and write the answer back in the
caller's shape as it arrives.

A plain ASGI callable rather than a framework: the per-call path is a few dict lookups
and awaits, since the gateway's whole budget is about a millisecond a call."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

# At the top, not in the functions: an import statement in a function that runs on every
# call costs a lookup through the import system each time (modelplug.plugin is loaded
# with the plugin anyway).
from modelplug import (
    Done,
    ModelError,
    ModelplugError,
    Notice,
    OutputTruncatedError,
    TextDelta,
    TruncatedToolCallError,
)

from .asgi import Disconnected, Receive, Scope, Send
from .auth import OpenGate, Refusal, Ticket
from .call_timings import CallClock
from .errors import cut_answer, failure_for, kind_for_status
from .long_lived import freeze_once
from .metrics import Metrics
from .model_spec import check_model
from .ready_frames import write_together
from .replay_target import mark_replay_target
from .request_log import log_request
from .route_cache import RouteCache
from .shapes.base import Parsed, Shape, ShapeError
from .tracing import request_tracer
from .upstream_fit import fit_to_route

if TYPE_CHECKING:
    from modelplug import Client, Event, Request, Response, Route

    from .auth import Gate
    from .settings import GatewaySettings

__all__ = ["Gateway", "create_app"]

_JSON = [(b"content-type", b"application/json")]
_SSE = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    # nginx and its kind buffer a response unless told not to: a stream must not wait.
    (b"x-accel-buffering", b"no"),
]
_KEEPALIVE = b": keep-alive\n\n"
_ROOT = json.dumps({"name": "modelplug-gateway", "status": "ok"}).encode()
MAX_ERROR_BODIES = 256
LOGGER = logging.getLogger("modelplug.gateway")
_NO_HEADERS: dict[str, str] = {}
_HEADER_SAFE = re.compile(r"[A-Za-z0-9_.:/@+-]{1,100}")
_UNSHOWN = "(a name not shown)"
# Paths of stored responses, which the gateway does not keep.
_STORED_RESPONSES = ("/v1/responses/", "/responses/")


class Gateway:
    """The ASGI app. ``draining`` turns new calls away with 503 (set at SIGTERM).
    ``on_startup``: what the server running it asks to run at the lifespan's startup."""

    def __init__(
        self,
        client: Client,
        options: GatewaySettings,
        gate: Gate,
        shapes: dict[str, Shape] | None = None,
    ) -> None:
        self.client = client
        self.options = options
        self.gate = gate
        self.draining = False
        self.on_startup: list[Callable[[], None]] = []
        self.shapes = shapes if shapes is not None else default_shapes()
        self.allowed = frozenset(options.models) if options.models is not None else None
        self.metrics = Metrics(self.allowed)
        self._open = type(gate) is OpenGate
        # Who cannot be admitted is refused before the body is read (a gate's option).
        self._precheck: Callable[[Any, bytes], None] | None = getattr(gate, "precheck", None)
        self._errors: dict[tuple[str, int, str, str, str | None], bytes] = {}  # bodies made
        self._told: set[str] = set()  # set-up failures written to the operator's log
        # The SERVER span of each call, when modelplug-otel is on (else None: decided here).
        self._trace = request_tracer(client)
        self._routes: dict[tuple[str, str], Callable[..., Awaitable[None]]] = {
            ("POST", "/v1/chat/completions"): self._chat,
            ("POST", "/chat/completions"): self._chat,
            ("POST", "/v1/messages"): self._messages,
            ("POST", "/v1/messages/count_tokens"): self._count_tokens,
            ("POST", "/v1/responses"): self._responses,
            ("POST", "/responses"): self._responses,
            ("POST", "/v1/embeddings"): self._embeddings,
            ("POST", "/embeddings"): self._embeddings,
            ("POST", "/v1/audio/transcriptions"): self._transcriptions,
            ("POST", "/audio/transcriptions"): self._transcriptions,
            ("GET", "/key/info"): self._key_info,
            ("GET", "/v1/models"): self._models,
            ("GET", "/models"): self._models,
            ("GET", "/"): self._root,
            ("HEAD", "/"): self._root,
            # Claude Code 2.1.328 probes here (recorded in tests/recorded/).
            ("HEAD", "/api/hello"): self._root,
            ("GET", "/health"): self._health,
            ("GET", "/ready"): self._ready,
            ("GET", "/metrics"): self._metrics,
        }
        self._paths = frozenset(path for (_, path) in self._routes)

    @property
    def client(self) -> Client:
        """The Client every call runs through; setting another starts its routes anew."""
        return self._client

    @client.setter
    def client(self, client: Client) -> None:
        self._client = client
        self.routes = RouteCache(client)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            handler = self._routes.get((scope["method"], scope["path"]))
            if handler is None:
                if scope["path"].startswith(_STORED_RESPONSES) and "responses" in self.shapes:
                    await self._stored_response(scope, send)
                    return
                await self._not_routed(scope, send)
                return
            await handler(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    # ------------------------------------------------------------------ plumbing

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                for start in self.on_startup:
                    start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _not_routed(self, scope: Scope, send: Send) -> None:
        """404 (405 for a path served under another method), logged and counted with
        the method and path: which endpoints the callers' tools want is for the
        operator to see."""
        started = time.perf_counter()
        method, path = scope["method"], scope["path"]
        shape = self._shape_for(path)
        if path in self._paths:
            status = 405
            await self.send_error(send, shape, 405, f"{method} is not allowed here")
        else:
            status = 404
            await self.send_error(send, shape, 404, f"no endpoint {path}")
        took = time.perf_counter() - started
        self.metrics.unserved(method, path)
        self.metrics.request("unserved", status, took)
        log_request(
            method=method,
            path=path,
            status=status,
            key_name=None,
            route=None,
            usage=None,
            cost=None,
            latency_ms=took * 1000,
            overhead_ms=None,
        )

    async def _stored_response(self, scope: Scope, send: Send) -> None:
        """``GET /v1/responses/{id}`` (and its ``cancel``, ``input_items``, ``DELETE``):
        404 in the Responses shape, saying why, counted and logged as unserved."""
        started = time.perf_counter()
        await self.send_error(
            send,
            self.shapes["responses"],
            404,
            "the gateway keeps no responses (store is accepted and nothing is stored): "
            f"{scope['method']} {scope['path']} cannot be served; send the whole "
            "conversation in each request's input",
            "not_found_error",
        )
        took = time.perf_counter() - started
        self.metrics.unserved(scope["method"], scope["path"])
        self.metrics.request("unserved", 404, took)
        log_request(
            method=scope["method"],
            path=scope["path"],
            status=404,
            key_name=None,
            route=None,
            usage=None,
            cost=None,
            latency_ms=took * 1000,
            overhead_ms=None,
        )

    def _shape_for(self, path: str) -> Shape:
        if path.startswith("/v1/messages") and "anthropic" in self.shapes:
            return self.shapes["anthropic"]
        if path.startswith(("/v1/responses", "/responses")) and "responses" in self.shapes:
            return self.shapes["responses"]
        return self.shapes["openai"]

    async def send_json(
        self,
        send: Send,
        status: int,
        body: dict[str, Any],
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        """Answer ``body`` as JSON, with its length."""
        await self._send_encoded(send, status, json.dumps(body).encode(), headers)

    async def _send_encoded(
        self,
        send: Send,
        status: int,
        data: bytes,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        head = _json_head(data, headers)
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": data})

    async def send_error(
        self,
        send: Send,
        shape: Shape,
        status: int,
        message: str,
        kind: str | None = None,
        retry_after: float | None = None,
        extra: list[tuple[bytes, bytes]] | None = None,
        code: str | None = None,
    ) -> None:
        """Answer an error in ``shape``'s own body (``kind``: its type, else the
        status's)."""
        headers = list(extra or ())
        if retry_after is not None:
            headers.append(_retry_after(retry_after))
        if self.draining:
            headers.append((b"connection", b"close"))
        data = self._error_data(shape, status, message, kind, code)
        await self._send_encoded(send, status, data, headers)

    async def send_refusal(
        self, send: Send, shape: Shape, exc: ShapeError | Refusal | Disconnected
    ) -> tuple[int, str | None]:
        """Answer a request refused before its call (a body its shape refuses, the
        gate's no, a caller gone before its body arrived: nothing is written to it); the
        status to log and the refused key's name, when the gate knew it."""
        if isinstance(exc, Disconnected):
            return 499, None
        if isinstance(exc, Refusal):
            await self.send_error(send, shape, exc.status, exc.message, exc.kind, exc.retry_after)
            return exc.status, exc.key_name
        await self.send_error(send, shape, exc.status, exc.message, exc.kind)
        return exc.status, None

    def _error_data(
        self, shape: Shape, status: int, message: str, kind: str | None, code: str | None = None
    ) -> bytes:
        """The body of an error in ``shape``: the same refusal again and again (a wrong
        key, a flood of them) is made once."""
        kind = kind or kind_for_status(status)
        made = (shape.name, status, kind, message, code)
        data = self._errors.get(made)
        if data is None:
            if len(self._errors) >= MAX_ERROR_BODIES:
                self._errors.clear()  # messages may name what callers sent: bounded
            body = shape.error_body(status, kind, message, code)
            data = self._errors[made] = json.dumps(body).encode()
        return data

    async def read_json(self, scope: Scope, receive: Receive) -> dict[str, Any]:
        """The body as a JSON object, or ShapeError (413 before reading it whole)."""
        limit = self.options.max_request_bytes
        headers = scope["headers"]
        content_type = b""
        for name, value in headers:
            if name == b"content-length":
                if not value.isdigit():
                    raise ShapeError("content-length is not a number")
                if int(value) > limit:
                    raise _too_large(limit)
            elif name == b"content-type":
                content_type = value
        if not content_type.split(b";", 1)[0].strip().lower() == b"application/json":
            raise ShapeError(
                "the body must be JSON sent as content-type: application/json",
                status=415,
            )
        try:
            async with asyncio.timeout(self.options.body_timeout):
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise Disconnected
                body: bytes = message.get("body", b"")
                if message.get("more_body"):
                    chunks = [body]
                    size = len(body)
                    if size > limit:  # a first part already too large: no wait for more
                        raise _too_large(limit)
                    while True:
                        message = await receive()
                        if message["type"] == "http.disconnect":
                            raise Disconnected
                        part = message.get("body", b"")
                        size += len(part)
                        if size > limit:
                            raise _too_large(limit)
                        chunks.append(part)
                        if not message.get("more_body"):
                            break
                    body = b"".join(chunks)
        except TimeoutError:
            raise ShapeError(
                f"the body did not arrive within {self.options.body_timeout:g} s "
                "([gateway] body_timeout)",
                status=408,
                kind="timeout_error",
            ) from None
        if len(body) > limit:
            raise _too_large(limit)
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ShapeError(f"the body is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ShapeError("the body must be a JSON object")
        return data

    def check_served(self, model: str) -> None:
        """A 404 (ShapeError) for a model outside the gateway's ``models`` list."""
        if self.allowed is not None and model not in self.allowed:
            raise ShapeError(
                f"model {model!r} is not served here (see GET /v1/models)",
                status=404,
                kind="not_found_error",
                param="model",
            )

    def precheck(self, scope: Scope) -> None:
        """The gate's refusal of a caller on its headers alone (Refusal), when the gate
        has one: called before the body is read, so a caller who cannot be admitted
        (a made-up key under a flood of them) costs no read and no parse."""
        if self._precheck is not None:
            self._precheck(scope["headers"], scope.get("query_string", b""))

    async def admit(self, scope: Scope, model: str, request: Request | None = None) -> Ticket:
        """The gate's ticket for this call, or :class:`.auth.Refusal`."""
        if self._open:
            return await self.gate.admit(_NO_HEADERS, b"", model)  # reads none of them
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        # The request: a key's budget reserves what the call may cost at most.
        return await self.gate.admit(headers, scope.get("query_string", b""), model, request)

    # ------------------------------------------------------------------ calls

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._call(scope, receive, send, self.shapes["openai"], "chat")

    async def _messages(self, scope: Scope, receive: Receive, send: Send) -> None:
        shape = self.shapes.get("anthropic")
        if shape is None:
            await self.send_error(
                send, self.shapes["openai"], 404, "the Anthropic shape is not installed"
            )
            return
        await self._call(scope, receive, send, shape, "messages")

    async def _responses(self, scope: Scope, receive: Receive, send: Send) -> None:
        shape = self.shapes.get("responses")
        if shape is None:
            await self.send_error(
                send, self.shapes["openai"], 404, "the Responses shape is not installed"
            )
            return
        await self._call(scope, receive, send, shape, "responses")

    async def _call(
        self, scope: Scope, receive: Receive, send: Send, shape: Shape, endpoint: str
    ) -> None:
        started = time.perf_counter()
        status = 200
        ticket: Ticket | None = None
        response: Response | None = None
        before: float | None = None
        refused_key: str | None = None
        asked: str | None = None
        # The route a failed call named (a ModelError's), for the metrics' route label.
        failed = _Failed()
        clock = CallClock()
        span = self._trace(scope) if self._trace is not None else None
        try:
            if self.draining:
                status = 503
                await self.send_error(
                    send, shape, 503, "the gateway is shutting down", "overloaded_error"
                )
                return
            try:
                self.precheck(scope)  # who cannot be admitted: refused before the body
                body = await self.read_json(scope, receive)
                parsed = shape.parse(body)
                check_model(parsed.model)  # a spec, before anything reads it
                if shape.name == "anthropic":
                    parsed = mark_replay_target(parsed, self.client)
                    parsed.betas = _betas(scope["headers"])
                elif shape.name == "responses" and len(parsed.request.messages) > 1:
                    # (A single prompt sends no reasoning back: nothing to mark.)
                    parsed = mark_replay_target(parsed, self.client, parsed.own_types)
                self.check_served(parsed.model)
                asked = parsed.model
                admitting = time.perf_counter()
                ticket = await self.admit(scope, parsed.model, parsed.request)
                clock.queued = time.perf_counter() - admitting
            except (ShapeError, Refusal, Disconnected) as exc:
                status, refused_key = await self.send_refusal(send, shape, exc)
                return
            before = time.perf_counter() - started
            status = 500  # what is logged if what follows raises past its own handling
            if parsed.stream:
                status, response = await self._stream(
                    receive, send, shape, parsed, before, failed, clock
                )
            else:
                status, response = await self._complete(
                    receive, send, shape, parsed, before, failed, clock
                )
        finally:
            if span is not None:
                span.end(status)
            if ticket is not None:
                await self._settle(ticket, response)
            took = time.perf_counter() - started
            # The route that answered, or the one that failed (which /metrics names too).
            answered = response.model if response is not None and response.model else failed.route
            self.metrics.request(endpoint, status, took, self.metrics.route(asked, answered))
            log_request(
                method=scope["method"],
                path=scope["path"],
                status=status,
                key_name=ticket.key_name if ticket else refused_key,
                route=answered,
                usage=response.usage if response else None,
                cost=response.cost if response else None,
                latency_ms=took * 1000,
                overhead_ms=None if before is None else before * 1000,
            )
            if status == 200:
                freeze_once()

    async def _complete(
        self,
        receive: Receive,
        send: Send,
        shape: Shape,
        parsed: Parsed,
        before: float,
        failed: _Failed,
        clock: CallClock,
    ) -> tuple[int, Response | None]:
        watch = _Watch(receive)
        sent_to: str | None = None
        try:
            route = self.routes.get(parsed.model)
            sent_to = route.name
            request, dropped = self._fit(parsed, route)
            clock.dispatch()
            response = await self.client.acomplete(route, request, on_event=clock.see)
        except OutputTruncatedError as exc:
            # A structured answer cut at max_tokens: the answer it is, stopped for length.
            cut = cut_answer(exc)
            if cut is None:
                return await self.send_failure(send, shape, exc, clock=clock), None
            response = cut
        except TruncatedToolCallError as exc:
            # A tool call cut at max_tokens: the answer it is, stopped for length, the
            # cut call left out (the caller's SDK reads the length stop as its own).
            if exc.partial is None:  # core always sets it; without one it is the error
                failed.note(exc, sent_to)
                return await self.send_failure(send, shape, exc, failed.route, clock), None
            response = exc.partial
        except ModelError as exc:
            failed.note(exc, sent_to)
            return await self.send_failure(send, shape, exc, failed.route, clock), exc.partial
        except asyncio.CancelledError:
            if watch.gone:
                self.metrics.error("aborted")
                return 499, None
            raise
        except Exception as exc:  # a bad spec or settings: before any upstream call
            return await self.send_failure(send, shape, exc, clock=clock), None
        finally:
            watch.stop()
        answered = time.perf_counter()
        response = clock.stamped(response)
        body = shape.response(response, parsed.model, parsed)
        headers = self._answer_headers(response)
        headers.extend(clock.headers())
        if dropped:
            headers.append(_dropped_header(dropped))
        overhead = before + (time.perf_counter() - answered)
        headers.append((b"x-modelplug-overhead-ms", f"{overhead * 1000:.3f}".encode()))
        await self.send_json(send, 200, body, headers)
        self._count(response, overhead)
        return 200, response

    async def _stream(
        self,
        receive: Receive,
        send: Send,
        shape: Shape,
        parsed: Parsed,
        before: float,
        failed: _Failed,
        clock: CallClock,
    ) -> tuple[int, Response | None]:
        try:
            route = self.routes.get(parsed.model)
        except Exception as exc:  # a bad spec or settings: before any upstream call
            return await self.send_failure(send, shape, exc, clock=clock), None
        request, dropped = self._fit(parsed, route)
        clock.dispatch()
        tap = _Tap(self.client.astream(route, request), route.name, clock)
        frames = shape.stream(tap.events(), parsed.model, parsed)
        watch = _Watch(receive)
        writer: _Writer | None = None
        status = 200
        try:
            try:
                first = await anext(frames)
            except StopAsyncIteration:
                first = b""
            except ModelError as exc:
                watch.stop()
                failed.note(exc, tap.answering)
                return await self.send_failure(send, shape, exc, failed.route, clock), exc.partial
            except asyncio.CancelledError:
                if watch.gone:
                    self.metrics.error("aborted")
                    return 499, None
                raise
            except Exception as exc:
                watch.stop()
                return await self.send_failure(send, shape, exc, clock=clock), None
            headers = list(_SSE)
            # The route answering when the stream begins (after any fallback so far).
            headers.append((b"x-modelplug-route", tap.answering.encode()))
            headers.append((b"x-modelplug-overhead-ms", f"{before * 1000:.3f}".encode()))
            headers.extend(clock.headers())  # what is known before the first byte
            if dropped:  # known since the route was: before the first byte
                headers.append(_dropped_header(dropped))
            if self.draining:
                headers.append((b"connection", b"close"))
            self.metrics.open_streams += 1
            try:
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                writer = _Writer(send, self.options.keepalive_interval)
                await write_together(frames, first, writer.write)
                await send({"type": "http.response.body", "body": b""})
            except asyncio.CancelledError:
                if watch.gone:
                    status = 499
                    self.metrics.error("aborted")
                    return status, tap.response
                raise
            finally:
                self.metrics.open_streams -= 1
        finally:
            watch.stop()
            if writer is not None:
                writer.stop()
            # Closing the generators closes the upstream connection now, not at GC.
            await frames.aclose()  # type: ignore[attr-defined]
            await tap.close()
        if tap.error is not None:
            self.metrics.error(tap.error)
            failed.route = tap.route or tap.answering
        elif tap.response is not None:
            self._count(tap.response, before)
        return status, tap.response

    def _fit(self, parsed: Parsed, route: Route) -> tuple[Request, tuple[str, ...]]:
        """The request as ``route``'s upstream can take it, and the fields left out
        (:mod:`.upstream_fit`), which the operator's log hears of as a Notice."""
        request, dropped = fit_to_route(parsed, route)
        if dropped:
            notice = Notice(
                kind="dropped_fields",
                message=f"{route.name} takes no {', '.join(dropped)}: left out of the call",
                details={"route": route.name, "fields": list(dropped)},
            )
            LOGGER.info("%s", notice.message, extra={"notice": notice})
        return request, dropped

    async def _settle(self, ticket: Ticket, response: Response | None) -> None:
        if type(ticket).settle is Ticket.settle:
            return  # nothing to account: no resolve on the hot path
        route = None
        if response is not None and response.model:
            try:
                route = self.routes.get(response.model)
            except ModelplugError:
                route = None
        await ticket.settle(
            route, response.usage if response else None, response.cost if response else None
        )

    def _answer_headers(self, response: Response) -> list[tuple[bytes, bytes]]:
        headers: list[tuple[bytes, bytes]] = []
        route = response.model or response.message.model
        if route:
            headers.append((b"x-modelplug-route", route.encode()))
        if response.cost is not None and response.cost.currency == "USD":
            headers.append((b"x-modelplug-cost", str(response.cost.amount).encode()))
        return headers

    def _count(self, response: Response, overhead: float) -> None:
        usage = response.usage
        self.metrics.usage(
            usage.total_input, usage.output, response.cost.amount if response.cost else None
        )
        self.metrics.overhead.observe(overhead)

    async def send_failure(
        self,
        send: Send,
        shape: Shape,
        exc: Exception,
        route: str | None = None,
        clock: CallClock | None = None,
    ) -> int:
        """Answer a failed call in ``shape`` as :func:`.errors.failure_for` says (a
        non-modelplug exception is a bug: raised on), naming ``route`` (else the
        error's) in ``x-modelplug-route`` and, for an admitted call, where its time went
        (``clock``'s headers, as far as known); returns the status."""
        failure = failure_for(exc, shape.name)
        if failure is None:
            raise exc
        self.metrics.error(failure.kind)
        if failure.kind == "config":
            self._tell_operator(failure.message)
        extra = failure.headers()
        if route is None:
            named = getattr(exc, "route", None)
            route = named.name if named is not None else None
        if route is not None:
            extra.append((b"x-modelplug-route", route.encode()))
        if clock is not None:
            extra.extend(clock.headers())
        await self.send_error(
            send,
            shape,
            failure.status,
            failure.message,
            failure.type,
            failure.retry_after,
            extra,
            failure.code,
        )
        return failure.status

    def _tell_operator(self, message: str) -> None:
        """A failure of the gateway's own set-up, on its log once (a caller may not pass
        the message on; every call failing the same way must not flood the log)."""
        if message in self._told:
            return
        if len(self._told) >= MAX_ERROR_BODIES:
            self._told.clear()  # messages may name models callers sent: bounded
        self._told.add(message)
        LOGGER.warning("%s", message)

    async def _embeddings(self, scope: Scope, receive: Receive, send: Send) -> None:
        from .embeddings import handle

        await handle(self, scope, receive, send)

    async def _count_tokens(self, scope: Scope, receive: Receive, send: Send) -> None:
        if "anthropic" not in self.shapes:
            await self.send_error(
                send, self.shapes["openai"], 404, "the Anthropic shape is not installed"
            )
            return
        from .count_tokens import handle

        await handle(self, scope, receive, send)

    async def _transcriptions(self, scope: Scope, receive: Receive, send: Send) -> None:
        from .transcriptions import handle as transcribe

        await transcribe(self, scope, receive, send)

    # ------------------------------------------------------------------ small endpoints

    async def _key_info(self, scope: Scope, receive: Receive, send: Send) -> None:
        from .key_info import handle

        await handle(self, self.gate, scope, send)

    async def _models(self, scope: Scope, receive: Receive, send: Send) -> None:
        from .models import served_model_list

        started = time.perf_counter()
        await self.send_json(send, 200, await served_model_list(self))
        took = time.perf_counter() - started
        self.metrics.request("models", 200, took)
        log_request(
            method=scope["method"],
            path=scope["path"],
            status=200,
            key_name=None,
            route=None,
            usage=None,
            cost=None,
            latency_ms=took * 1000,
            overhead_ms=None,
        )

    async def _root(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The gateway's name, for the connectivity probes clients send before their
        first call (Claude Code's ``HEAD /``, and ``HEAD /api/hello`` since 2.1.328): no
        key asked, nothing revealed, nothing logged or counted, like /health."""
        if scope["method"] == "HEAD":
            head = _json_head(_ROOT, None)
            await send({"type": "http.response.start", "status": 200, "headers": head})
            await send({"type": "http.response.body", "body": b""})
            return
        await self._send_encoded(send, 200, _ROOT)

    async def _health(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.send_json(send, 200, {"status": "ok"})

    async def _ready(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.draining:
            await self.send_json(send, 503, {"status": "draining"})
        else:
            await self.send_json(send, 200, {"status": "ready"})

    async def _metrics(self, scope: Scope, receive: Receive, send: Send) -> None:
        data = self.metrics.render().encode()
        gate_lines = getattr(self.gate, "metrics_lines", None)  # the virtual-key gate's
        if gate_lines is not None:
            data += ("\n".join(gate_lines()) + "\n").encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/plain; version=0.0.4; charset=utf-8")],
            }
        )
        await send({"type": "http.response.body", "body": data})


class _Watch:
    """Cancels the calling task when the caller disconnects, so the upstream request
    is closed at once instead of running on for nobody."""

    __slots__ = ("_task", "gone")

    def __init__(self, receive: Receive) -> None:
        self.gone = False
        current = asyncio.current_task()
        assert current is not None
        self._task = asyncio.get_running_loop().create_task(self._watch(receive, current))

    async def _watch(self, receive: Receive, task: asyncio.Task[Any]) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.gone = True
                task.cancel()
                return

    def stop(self) -> None:
        self._task.cancel()


class _Failed:
    """The route a failed call failed on: the one its ModelError names, else the one
    it was sent to."""

    __slots__ = ("route",)

    def __init__(self) -> None:
        self.route: str | None = None

    def note(self, exc: Exception, sent_to: str | None) -> None:
        route = getattr(exc, "route", None)
        self.route = route.name if route is not None else sent_to


class _Tap:
    """Passes the Client's events on and keeps the Done's Response (for usage, cost and
    the ticket) or the error's kind, and which route is answering: the one resolved,
    or the deployment a model group picked, or the one a fallback switched to. A
    structured answer cut at max_tokens inside its JSON, and an answer cut inside a tool
    call's arguments, end as the answer they are (stopped for length, no cut call in
    it), not as an error."""

    __slots__ = ("_clock", "_events", "answering", "error", "response", "route", "texted")

    def __init__(self, events: AsyncIterator[Event], answering: str, clock: CallClock) -> None:
        self._events = events
        self._clock = clock
        self.response: Response | None = None
        self.error: str | None = None
        self.route: str | None = None
        self.answering = answering
        self.texted = False

    async def events(self) -> AsyncIterator[Event]:
        try:
            async for event in self._events:
                self._clock.see(event)
                kind = event.type
                if kind == "done":
                    stamped = self._clock.stamped(event.response)  # type: ignore[union-attr]
                    self.response = stamped
                    event = Done(response=stamped)
                elif kind == "text_delta":
                    self.texted = True
                elif kind == "notice":
                    self._switched(event)  # type: ignore[arg-type]
                yield event
        except TruncatedToolCallError as exc:
            if exc.partial is None:
                raise
            self.response = exc.partial
            yield Done(response=exc.partial)
        except ModelError as exc:
            self.error = exc.error_class.kind
            self.response = exc.partial
            self.route = exc.route.name if exc.route is not None else None
            raise
        except OutputTruncatedError as exc:
            cut = cut_answer(exc)
            if cut is None:
                raise
            if not self.texted:  # its text came as a call (tool mode): sent as text
                yield TextDelta(text=exc.raw)
            self.response = cut
            yield Done(response=cut)

    def _switched(self, notice: Notice) -> None:
        # "route": a model group's pick (modelplug-router); "fallback": a switch.
        if notice.kind == "fallback" or notice.kind == "route":
            to = notice.details.get("to")
            if isinstance(to, str) and to:
                self.answering = to

    async def close(self) -> None:
        await self._events.aclose()  # type: ignore[attr-defined]


class _Writer:
    """Writes frames; an SSE comment goes out when the stream has been quiet for the
    keep-alive interval (long thinking), so proxies do not close it as idle."""

    # A timer, not a task: a stream that is never quiet for long (most) costs one timer
    # handle, where a task sleeping beside it cost a task to create, start and cancel.
    __slots__ = ("_interval", "_last", "_loop", "_send", "_sending", "_timer")

    def __init__(self, send: Send, interval: float) -> None:
        self._send = send
        self._last = time.monotonic()
        self._interval = interval
        self._loop = asyncio.get_running_loop()
        self._sending: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(interval, self._tick)

    async def write(self, frame: bytes) -> None:
        if frame:
            self._last = time.monotonic()
            await self._send({"type": "http.response.body", "body": frame, "more_body": True})

    def _tick(self) -> None:
        quiet = time.monotonic() - self._last
        if quiet >= self._interval:
            if self._sending is None or self._sending.done():
                self._sending = self._loop.create_task(self.write(_KEEPALIVE))
            quiet = 0.0
        self._timer = self._loop.call_later(self._interval - quiet, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._sending is not None:
            self._sending.cancel()


def _json_head(data: bytes, headers: list[tuple[bytes, bytes]] | None) -> list[tuple[bytes, bytes]]:
    # With its length: the body goes out as it is, not in chunks, and the caller reads
    # one body (a refusal under a flood of wrong keys costs both sides less).
    head = [*_JSON, (b"content-length", str(len(data)).encode())]
    if headers:
        head += headers
    return head


def _betas(headers: list[tuple[bytes, bytes]]) -> tuple[str, ...]:
    """The names of the caller's ``anthropic-beta`` headers (comma-separated, any
    number of them), in order."""
    names: list[str] = []
    for name, value in headers:
        if name == b"anthropic-beta":
            names += (n.strip() for n in value.decode("latin-1").split(","))
    return tuple(n for n in names if n)


def _dropped_header(dropped: tuple[str, ...]) -> tuple[bytes, bytes]:
    # The names are the caller's (field names, item types): one that could not go in a
    # header as it is (a control character, a comma, non-ASCII) is not echoed, so
    # nobody can write a header line of their own through it.
    shown = [name if _HEADER_SAFE.fullmatch(name) else _UNSHOWN for name in dropped]
    return (b"x-modelplug-dropped", ", ".join(dict.fromkeys(shown)).encode())


def _retry_after(seconds: float) -> tuple[bytes, bytes]:
    return (b"retry-after", str(max(1, round(seconds))).encode())


def _too_large(limit: int) -> ShapeError:
    return ShapeError(
        f"the body is larger than {limit} bytes ([gateway] max_request_bytes)",
        status=413,
        kind="request_too_large",
    )


def default_shapes() -> dict[str, Shape]:
    """The OpenAI shape, and the Anthropic one when its module is present."""
    from .shapes.openai_chat import SHAPE
    from .shapes.responses import SHAPE as RESPONSES

    shapes: dict[str, Shape] = {"openai": SHAPE, "responses": RESPONSES}
    try:
        from .shapes import anthropic_messages
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.shapes.anthropic_messages":
            raise
        return shapes
    shape = getattr(anthropic_messages, "SHAPE", None)
    if shape is None:
        for value in vars(anthropic_messages).values():
            if isinstance(value, type) and getattr(value, "name", None) == "anthropic":
                shape = value()
                break
    if shape is not None:
        shapes["anthropic"] = shape
    return shapes


def create_app(
    client: Client | None = None,
    options: GatewaySettings | None = None,
    gate: Gate | None = None,
    *,
    no_auth: bool = False,
) -> Gateway:
    """The app for these settings (default: the user's file only, no project file) and
    gate (default: the operator key from ``[gateway] key_env``; ``no_auth``: open)."""
    from .settings import read_gateway

    if client is None:
        from .waits import gateway_client

        client = gateway_client(options)  # its waits bounded by [gateway] max_wait
    if options is None:
        options = read_gateway(client.settings)
    if gate is None:
        gate = choose_gate(client, options, no_auth=no_auth)
    return Gateway(client, options, gate)


def choose_gate(client: Client, options: GatewaySettings, *, no_auth: bool = False) -> Gate:
    from modelplug import ConfigError

    from .auth import OpenGate, OperatorKeyGate

    if no_auth or options.auth == "none":
        return OpenGate()
    if options.auth == "keys":
        try:
            from .key_gate import VirtualKeyGate  # type: ignore[import-not-found,unused-ignore]
        except ModuleNotFoundError:
            raise ConfigError('[gateway] auth = "keys" needs the virtual keys part') from None
        return VirtualKeyGate.from_settings(client, options)  # type: ignore[no-any-return,unused-ignore]
    key = client.settings.getenv(options.key_env)
    if not key:
        raise ConfigError(
            f"the gateway needs a key: set {options.key_env} (or [gateway] key_env), "
            "or run with --no-auth on a loopback host"
        )
    return OperatorKeyGate(key, options.key_env)
