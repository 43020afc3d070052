"""modelplug_embed over OpenAI's /v1/embeddings on the loopback server: the body sent,
the answer read (floats, base64; the same vectors as the openai SDK from the same
bytes), batches within 2,048 inputs and 300,000 tokens, an input over 8,192 tokens,
dimensions, extra fields, usage and classified errors; a property test of the reader."""

from __future__ import annotations

import json
import struct
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import ModelError, RequestError
from modelplug.contract.types import Endpoint, Route
from modelplug_kit.testing import load_recording
from modelplug_openai.embeddings import MAX_INPUTS, batches, read_batch


def serve(wire_server: Any, recorded: Any, name: str, *, status: int = 200, **kw: Any) -> None:
    body = load_recording(recorded / name)
    wire_server.add(body, status=status, content_type="application/json", **kw)


def answer(vectors: list[list[float]], *, tokens: int | None = 3) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    body: dict[str, Any] = {"object": "list", "data": data, "model": "text-embedding-3-small"}
    if tokens is not None:
        body["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
    return body


def one_at_a_time(responses: Any) -> Any:
    return responses({"openai": {"embed_concurrency": 1}})


def test_the_docs_answer_is_read_and_the_body_sent_exactly(responses, wire_server, recorded, wire):
    serve(wire_server, recorded, "embeddings.json")
    result = responses().embed("wire/text-embedding-ada-002", "The food was delicious")
    assert result.vectors == [[0.0023064255, -0.009327292, -0.0028842222]]
    assert result.usage.input == 8 and result.usage.reported
    assert result.metadata["response_model"] == "text-embedding-ada-002"
    request = wire_server.requests[0]
    assert request.method == "POST" and request.path == "/v1/embeddings"
    assert request.json() == {
        "model": "text-embedding-ada-002",
        "input": ["The food was delicious"],
        "encoding_format": "float",
    }
    assert request.headers["authorization"] == f"Bearer {wire.KEY}"
    assert request.headers["accept"] == "application/json"


def test_the_same_bytes_give_the_sdks_vectors(responses, wire_server, recorded):
    for name in ("embeddings.json", "embeddings_base64.json"):
        serve(wire_server, recorded, name)
        sdk = openai.OpenAI(base_url=wire_server.url + "/v1", api_key="sk-sdk", max_retries=0)
        with sdk:
            # The SDK asks for base64 unless told otherwise, and decodes it itself.
            fmt: Any = "float" if name == "embeddings.json" else openai.omit
            theirs = sdk.embeddings.create(model="m", input="hi", encoding_format=fmt)
        serve(wire_server, recorded, name)
        extra = {} if name == "embeddings.json" else {"encoding_format": "base64"}
        ours = responses().embed("wire/m", "hi", extra=extra)
        assert ours.vectors == [list(item.embedding) for item in theirs.data]
        assert ours.usage.input == theirs.usage.prompt_tokens
    assert wire_server.requests[-1].json()["encoding_format"] == "base64"
    expected = list(struct.unpack("<4f", struct.pack("<4f", 0.5, -0.25, 1.0, 0.1)))
    assert ours.vectors == [expected]


def test_more_than_2048_inputs_go_in_two_requests_in_order(responses, wire_server):
    inputs = [f"w{i}" for i in range(MAX_INPUTS + 1)]
    wire_server.add_json(answer([[float(i)] for i in range(MAX_INPUTS)], tokens=MAX_INPUTS))
    wire_server.add_json(answer([[-1.0]], tokens=1))
    result = one_at_a_time(responses).embed("wire/text-embedding-3-small", inputs)
    assert [len(r.json()["input"]) for r in wire_server.requests] == [MAX_INPUTS, 1]
    assert wire_server.requests[1].json()["input"] == [inputs[-1]]
    assert result.vectors == [[float(i)] for i in range(MAX_INPUTS)] + [[-1.0]]
    assert result.usage.input == MAX_INPUTS + 1 and result.metadata["batches"] == 2


def test_a_request_keeps_under_300000_tokens_by_the_inputs_bytes(responses, wire_server):
    # Six inputs of 60,000 bytes: five fill 300,000, the sixth goes on its own.
    inputs = [str(i) * 60_000 for i in range(6)]
    wire_server.add_json(answer([[1.0]] * 5))
    wire_server.add_json(answer([[2.0]]))
    result = one_at_a_time(responses).embed("wire/text-embedding-3-small", inputs)
    assert [r.json()["input"] for r in wire_server.requests] == [inputs[:5], inputs[5:]]
    assert result.vectors == [[1.0]] * 5 + [[2.0]]


def test_batches_count_bytes_not_characters():
    # "é" is two bytes: 150,001 of them are over the budget on their own.
    runs = batches(["é" * 75_000, "é" * 75_000, "a"])
    assert [(start, len(chunk)) for start, chunk in runs] == [(0, 2), (2, 1)]
    assert [len(c) for _, c in batches(["a"] * 4097)] == [2048, 2048, 1]


def test_an_input_clearly_over_8192_tokens_is_refused_before_sending(responses, wire_server):
    with pytest.raises(ModelError) as caught:
        responses().embed("wire/text-embedding-3-small", ["short", "x" * 70_000])
    assert caught.value.kind == "context_overflow" and not caught.value.retryable
    assert "input 1" in str(caught.value) and "8,192 tokens" in str(caught.value)
    assert wire_server.requests == []


def test_the_servers_400_for_a_long_input_is_a_context_overflow(responses, wire_server, recorded):
    serve(wire_server, recorded, "embeddings_too_long.json", status=400)
    with pytest.raises(ModelError) as caught:
        responses().embed("wire/text-embedding-3-small", "word " * 9000)
    assert caught.value.kind == "context_overflow"
    assert "maximum context length is 8192 tokens" in str(caught.value)
    assert "shorten or split that input" in str(caught.value)
    assert "context_window" not in str(caught.value)


def test_a_rate_limited_batch_names_its_inputs_and_the_wait(responses, wire_server):
    wire_server.add_json(answer([[1.0]] * MAX_INPUTS))
    wire_server.add_json(
        {
            "error": {
                "message": "Rate limit reached for text-embedding-3-small",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
        },
        status=429,
        headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"},
    )
    with pytest.raises(ModelError) as caught:
        one_at_a_time(responses).embed("wire/m", ["t"] * (MAX_INPUTS + 10))
    assert caught.value.kind == "rate_limit" and caught.value.error_class.retry_after == 1.5
    assert f"inputs 2048-2057 of {MAX_INPUTS + 10}" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [
        (401, "invalid_api_key", "auth"),
        (404, "model_not_found", "not_found"),
        (400, "invalid_value", "bad_request"),
    ],
)
def test_error_answers_are_classified_without_the_key(
    responses, wire_server, wire, status, code, kind
):
    message = f"refused {wire.KEY}" if status == 401 else "refused"
    wire_server.add_json(
        {"error": {"message": message, "type": "invalid_request_error", "code": code}},
        status=status,
    )
    with pytest.raises(ModelError) as caught:
        responses().embed("wire/m", "hi")
    assert caught.value.kind == kind
    assert wire.KEY not in str(caught.value)


def test_dimensions_are_sent_and_refused_for_ada(responses, wire_server):
    wire_server.add_json(answer([[0.5, 0.5, 0.5]]))
    result = responses().embed("wire/text-embedding-3-large", "hi", dimensions=3)
    assert wire_server.requests[0].json()["dimensions"] == 3 and result.dimensions == 3
    wire_server.add_json(answer([[0.5, 0.5]]))
    with pytest.raises(ModelError, match="ignored dimensions") as caught:
        responses().embed("wire/text-embedding-3-large", "hi", dimensions=3)
    assert not caught.value.retryable
    with pytest.raises(RequestError, match="takes no dimensions"):
        responses().embed("wire/text-embedding-ada-002", "hi", dimensions=3)
    assert len(wire_server.requests) == 2


def test_extra_fields_user_sent_unknown_refused(responses, wire_server):
    wire_server.add_json(answer([[1.0]]))
    responses().embed("wire/m", "hi", extra={"user": "user-42"})
    assert wire_server.requests[0].json()["user"] == "user-42"
    with pytest.raises(RequestError, match="take no task_type"):
        responses().embed("wire/m", "hi", extra={"task_type": "RETRIEVAL_QUERY"})
    assert len(wire_server.requests) == 1


def test_usage_is_estimated_when_none_is_reported(responses, wire_server):
    wire_server.add_json(answer([[1.0]], tokens=None))
    result = responses().embed("wire/m", "twelve chars")
    assert result.usage.input == 3 and result.usage.reported is False


ROUTE = Route(
    provider="openai",
    model="m",
    endpoint=Endpoint(type="openai-responses", base_url="http://x.test/v1"),
)
GOOD = json.dumps(answer([[0.25, -1.5], [3.0, 0.0]])).encode()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(GOOD)
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["flip", "cut", "insert", "field"]))
        if how == "field":
            try:
                value = json.loads(bytes(data))
            except ValueError:
                value = json.loads(GOOD)
            if not isinstance(value, dict) or not isinstance(value.get("data"), list):
                value = json.loads(GOOD)
            target = draw(st.sampled_from(["data", "usage", "model", "index", "embedding"]))
            junk = draw(
                st.one_of(
                    st.none(),
                    st.integers(),
                    st.text(max_size=4),
                    st.floats(),
                    st.lists(st.integers(), max_size=3),
                )
            )
            items = [i for i in value["data"] if isinstance(i, dict)]
            if target in ("index", "embedding") and items:
                draw(st.sampled_from(items))[target] = junk
            else:
                value[target] = junk
            data = bytearray(json.dumps(value).encode())
        elif data:
            at = draw(st.integers(0, len(data) - 1))
            if how == "flip":
                data[at] = draw(st.integers(0, 255))
            elif how == "cut":
                del data[at:]
            else:
                data[at:at] = draw(st.sampled_from([b"NaN", b"1e999", b"[", b'"', b"\xff", b","]))
    return bytes(data)


@given(mutated())
def test_mutated_answers_end_in_vectors_or_a_classified_error(raw):
    try:
        batch = read_batch(ROUTE, raw, 2, None)
    except ModelError as exc:
        assert exc.error_class.kind == "transient" and "cannot be read" in str(exc)
        return
    assert len(batch.vectors) == 2 and len({len(v) for v in batch.vectors}) == 1
    assert all(type(x) is float and abs(x) != float("inf") for v in batch.vectors for x in v)
