"""Refusing a caller on its headers alone before the request becomes an ASGI task: the
gateway's own uvicorn protocol asks the app (:meth:`Gateway.refuse_early`) as soon as a
request's headers are parsed, and writes the refusal itself.

Under a flood of made-up keys (issue 27: 1,000 a second must not slow valid calls by
more than a tenth) each refusal went through uvicorn's whole request cycle (the scope,
an asyncio Event, a task, the app's frame, two ASGI sends checking every header) to
answer a fixed 401: about 55 us of CPU per wrong key, twice what a bare relay spends,
and sixteen refusals arriving together held the event loop for most of a millisecond.
Here the same answer, byte for byte (the status line, uvicorn's own default headers,
the app's headers and body), costs one header scan, the key's check, the metrics, the
log line and one write.

Only what the app says is refused goes this way, and only when no earlier request on
the connection is still being answered (pipelined requests keep their order); anything
else (a valid key, another path, a request the app does not recognise) goes on to the
app as usual. With h11 instead of httptools, or another ASGI server, the app refuses
the same callers itself.
"""

from __future__ import annotations

import http
from typing import Any

__all__ = ["EarlyRefusal", "early_refuser"]

_STATUS_LINES: dict[int, bytes] = {}


def status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        try:
            phrase = http.HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        line = _STATUS_LINES[status] = f"HTTP/1.1 {status} {phrase}\r\n".encode()
    return line


def early_refuser(app: Any) -> Any:
    """The app's ``refuse_early`` under the middleware uvicorn wraps it in (each keeps
    the app it wraps as ``.app``), or None when the app has none."""
    for _ in range(16):
        refuse = getattr(app, "refuse_early", None)
        if refuse is not None:
            return refuse
        app = getattr(app, "app", None)
        if app is None:
            return None
    return None


class _Answered:
    """What the protocol keeps as its current request once the refusal is written: an
    answered request, whose body (if the caller sends one) is read and dropped."""

    __slots__ = ("keep_alive",)

    response_complete = True
    disconnected = False

    def __init__(self, keep_alive: bool) -> None:
        self.keep_alive = keep_alive

    @property
    def message_event(self) -> _Answered:
        return self

    def set(self) -> None:  # the event uvicorn sets on a disconnect: nobody waits on it
        return None


class EarlyRefusal:
    """The part of the gateway's uvicorn protocol (httptools) that refuses early. Mixed
    in before uvicorn's protocol class; ``_refuse`` is found once per connection."""

    _refuse: Any = None

    def find_refuser(self) -> None:
        self._refuse = early_refuser(getattr(self, "app", None))

    def on_headers_complete(self) -> None:
        refuse = self._refuse
        this: Any = self
        if refuse is not None and (this.cycle is None or this.cycle.response_complete):
            parser = this.parser
            if not parser.should_upgrade():
                extensions: dict[str, Any] = {}
                answer = refuse(parser.get_method(), this.url, this.headers, extensions)
                if answer is not None:
                    self._write_refusal(*answer)
                    return
                if extensions:
                    this.scope["extensions"] = extensions
        super().on_headers_complete()  # type: ignore[misc]

    def _write_refusal(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        this: Any = self
        parser = this.parser
        keep_alive = parser.get_http_version() != "1.0" and parser.should_keep_alive()
        content = [status_line(status)]
        for name, value in (*this.server_state.default_headers, *headers):
            content += (name, b": ", value, b"\r\n")
        if not keep_alive:
            content.append(b"connection: close\r\n")
        content += (b"\r\n", body)
        this.transport.write(b"".join(content))
        this.cycle = _Answered(keep_alive)
        this.on_response_complete()
        if not keep_alive:
            this.transport.close()
