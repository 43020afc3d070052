"""modelplug_embed over POST {base}/embeddings on the loopback server: the body sent,
the answer read (floats, base64), batches in order, dimensions, extra fields, usage and
classified errors; a property test of the answer reader; a live llama-server check."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import ModelError, RequestError
from modelplug.contract.types import Endpoint, Route
from modelplug_kit.testing import load_recording
from modelplug_openai_compat.embeddings import read_batch

RECORDINGS = Path(__file__).parent / "recordings"

KEY = {"WIRE_KEY": "sk-embed-secret-0123456789"}


def serve(wire: Any, name: str, *, status: int = 200, **kwargs: Any) -> None:
    wire.add(
        load_recording(RECORDINGS / name), status=status, content_type="application/json", **kwargs
    )


def answer(vectors: list[list[float]], *, tokens: int | None = 3, reverse: bool = False) -> dict:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    body: dict[str, Any] = {
        "object": "list",
        "data": data[::-1] if reverse else data,
        "model": "served-model",
    }
    if tokens is not None:
        body["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
    return body


def test_openai_docs_answer_is_read_and_the_body_sent_exactly(compat, wire_server):
    serve(wire_server, "openai_embeddings.json")
    client = compat(server="openai", api_key_env="WIRE_KEY", environ=KEY)
    result = client.embed("wire/text-embedding-ada-002", "The food was delicious")
    assert result.vectors == [[0.0023064255, -0.009327292, -0.0028842222]]
    assert result.usage.input == 8 and result.usage.reported
    assert result.metadata["response_model"] == "text-embedding-ada-002"
    assert result.model == "wire/text-embedding-ada-002"
    request = wire_server.requests[0]
    assert request.method == "POST" and request.path == "/v1/embeddings"
    assert request.body == (
        b'{"model": "text-embedding-ada-002", "input": ["The food was delicious"], '
        b'"encoding_format": "float"}'
    )
    assert request.headers["authorization"] == "Bearer " + KEY["WIRE_KEY"]
    assert request.headers["accept"] == "application/json"


def test_ollama_v1_answer_keeps_the_inputs_order(compat, wire_server):
    serve(wire_server, "ollama_v1_embeddings.json")
    result = compat(server="ollama").embed("wire/all-minilm", ["why is the sky blue?", "why?"])
    assert result.vectors[1] == [-0.0098027075, 0.06042469, 0.025257962]
    assert result.usage.input == 9


def test_items_out_of_order_are_put_back_by_index(compat, wire_server):
    wire_server.add_json(answer([[1.0], [2.0], [3.0]], reverse=True))
    result = compat().embed("wire/m", ["a", "b", "c"])
    assert result.vectors == [[1.0], [2.0], [3.0]]


def test_more_inputs_than_a_batch_go_in_batches_in_order(compat, wire_server):
    # A server of no known kind takes 64 inputs a request: 150 are 64 + 64 + 22.
    inputs = [f"text {i}" for i in range(150)]
    for start, count in ((0, 64), (64, 64), (128, 22)):
        wire_server.add_json(answer([[float(start + i)] for i in range(count)], tokens=count))
    client = compat({"openai-compat": {"embed_concurrency": 1}})
    result = client.embed("wire/m", inputs)
    assert [r.json()["input"] for r in wire_server.requests] == [
        inputs[:64],
        inputs[64:128],
        inputs[128:],
    ]
    assert result.vectors == [[float(i)] for i in range(150)]
    assert result.usage.input == 150 and result.usage.reported
    assert result.metadata["batches"] == 3


@pytest.mark.parametrize(("bound", "connections"), [(4, 3), (2, 2)])
def test_batches_are_sent_at_once_up_to_the_bound(compat, wire_server, bound, connections):
    inputs = [f"t{i}" for i in range(192)]
    for _ in range(3):
        # Each answer waits: the batches in flight at once each hold a connection, and
        # one sent later takes a connection an answered batch gave back.
        wire_server.add_json(answer([[0.5]] * 64), stall=0.5)
    before = wire_server.connections
    result = compat({"openai-compat": {"embed_concurrency": bound}}).embed("wire/m", inputs)
    assert wire_server.connections - before == connections
    sent = sorted(text for r in wire_server.requests for text in r.json()["input"])
    assert sent == sorted(inputs) and len(result.vectors) == 192


def test_a_failed_batch_names_its_inputs_and_keeps_its_class(compat, wire_server):
    inputs = [f"x{i}" for i in range(150)]
    wire_server.add_json(answer([[1.0]] * 64))
    wire_server.add_json(
        {"error": {"message": "Rate limit reached", "type": "requests"}},
        status=429,
        headers={"retry-after": "7"},
    )
    client = compat({"openai-compat": {"embed_concurrency": 1}})
    with pytest.raises(ModelError) as caught:
        client.embed("wire/m", inputs)
    assert caught.value.kind == "rate_limit" and caught.value.error_class.retry_after == 7
    assert "inputs 64-127 of 150" in str(caught.value)
    assert wire_server.requests[1].json()["input"] == inputs[64:128]


def test_dimensions_are_sent_and_the_answer_checked(compat, wire_server):
    wire_server.add_json(answer([[0.1, 0.2]]))
    result = compat(server="openai").embed("wire/text-embedding-3-small", "hi", dimensions=2)
    assert wire_server.requests[0].json()["dimensions"] == 2
    assert result.dimensions == 2
    wire_server.add_json(answer([[0.1, 0.2, 0.3]]))
    with pytest.raises(ModelError, match="ignored dimensions") as caught:
        compat(server="openai").embed("wire/text-embedding-3-small", "hi", dimensions=2)
    assert not caught.value.retryable and caught.value.error_class.fallback


@pytest.mark.parametrize(
    ("server", "model", "words"),
    [
        ("llamacpp", "nomic", "takes no dimensions"),
        ("openai", "text-embedding-ada-002", "one vector size"),
    ],
)
def test_dimensions_are_refused_where_the_server_takes_none(
    compat, wire_server, server, model, words
):
    with pytest.raises(RequestError, match=words):
        compat(server=server).embed(f"wire/{model}", "hi", dimensions=256)
    assert wire_server.requests == []


def test_base64_vectors_are_decoded_as_little_endian_float32(compat, wire_server):
    serve(wire_server, "base64_embeddings.json")
    result = compat().embed(
        "wire/text-embedding-3-small", "hi", extra={"encoding_format": "base64"}
    )
    assert wire_server.requests[0].json()["encoding_format"] == "base64"
    expected = list(struct.unpack("<4f", struct.pack("<4f", 0.5, -0.25, 1.0, 0.1)))
    assert result.vectors == [expected]


def test_user_goes_into_the_body_and_unknown_extra_fields_are_refused(compat, wire_server):
    wire_server.add_json(answer([[1.0]]))
    compat().embed("wire/m", "hi", extra={"user": "u-1"})
    assert wire_server.requests[0].json()["user"] == "u-1"
    with pytest.raises(RequestError, match="task_type, truncate"):
        compat().embed("wire/m", "hi", extra={"truncate": True, "task_type": "x"})
    with pytest.raises(RequestError, match="float or base64"):
        compat().embed("wire/m", "hi", extra={"encoding_format": "int8"})
    assert len(wire_server.requests) == 1


def test_usage_is_estimated_when_the_server_reports_none(compat, wire_server):
    wire_server.add_json(answer([[1.0], [2.0]], tokens=None))
    result = compat().embed("wire/m", ["abcdefgh", "abcd"])
    assert result.usage.input == 3 and result.usage.reported is False
    assert result.metadata["response_model"] == "served-model"


def test_llamacpp_batch_refusal_is_a_context_overflow_naming_the_batch(compat, wire_server):
    serve(wire_server, "llamacpp_batch_too_large.json", status=500)
    with pytest.raises(ModelError) as caught:
        compat(server="llamacpp").embed("wire/nomic", "a long text")
    error = caught.value
    assert error.kind == "context_overflow" and not error.retryable
    assert not error.error_class.fallback
    assert "physical batch of 512 tokens" in error.error_class.reason
    assert "807 tokens" in str(error) and "-ub" in str(error)


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (
            401,
            {
                "error": {
                    "message": "Incorrect API key provided: sk-embed-secret-0123456789.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
            "auth",
        ),
        (
            404,
            {
                "error": {
                    "message": "The model `nope` does not exist",
                    "type": "invalid_request_error",
                    "code": "model_not_found",
                }
            },
            "not_found",
        ),
        (
            400,
            {"error": {"message": "'$.input' is invalid.", "type": "invalid_request_error"}},
            "bad_request",
        ),
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens, however "
                    "you requested 9000 tokens",
                    "type": "invalid_request_error",
                }
            },
            "context_overflow",
        ),
    ],
)
def test_error_answers_are_classified_and_keep_no_secret(compat, wire_server, status, body, kind):
    wire_server.add_json(body, status=status)
    with pytest.raises(ModelError) as caught:
        compat(api_key_env="WIRE_KEY", environ=KEY).embed("wire/m", "hi")
    assert caught.value.kind == kind
    assert KEY["WIRE_KEY"] not in str(caught.value)
    if kind == "context_overflow":
        # Advice for an input, not chat's context_window for a conversation.
        assert "shorten or split" in str(caught.value) and "context_window" not in str(caught.value)


def test_a_web_page_is_not_an_answer(compat, wire_server):
    wire_server.add(b"<html>login</html>", content_type="text/html")
    with pytest.raises(ModelError, match="check base_url"):
        compat().embed("wire/m", "hi")


ROUTE = Route(
    provider="lab",
    model="m",
    endpoint=Endpoint(type="openai-compatible", base_url="http://x.test/v1"),
)
GOOD = json.dumps(answer([[0.25, -1.5], [3.0, 0.0]])).encode()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(GOOD)
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["flip", "cut", "insert", "field"]))
        if how == "field":
            value = json.loads(GOOD)
            target = draw(st.sampled_from(["data", "usage", "model", "index", "embedding"]))
            junk = draw(
                st.one_of(
                    st.none(),
                    st.integers(),
                    st.text(max_size=4),
                    st.lists(st.integers(), max_size=3),
                    st.floats(),
                    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                )
            )
            if target in ("index", "embedding"):
                value["data"][draw(st.integers(0, 1))][target] = junk
            else:
                value[target] = junk
            data = bytearray(json.dumps(value).encode())
        elif not data:
            break
        else:
            at = draw(st.integers(0, len(data) - 1))
            if how == "flip":
                data[at] = draw(st.integers(0, 255))
            elif how == "cut":
                del data[at:]
            else:
                data[at:at] = draw(st.sampled_from([b"NaN", b"1e999", b"[", b'"', b"\xff", b"-"]))
    return bytes(data)


@given(mutated())
def test_mutated_answers_end_in_vectors_or_a_classified_error(raw):
    try:
        batch = read_batch(ROUTE, raw, 2, None)
    except ModelError as exc:
        assert exc.error_class.kind in ("transient", "other")
        return
    assert len(batch.vectors) == 2
    assert all(isinstance(x, float) and abs(x) != float("inf") for v in batch.vectors for x in v)


# -- live: llama.cpp's own server -------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def llama_server():
    """A real ``llama-server --embeddings`` (MODELPLUG_LLAMACPP_EMBED_MODEL: a GGUF
    embedding model); skipped where either is missing."""
    binary = shutil.which("llama-server")
    model = os.environ.get("MODELPLUG_LLAMACPP_EMBED_MODEL")
    if binary is None or not model:
        pytest.skip("llama-server and MODELPLUG_LLAMACPP_EMBED_MODEL are needed for this check")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "-m", model, "--embeddings", "--port", str(port), "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        import httpx2

        for _ in range(600):
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            time.sleep(0.1)
        else:
            pytest.fail("llama-server did not become healthy")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_llama_server_vectors_equal_its_own_answer(compat, llama_server):
    import httpx2

    texts = ["The quick brown fox", "jumps over the lazy dog", "embeddings"]
    own = httpx2.post(
        f"{llama_server}/v1/embeddings", json={"model": "m", "input": texts}, timeout=120
    ).json()
    ours = compat(base_url=llama_server + "/v1", server="llamacpp").embed("wire/m", texts)
    assert ours.vectors == [
        item["embedding"] for item in sorted(own["data"], key=lambda i: i["index"])
    ]
    assert ours.usage.input == own["usage"]["prompt_tokens"]
