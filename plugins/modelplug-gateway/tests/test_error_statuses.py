"""Each failure reaches the openai SDK as its own exception class, with the status the
ErrorClass maps to, Retry-After where there is one, and a body in OpenAI's shape; bad
requests are a clear 4xx each, and one never affects the next."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx2
import openai
import pytest
from modelplug import ErrorClass, ModelError
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply
from modelplug_gateway.auth import OperatorKeyGate

HELLO = [{"role": "user", "content": "hi"}]
KEY = "sk-gateway-test-5f1e0c"


def failing(kind: str, **more: Any) -> ModelError:
    return ModelError(f"upstream said no ({kind})", error_class=ErrorClass(kind=kind, **more))  # type: ignore[arg-type]


CASES = [
    (failing("bad_request"), 400, openai.BadRequestError),
    (failing("context_overflow"), 400, openai.BadRequestError),
    (failing("auth"), 401, openai.AuthenticationError),
    (failing("auth", status=403), 403, openai.PermissionDeniedError),
    (failing("not_found"), 404, openai.NotFoundError),
    (failing("rate_limit", retry_after=7.0), 429, openai.RateLimitError),
    (failing("other"), 500, openai.InternalServerError),
    (failing("unreachable"), 502, openai.InternalServerError),
    (failing("overloaded"), 503, openai.InternalServerError),
    (failing("overloaded", status=529), 529, openai.InternalServerError),
    (failing("transient", reason="timed out"), 504, openai.InternalServerError),
]


@pytest.mark.parametrize(("error", "status", "exception"), CASES)
def test_upstream_failure_becomes_its_status_and_sdk_exception(
    make_gateway: Any, serve: Any, error: ModelError, status: int, exception: type
) -> None:
    fake = FakeModel([error, error])
    with serve(make_gateway(fake)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        with pytest.raises(exception) as raised:
            client.chat.completions.create(model="fake/m", messages=HELLO)
        with pytest.raises(exception) as streamed:
            client.chat.completions.create(model="fake/m", messages=HELLO, stream=True)
    assert raised.value.status_code == status
    assert streamed.value.status_code == status  # failed before the first event: a status
    body = raised.value.body
    assert isinstance(body, dict) and "upstream said no" in body["message"]
    if error.error_class.retry_after:
        assert raised.value.response.headers["retry-after"] == "7"


def test_operator_key_gate_refuses_without_the_key_and_admits_with_it(
    make_gateway: Any, serve: Any
) -> None:
    gate = OperatorKeyGate(KEY)
    with serve(make_gateway(gate=gate)) as url:
        wrong = openai.OpenAI(base_url=url + "/v1", api_key="sk-wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as refused:
            wrong.chat.completions.create(model="echo", messages=HELLO)
        bare = httpx2.post(url + "/v1/chat/completions", json={"model": "echo", "messages": HELLO})
        right = openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0)
        answer = right.chat.completions.create(model="echo", messages=HELLO)
        anthropic_style = httpx2.post(
            url + "/v1/chat/completions",
            json={"model": "echo", "messages": HELLO},
            headers={"x-api-key": KEY},
        )
    assert "sk-wrong" not in str(refused.value)
    assert bare.status_code == 401 and "no key" in bare.json()["error"]["message"]
    assert answer.choices[0].message.content == "hi"
    assert anthropic_style.status_code == 200


def test_operator_key_gate_refuses_a_caller_without_the_key_before_reading_its_body(
    make_gateway: Any, serve: Any
) -> None:
    # Not JSON and larger than the limit: a caller without the key learns neither.
    post = "/v1/chat/completions"
    junk = {"content": b"{not json" * 300, "headers": {"content-type": "application/json"}}
    with serve(make_gateway(gate=OperatorKeyGate(KEY), max_request_bytes=1000)) as url:
        bare = httpx2.post(url + post, **junk)  # type: ignore[arg-type]
        wrong = httpx2.post(url + post, **junk | {"headers": {"x-api-key": "sk-wrong"}})  # type: ignore[arg-type]
        right = httpx2.post(url + post, **junk | {"headers": {"x-api-key": KEY}})  # type: ignore[arg-type]
    assert bare.status_code == 401 and "no key" in bare.json()["error"]["message"]
    assert wrong.status_code == 401 and "sk-wrong" not in wrong.text
    assert right.status_code == 413


def test_bad_requests_are_each_a_clear_4xx_and_the_next_call_works(
    make_gateway: Any, serve: Any
) -> None:
    with serve(make_gateway(max_request_bytes=2048)) as url:
        post = url + "/v1/chat/completions"
        invalid = httpx2.post(
            post, content=b"{not json", headers={"content-type": "application/json"}
        )
        wrong_type = httpx2.post(post, content=b"{}", headers={"content-type": "text/plain"})
        not_object = httpx2.post(post, json=[1, 2])
        unknown = httpx2.post(post, json={"model": "echo", "messages": HELLO, "frobnicate": 1})
        no_messages = httpx2.post(post, json={"model": "echo", "messages": []})
        bad_role = httpx2.post(post, json={"model": "echo", "messages": [{"role": "x"}]})
        huge = httpx2.post(
            post, json={"model": "echo", "messages": [{"role": "user", "content": "a" * 5000}]}
        )
        no_route = httpx2.get(url + "/v2/nothing")
        wrong_method = httpx2.get(post)
        fine = httpx2.post(post, json={"model": "echo", "messages": HELLO})
    assert invalid.status_code == 400 and "not valid JSON" in invalid.json()["error"]["message"]
    assert wrong_type.status_code == 415
    assert not_object.status_code == 400
    assert unknown.status_code == 400 and "frobnicate" in unknown.json()["error"]["message"]
    assert no_messages.status_code == 400
    assert bad_role.status_code == 400 and "role" in bad_role.json()["error"]["message"]
    assert huge.status_code == 413 and huge.json()["error"]["type"] == "request_too_large"
    assert no_route.status_code == 404 and wrong_method.status_code == 405
    assert fine.status_code == 200


def test_a_body_larger_than_the_limit_is_refused_before_it_is_sent_whole(
    make_gateway: Any, serve: Any
) -> None:
    with serve(make_gateway(max_request_bytes=1000)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            # Headers announce 10 MB; none of the body follows: the answer must come anyway.
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                b"content-type: application/json\r\ncontent-length: 10000000\r\n\r\n"
            )
            answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413")


def test_a_slow_sender_is_cut_off_alone(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway(body_timeout=0.3)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                b"content-type: application/json\r\ncontent-length: 100\r\n\r\n{"
            )
            other = httpx2.post(
                url + "/v1/chat/completions", json={"model": "echo", "messages": HELLO}
            )
            answer = sock.recv(65536)
    assert other.status_code == 200
    assert answer.startswith(b"HTTP/1.1 408")


def test_an_error_after_the_stream_began_is_an_error_chunk(make_gateway: Any, serve: Any) -> None:
    def explode(request: Any) -> Any:
        raise AssertionError("not reached")

    class Cut(FakeModel):
        async def _play(self, route: Any, request: Any) -> Any:  # type: ignore[override]
            from modelplug.contract.types import TextDelta

            yield TextDelta(text="partial ")
            raise ModelError(
                "the upstream stopped mid-answer",
                error_class=ErrorClass(kind="overloaded"),
            )

    fake = Cut([reply("unused")])
    with serve(make_gateway(fake)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        seen: list[str] = []
        with pytest.raises(openai.APIError) as raised:
            for chunk in client.chat.completions.create(
                model="fake/m", messages=HELLO, stream=True
            ):
                if chunk.choices and chunk.choices[0].delta.content:
                    seen.append(chunk.choices[0].delta.content)
    assert seen == ["partial "]
    assert "stopped mid-answer" in str(raised.value)


def test_a_refusal_is_one_body_of_known_length_the_same_every_time(
    make_gateway: Any, serve: Any
) -> None:
    # A wrong key, again and again on one connection (a flood's lane): each answer says
    # its length (no chunked framing to make or read), with the same body each time.
    body = json.dumps({"model": "echo", "messages": HELLO}).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
        b"authorization: Bearer not-the-key\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    answers = []
    with serve(make_gateway(gate=OperatorKeyGate(KEY))) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            reader = sock.makefile("rb")
            for _ in range(3):
                sock.sendall(request)
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    head += reader.readline()
                lines = head.lower().split(b"\r\n")
                assert not any(line.startswith(b"transfer-encoding") for line in lines)
                (length,) = [line for line in lines if line.startswith(b"content-length:")]
                answers.append((head.split(b" ", 2)[1], reader.read(int(length.split(b":")[1]))))
    assert len(set(answers)) == 1
    status, answer = answers[0]
    assert status == b"401"
    assert json.loads(answer)["error"]["type"] == "authentication_error"
