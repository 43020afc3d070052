"""A body with a huge number of messages or tool definitions is refused by its size
(413 in the caller's shape) before it is parsed, and before it has arrived whole when it
comes in chunks with no content-length."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx2
import pytest

LIMIT = 16 * 1024
TOOL = {
    "type": "function",
    "function": {"name": "lookup", "description": "d" * 40, "parameters": {"type": "object"}},
}


class CountingShape:
    """A shape that counts the bodies it was asked to parse."""

    def __init__(self, shape: Any) -> None:
        self._shape = shape
        self.parsed = 0

    def parse(self, body: dict[str, Any]) -> Any:
        self.parsed += 1
        return self._shape.parse(body)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shape, name)


def counting(app: Any) -> dict[str, CountingShape]:
    app.shapes = {name: CountingShape(shape) for name, shape in app.shapes.items()}
    return app.shapes  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("path", "shape", "body"),
    [
        (
            "/v1/chat/completions",
            "openai",
            {"model": "echo", "messages": [{"role": "user", "content": "hi"}] * 5000},
        ),
        (
            "/v1/messages",
            "anthropic",
            {
                "model": "echo",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [
                    {"name": f"t{i}", "input_schema": {"type": "object"}} for i in range(2000)
                ],
            },
        ),
    ],
    ids=["many-messages", "many-tools"],
)
def test_a_huge_body_is_refused_by_size_and_never_parsed(
    path: str, shape: str, body: dict[str, Any], make_gateway: Any, serve: Any
) -> None:
    app = make_gateway(max_request_bytes=LIMIT)
    shapes = counting(app)
    with serve(app) as url:
        answer = httpx2.post(url + path, json=body)
        fine = httpx2.post(
            url + path,
            json={
                "model": "echo",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
    assert answer.status_code == 413
    error = answer.json()["error"]
    assert error["type"] == "request_too_large" and "max_request_bytes" in error["message"]
    assert shapes[shape].parsed == 1 and fine.status_code == 200  # only the small one


def test_a_chunked_body_is_cut_off_once_it_passes_the_limit(make_gateway: Any, serve: Any) -> None:
    app = make_gateway(max_request_bytes=LIMIT)
    shapes = counting(app)
    # The start of a body with thousands of tool definitions; the rest never comes.
    head = b'{"model": "echo", "messages": [{"role": "user", "content": "hi"}], "tools": ['
    part = b",".join(json.dumps(TOOL).encode() for _ in range(40)) + b","
    with serve(app) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                b"content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            sent = 0
            for chunk in [head] + [part] * ((2 * LIMIT) // len(part) + 1):
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                sent += len(chunk)
            answer = sock.recv(65536)
    assert sent > LIMIT  # and no terminating chunk: the body was never sent whole
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"request_too_large" in answer
    assert shapes["openai"].parsed == 0
