"""Header injection in the model field goes nowhere: the model is a spec, checked before
anything reads it. Line breaks, header-like text, NUL, other control characters and
very long values get a clear 400 in the caller's shape (the official SDKs raise their
BadRequestError); a value that passes the check but names nothing is a 404. No response
header carries the text and the request log line does not either."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import anthropic
import httpx2
import openai
import pytest

HELLO = [{"role": "user", "content": "hello"}]
MARK = "x-injected"
BAD = [
    f"echo\r\n{MARK}: yes",
    f"echo\n{MARK}: yes",
    f"echo\r{MARK}: yes",
    f"{MARK}: yes",
    f"echo\x00{MARK}",
    f"echo\u2028{MARK}",  # a Unicode line separator
    f"echo\x85{MARK}",  # NEL
    f"\x1b[31m{MARK}",
    "echo\t" + MARK,
    MARK * 1000,  # 10,000 characters
    "",
    " echo",
]


def bodies(model: str) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "openai": ("/v1/chat/completions", {"model": model, "messages": HELLO}),
        "anthropic": ("/v1/messages", {"model": model, "max_tokens": 10, "messages": HELLO}),
        "embeddings": ("/v1/embeddings", {"model": model, "input": "hi"}),
    }


def assert_in_shape(shape: str, answer: httpx2.Response) -> str:
    body = answer.json()
    if shape == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
        return str(body["error"]["message"])
    assert body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


def assert_clean(answer: httpx2.Response, *, marks: tuple[str, ...] = (MARK,)) -> None:
    assert "x-modelplug-route" not in answer.headers
    for name, value in answer.headers.items():
        for mark in marks:
            assert mark not in name and mark not in value, (name, value)


@pytest.fixture
def request_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="modelplug.gateway.requests")
    return caplog


def log_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "modelplug.gateway.requests"]


@pytest.mark.parametrize("model", BAD, ids=lambda m: repr(m)[:24])
def test_a_model_that_cannot_be_a_spec_is_a_400_in_each_shape(
    model: str, make_gateway: Any, serve: Any, request_log: pytest.LogCaptureFixture
) -> None:
    with serve(make_gateway()) as url:
        answers = {
            shape: httpx2.post(url + path, json=body)
            for shape, (path, body) in bodies(model).items()
        }
    for shape, answer in answers.items():
        assert answer.status_code == 400, (shape, answer.text)
        message = assert_in_shape(shape, answer)
        assert "model" in message and MARK not in message
        assert_clean(answer)
    lines = log_lines(request_log)
    assert len(lines) == 3
    for line in lines:
        record = json.loads(line)  # one line of JSON, nothing raw in it
        assert record["status"] == 400 and record["route"] is None
        assert MARK not in line and "\r" not in line and "\n" not in line


def test_header_like_text_that_passes_the_check_names_nothing_404(
    make_gateway: Any, serve: Any, request_log: pytest.LogCaptureFixture
) -> None:
    model = f"echo:{MARK}:yes"
    with serve(make_gateway()) as url:
        answer = httpx2.post(url + "/v1/chat/completions", json={"model": model, "messages": HELLO})
        fine = httpx2.post(url + "/v1/chat/completions", json={"model": "echo", "messages": HELLO})
    assert answer.status_code == 404 and answer.json()["error"]["message"]
    assert_clean(answer)
    assert fine.status_code == 200 and fine.headers["x-modelplug-route"] == "echo/echo"
    assert all(MARK not in line for line in log_lines(request_log))


def test_raw_line_breaks_inside_the_json_string_are_refused_as_json(
    make_gateway: Any, serve: Any
) -> None:
    body = b'{"model": "echo\r\nx-injected: yes", "messages": [{"role": "user", "content": "hi"}]}'
    with serve(make_gateway()) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
                b"content-type: application/json\r\ncontent-length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert b"injected" not in head
    assert b"not valid JSON" in rest


def test_the_sdks_raise_bad_request_for_an_injected_model(make_gateway: Any, serve: Any) -> None:
    model = f"echo\r\n{MARK}: yes\r\n\r\n"
    with serve(make_gateway()) as url:
        oa = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.BadRequestError) as caught_openai:
            oa.chat.completions.create(model=model, messages=HELLO)  # type: ignore[arg-type]
        an = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
        with pytest.raises(anthropic.BadRequestError) as caught_anthropic:
            an.messages.create(model=model, max_tokens=10, messages=HELLO)  # type: ignore[arg-type]
    for caught in (caught_openai.value, caught_anthropic.value):
        assert caught.status_code == 400 and "model:" in caught.message
        assert all(MARK not in v for v in caught.response.headers.values())
        assert "x-modelplug-route" not in caught.response.headers
