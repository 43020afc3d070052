"""modelplug_embed through ``POST /api/embed`` on the loopback server: the body sent,
batches and their order, usage, the answering model, errors, and any mutation of a
recorded answer ending in Embeddings or a classified error."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import ModelError, RequestError
from modelplug.testing import examples
from modelplug_ollama import embeddings

RECORDING = "embed_all_minilm.json"


def answer_for(count: int, first: float = 0.0, **fields) -> dict:
    """An /api/embed answer of ``count`` 3-number vectors, numbered from ``first``
    (shaped by hand after the recorded one)."""
    vectors = [[first + i, 0.5, -0.25] for i in range(count)]
    return {"model": "all-minilm", "embeddings": vectors, **fields}


def test_the_recorded_answer_gives_its_vectors_usage_and_model(ollama, wire):
    recorded = wire.recorded_json(RECORDING)
    wire.answer(RECORDING, "/api/embed")
    result = ollama().embed(
        "ollama/all-minilm", ["Why is the sky blue?", "Why is the grass green?"]
    )
    assert result.vectors == recorded["embeddings"]
    assert (result.usage.input, result.usage.reported) == (8, True)
    assert result.metadata["response_model"] == "all-minilm"
    assert result.model == "ollama/all-minilm"


def test_the_body_sent_is_exactly_ollamas_embed_request(ollama, wire):
    wire.answer(RECORDING, "/api/embed")
    client = ollama({"ollama": {"keep_alive": "10m"}})
    client.embed(
        "ollama/all-minilm",
        ["a", "b"],
        dimensions=10,
        extra={"truncate": False, "options": {"num_ctx": 512}},
    )
    sent = wire.requests[0]
    assert (sent.method, sent.path) == ("POST", "/api/embed")
    assert sent.headers["content-type"] == "application/json"
    assert sent.json() == {
        "model": "all-minilm",
        "input": ["a", "b"],
        "dimensions": 10,
        "keep_alive": "10m",
        "truncate": False,
        "options": {"num_ctx": 512},
    }


def test_a_call_names_no_dimensions_and_no_keep_alive_unless_given(ollama, wire):
    wire.server.add_json(answer_for(1), path="/api/embed")
    ollama().embed("ollama/all-minilm", "one")
    assert wire.requests[0].json() == {"model": "all-minilm", "input": ["one"]}


def test_an_unknown_extra_field_is_refused_before_sending(ollama, wire):
    with pytest.raises(RequestError) as caught:
        ollama().embed("ollama/all-minilm", "x", extra={"truncate": True, "task_type": "query"})
    assert "'task_type'" in str(caught.value)
    assert "truncate, keep_alive, options" in str(caught.value)
    assert wire.requests == []


def test_inputs_beyond_one_batch_are_split_and_come_back_in_order(ollama, wire, monkeypatch):
    # One request at a time: the server's queue then answers the batches in order.
    monkeypatch.setattr(embeddings, "CONCURRENCY", 1)
    monkeypatch.setattr(embeddings, "BATCH", 4)
    texts = [f"text {i}" for i in range(10)]
    for first, count in ((0, 4), (4, 4), (8, 2)):
        wire.server.add_json(
            answer_for(count, first, prompt_eval_count=count * 3), path="/api/embed"
        )
    result = ollama().embed("ollama/all-minilm", texts)
    assert [r.json()["input"] for r in wire.requests] == [texts[0:4], texts[4:8], texts[8:10]]
    assert [v[0] for v in result.vectors] == [float(i) for i in range(10)]
    assert (result.usage.input, result.usage.reported) == (30, True)


def test_concurrent_batches_each_reach_the_server_once(ollama, wire, monkeypatch):
    monkeypatch.setattr(embeddings, "BATCH", 3)
    texts = [f"t{i}" for i in range(9)]
    for _ in range(3):
        wire.server.add_json(answer_for(3, prompt_eval_count=2), path="/api/embed")
    result = ollama().embed("ollama/all-minilm", texts)
    sent = sorted((r.json()["input"] for r in wire.requests), key=lambda x: x[0])
    assert sent == [texts[0:3], texts[3:6], texts[6:9]]
    assert len(result.vectors) == 9
    assert result.usage.input == 6


def test_a_failed_batch_names_its_inputs(ollama, wire, monkeypatch):
    monkeypatch.setattr(embeddings, "CONCURRENCY", 1)
    monkeypatch.setattr(embeddings, "BATCH", 2)
    wire.server.add_json(answer_for(2), path="/api/embed")
    wire.server.add_json(
        {"error": 'model "nomic" not found, try pulling it first'}, status=404, path="/api/embed"
    )
    with pytest.raises(ModelError) as caught:
        ollama().embed("ollama/nomic", ["a", "b", "c", "d", "e"])
    assert caught.value.error_class.kind == "not_found"
    assert "inputs 2-3 of 5" in str(caught.value)
    assert "ollama pull nomic" in str(caught.value)


def test_an_answer_without_prompt_eval_count_is_estimated_and_says_so(ollama, wire):
    wire.server.add_json(answer_for(2), path="/api/embed")
    result = ollama().embed("ollama/all-minilm", ["12345678", "1234"])
    assert (result.usage.input, result.usage.reported) == (3, False)


def test_an_input_too_long_with_truncate_false_is_a_context_overflow(ollama, wire):
    # server/routes.go's words for a truncate: false input over the context length.
    wire.server.add_json(
        {"error": "input exceeds maximum context length"}, status=400, path="/api/embed"
    )
    with pytest.raises(ModelError) as caught:
        ollama().embed(
            "ollama/all-minilm", "long", extra={"truncate": False, "options": {"num_ctx": 256}}
        )
    error = caught.value
    assert error.error_class.kind == "context_overflow"
    assert error.error_class.fallback is False
    assert "num_ctx 256" in str(error) and "'truncate': True" in str(error)


def test_the_runners_context_length_500_is_a_context_overflow_not_a_retry(ollama, wire):
    # The runner's error (the words OllamaSharp users quote) passed on with status 500.
    wire.server.add_json(
        {"error": "the input length exceeds the context length"}, status=500, path="/api/embed"
    )
    with pytest.raises(ModelError) as caught:
        ollama().embed("ollama/all-minilm", "long", extra={"truncate": False})
    assert caught.value.error_class.kind == "context_overflow"
    assert caught.value.error_class.retryable is False
    assert "`ollama show`" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "headers", "kind"),
    [(401, {}, "auth"), (429, {"retry-after": "7"}, "rate_limit"), (400, {}, "bad_request")],
)
def test_statuses_are_classified(ollama, wire, status, headers, kind):
    wire.server.add_json({"error": "refused"}, status=status, headers=headers, path="/api/embed")
    with pytest.raises(ModelError) as caught:
        ollama().embed("ollama/all-minilm", "x")
    assert caught.value.error_class.kind == kind
    if kind == "rate_limit":
        assert caught.value.error_class.retry_after == 7


def test_a_wrong_number_of_vectors_is_a_classified_error(ollama, wire):
    wire.server.add_json(answer_for(1), path="/api/embed")
    with pytest.raises(ModelError) as caught:
        ollama().embed("ollama/all-minilm", ["a", "b"])
    assert caught.value.error_class.kind == "transient"
    assert "1 embeddings for 2 inputs" in str(caught.value)


CLASSIFIED = (
    "transient",
    "other",
    "not_found",
    "bad_request",
    "auth",
    "rate_limit",
    "context_overflow",
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def test_any_mutated_answer_ends_in_embeddings_or_a_classified_error(ollama, wire):
    client = ollama()  # one client for every example: the examples test the reader

    @settings(
        max_examples=examples(80), suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        key=st.sampled_from(["embeddings", "prompt_eval_count", "model", "error"]),
        value=_JSON,
        drop=st.booleans(),
    )
    def check(key, value, drop):
        answer = wire.recorded_json(RECORDING)
        if drop:
            answer.pop(key, None)
        else:
            answer[key] = value
        wire.server.add(
            json.dumps(answer).encode(), path="/api/embed", content_type="application/json"
        )
        try:
            result = client.embed("ollama/all-minilm", ["a", "b"])
        except ModelError as exc:
            assert exc.error_class.kind in CLASSIFIED
        else:
            assert len(result.vectors) == 2
            assert all(type(x) is float for v in result.vectors for x in v)
        assert wire.server.pending == 0

    check()


@pytest.mark.parametrize("raw", [b"[0.5, false]", b"[0.5, null]", b"[NaN]", b"[[0.5]]", b"[]"])
def test_a_vector_that_is_not_finite_numbers_is_a_classified_error(ollama, wire, raw):
    wire.server.add(
        b'{"model": "all-minilm", "embeddings": [' + raw + b"]}",
        path="/api/embed",
        content_type="application/json",
    )
    with pytest.raises(ModelError) as caught:
        ollama().embed("ollama/all-minilm", "x")
    assert caught.value.error_class.kind == "transient"
    assert "not a list of numbers" in str(caught.value)


def test_whole_numbers_are_read_as_floats(ollama, wire):
    wire.server.add_json({"embeddings": [[1, -0.5, 0]]}, path="/api/embed")
    result = ollama().embed("ollama/all-minilm", "x")
    assert result.vectors == [[1.0, -0.5, 0.0]]
    assert all(type(x) is float for x in result.vectors[0])
