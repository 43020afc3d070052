"""modelplug_embed on the loopback server: the Gemini API's batchEmbedContents and
Vertex AI's predict, the bodies sent exactly, batches and their order, usage (estimated
on the Gemini API, reported on Vertex), errors, and mutated answers ending in
Embeddings or a classified error."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import MissingKeyError, ModelError, RequestError
from modelplug.client.client import Client
from modelplug.testing import examples
from modelplug_gemini import embeddings
from modelplug_kit.testing import WireServer

GeminiClient = Callable[..., Client]
BATCH_PATH = "/v1beta/models/gemini-embedding-001:batchEmbedContents"
VERTEX_PATH = (
    "/v1/projects/proj-test/locations/europe-west4/publishers/google/models/"
    "text-embedding-005:predict"
)


def add(server: WireServer, body: Any, status: int = 200, **kwargs: Any) -> None:
    server.add(
        json.dumps(body) if not isinstance(body, bytes) else body,
        status=status,
        content_type="application/json",
        **kwargs,
    )


def gemini_answer(count: int, first: float = 0.0) -> dict[str, Any]:
    """A batchEmbedContents answer of ``count`` vectors numbered from ``first`` (shaped
    by hand after the recorded one)."""
    return {"embeddings": [{"values": [first + i, 0.5]} for i in range(count)]}


def test_the_recorded_answer_gives_its_vectors_and_an_estimated_usage(
    gemini_client: GeminiClient, wire_server: WireServer, recorded_json: Callable[[str], Any]
) -> None:
    add(wire_server, recorded_json("embed_batch.json"))
    result = gemini_client().embed("gemini/gemini-embedding-001", ["sunny day", "rainy day!"])
    assert result.vectors == [[0.1, 0.2, 0.3, 0.4, 0.5], [0.6, 0.7, 0.8, 0.9, 1.0]]
    # The API counts no tokens for embeddings: 19 characters, 4 a token, rounded up.
    assert (result.usage.input, result.usage.reported) == (5, False)
    assert result.model == "gemini/gemini-embedding-001"
    assert "response_model" not in result.metadata  # the answer names no model


def test_the_batch_body_is_sent_exactly_with_the_key_in_its_header(
    gemini_client: GeminiClient, wire_server: WireServer, test_key: str
) -> None:
    add(wire_server, gemini_answer(2))
    gemini_client().embed(
        "gemini/gemini-embedding-001",
        ["a", "b"],
        dimensions=768,
        extra={"task_type": "RETRIEVAL_DOCUMENT", "title": "Notes"},
    )
    sent = wire_server.requests[0]
    assert (sent.method, sent.path) == ("POST", BATCH_PATH)
    assert sent.headers["x-goog-api-key"] == test_key
    assert sent.json() == {
        "requests": [
            {
                "model": "models/gemini-embedding-001",
                "content": {"parts": [{"text": text}]},
                "taskType": "RETRIEVAL_DOCUMENT",
                "title": "Notes",
                "outputDimensionality": 768,
            }
            for text in ("a", "b")
        ]
    }


def test_the_rest_spelling_taskType_is_taken_too(
    gemini_client: GeminiClient, wire_server: WireServer
) -> None:
    add(wire_server, gemini_answer(1))
    gemini_client().embed("gemini/gemini-embedding-001", "q", extra={"taskType": "RETRIEVAL_QUERY"})
    assert wire_server.requests[0].json()["requests"][0] == {
        "model": "models/gemini-embedding-001",
        "content": {"parts": [{"text": "q"}]},
        "taskType": "RETRIEVAL_QUERY",
    }


def test_an_unknown_extra_field_is_refused_before_sending(
    gemini_client: GeminiClient, wire_server: WireServer
) -> None:
    with pytest.raises(RequestError) as caught:
        gemini_client().embed("gemini/gemini-embedding-001", "x", extra={"truncate": True})
    assert "'truncate'" in str(caught.value) and "task_type, taskType, title" in str(caught.value)
    assert wire_server.requests == []


def test_250_inputs_go_as_batches_of_100_in_order(
    gemini_client: GeminiClient, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One request at a time: the server's queue then answers the batches in order.
    monkeypatch.setattr(embeddings, "CONCURRENCY", 1)
    texts = [f"text {i}" for i in range(250)]
    for first, count in ((0, 100), (100, 100), (200, 50)):
        add(wire_server, gemini_answer(count, first))
    result = gemini_client().embed("gemini/gemini-embedding-001", texts)
    sent = [
        [r["content"]["parts"][0]["text"] for r in q.json()["requests"]]
        for q in wire_server.requests
    ]
    assert sent == [texts[0:100], texts[100:200], texts[200:250]]
    assert [v[0] for v in result.vectors] == [float(i) for i in range(250)]


def test_concurrent_batches_each_reach_the_server_once(
    gemini_client: GeminiClient, wire_server: WireServer
) -> None:
    texts = [f"t{i}" for i in range(300)]
    for _ in range(3):
        add(wire_server, gemini_answer(100))
    result = gemini_client().embed("gemini/gemini-embedding-001", texts)
    sent = sorted(
        (
            [r["content"]["parts"][0]["text"] for r in q.json()["requests"]]
            for q in wire_server.requests
        ),
        key=lambda batch: int(batch[0][1:]),
    )
    assert sent == [texts[0:100], texts[100:200], texts[200:300]]
    assert len(result.vectors) == 300


def test_a_failed_batch_names_its_inputs_and_googles_words(
    gemini_client: GeminiClient,
    wire_server: WireServer,
    recorded_json: Callable[[str], Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embeddings, "CONCURRENCY", 1)
    add(wire_server, gemini_answer(100))
    add(wire_server, recorded_json("embed_batch_limit_400.json"), status=400)
    with pytest.raises(ModelError) as caught:
        gemini_client().embed("gemini/gemini-embedding-001", [f"t{i}" for i in range(150)])
    error = caught.value
    assert error.error_class.kind == "bad_request"
    assert "at most 100 requests can be in one batch" in str(error)
    assert "inputs 100-149 of 150" in str(error)


@pytest.mark.parametrize(
    ("name", "status", "kind"),
    [
        ("rate_limit_429.json", 429, "rate_limit"),
        ("daily_quota_429.json", 429, "quota"),
    ],
)
def test_recorded_google_errors_are_classified(
    gemini_client: GeminiClient,
    wire_server: WireServer,
    recorded_json: Callable[[str], Any],
    name: str,
    status: int,
    kind: str,
) -> None:
    add(wire_server, recorded_json(name), status=status)
    with pytest.raises(ModelError) as caught:
        gemini_client().embed("gemini/gemini-embedding-001", "x")
    assert caught.value.error_class.kind == kind
    if kind == "rate_limit":
        assert caught.value.error_class.retry_after == 26


@pytest.mark.parametrize(
    ("status", "google", "kind"),
    [(403, "PERMISSION_DENIED", "auth"), (404, "NOT_FOUND", "not_found")],
)
def test_statuses_are_classified(
    gemini_client: GeminiClient,
    wire_server: WireServer,
    test_key: str,
    status: int,
    google: str,
    kind: str,
) -> None:
    # Error bodies shaped by hand in google.rpc.Status form; the key echoed must not show.
    body = {"error": {"code": status, "message": f"refused {test_key}", "status": google}}
    add(wire_server, body, status=status)
    with pytest.raises(ModelError) as caught:
        gemini_client().embed("gemini/gemini-embedding-001", "x")
    assert caught.value.error_class.kind == kind
    assert test_key not in str(caught.value)


def test_a_wrong_number_of_vectors_is_a_classified_error(
    gemini_client: GeminiClient, wire_server: WireServer
) -> None:
    add(wire_server, gemini_answer(1))
    with pytest.raises(ModelError) as caught:
        gemini_client().embed("gemini/gemini-embedding-001", ["a", "b"])
    assert caught.value.error_class.kind == "transient"
    assert "1 embeddings for 2 inputs" in str(caught.value)


VertexClient = Callable[..., tuple[Client, Any]]


def test_vertex_predict_gives_the_vectors_and_its_token_counts(
    vertex_client: VertexClient,
    wire_server: WireServer,
    recorded_json: Callable[[str], Any],
    planted_token: str,
) -> None:
    recorded = recorded_json("vertex_embed_predict.json")
    client, _ = vertex_client()
    add(wire_server, recorded)
    result = client.embed(
        "vertex/text-embedding-005",
        ["sunny day", "rainy day"],
        dimensions=5,
        extra={"task_type": "RETRIEVAL_DOCUMENT", "auto_truncate": False},
    )
    assert result.vectors == [p["embeddings"]["values"] for p in recorded["predictions"]]
    assert (result.usage.input, result.usage.reported) == (11, True)
    sent = wire_server.requests[0]
    assert (sent.method, sent.path) == ("POST", VERTEX_PATH)
    assert sent.headers["authorization"] == f"Bearer {planted_token}"
    assert sent.json() == {
        "instances": [
            {"content": "sunny day", "task_type": "RETRIEVAL_DOCUMENT"},
            {"content": "rainy day", "task_type": "RETRIEVAL_DOCUMENT"},
        ],
        "parameters": {"autoTruncate": False, "outputDimensionality": 5},
    }


def test_vertex_sends_no_parameters_unless_asked(
    vertex_client: VertexClient, wire_server: WireServer, recorded_json: Callable[[str], Any]
) -> None:
    client, _ = vertex_client()
    add(wire_server, recorded_json("vertex_embed_predict.json"))
    client.embed("vertex/text-embedding-005", ["a", "b"])
    assert wire_server.requests[0].json() == {"instances": [{"content": "a"}, {"content": "b"}]}


def test_vertex_gemini_embedding_takes_one_input_a_request(
    vertex_client: VertexClient, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embeddings, "CONCURRENCY", 1)
    client, _ = vertex_client()
    for i in range(3):
        add(
            wire_server,
            {
                "predictions": [
                    {"embeddings": {"values": [float(i)], "statistics": {"token_count": 2.0}}}
                ]
            },
        )
    result = client.embed("vertex/gemini-embedding-001", ["a", "b", "c"])
    assert [r.json()["instances"] for r in wire_server.requests] == [
        [{"content": "a"}],
        [{"content": "b"}],
        [{"content": "c"}],
    ]
    assert result.vectors == [[0.0], [1.0], [2.0]]
    assert (result.usage.input, result.usage.reported) == (6, True)


def test_vertex_over_250_inputs_is_split(
    vertex_client: VertexClient, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embeddings, "CONCURRENCY", 1)
    client, _ = vertex_client()
    for first, count in ((0, 250), (250, 10)):
        add(
            wire_server,
            {"predictions": [{"embeddings": {"values": [float(first + i)]}} for i in range(count)]},
        )
    result = client.embed("vertex/text-embedding-005", [f"t{i}" for i in range(260)])
    assert [len(r.json()["instances"]) for r in wire_server.requests] == [250, 10]
    assert [v[0] for v in result.vectors] == [float(i) for i in range(260)]
    # No token_count in these answers: estimated, and said so.
    assert result.usage.reported is False


def test_vertex_input_too_long_is_a_context_overflow_naming_the_limit(
    vertex_client: VertexClient, wire_server: WireServer, recorded_json: Callable[[str], Any]
) -> None:
    client, _ = vertex_client()
    add(wire_server, recorded_json("vertex_input_too_long_400.json"), status=400)
    with pytest.raises(ModelError) as caught:
        client.embed("vertex/text-embedding-005", "long", extra={"autoTruncate": False})
    assert caught.value.error_class.kind == "context_overflow"
    assert caught.value.error_class.fallback is False
    assert "maximum number of tokens allowed (4000)" in str(caught.value)


def test_vertex_refuses_a_gemini_api_only_field(
    vertex_client: VertexClient, wire_server: WireServer
) -> None:
    client, _ = vertex_client()
    with pytest.raises(RequestError) as caught:
        client.embed("vertex/text-embedding-005", "x", extra={"outputDimensionality": 3})
    assert "'outputDimensionality'" in str(caught.value)
    assert wire_server.requests == []


MUTATED = [
    ("predictions",),
    ("predictions", 0),
    ("predictions", 0, "embeddings"),
    ("predictions", 1, "embeddings", "values"),
    ("predictions", 0, "embeddings", "statistics"),
    ("predictions", 1, "embeddings", "statistics", "token_count"),
    ("error",),
]
CLASSIFIED = (
    "transient",
    "other",
    "bad_request",
    "auth",
    "not_found",
    "rate_limit",
    "quota",
    "overloaded",
    "context_overflow",
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def test_any_mutated_vertex_answer_ends_in_embeddings_or_a_classified_error(
    vertex_client: VertexClient, wire_server: WireServer, recorded_json: Callable[[str], Any]
) -> None:
    client, _ = vertex_client()  # one client for every example: they test the reader

    @settings(
        max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(path=st.sampled_from(MUTATED), value=_JSON, drop=st.booleans())
    def check(path: tuple[Any, ...], value: Any, drop: bool) -> None:
        answer = recorded_json("vertex_embed_predict.json")
        *parents, last = path
        node = answer
        for key in parents:
            node = node[key]
        if drop:
            if isinstance(node, dict):
                node.pop(last, None)
            else:
                node.pop(last)
        else:
            node[last] = value
        add(wire_server, answer)
        try:
            result = client.embed("vertex/text-embedding-005", ["a", "b"])
        except ModelError as exc:
            assert exc.error_class.kind in CLASSIFIED
        else:
            assert len(result.vectors) == 2
            assert all(type(x) is float for v in result.vectors for x in v)
            assert isinstance(result.usage.input, int) and result.usage.input >= 0
        assert wire_server.pending == 0

    check()


def test_a_missing_key_fails_before_anything_is_sent(
    gemini_client: GeminiClient, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = gemini_client()
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(MissingKeyError) as caught:
        client.embed("gemini/gemini-embedding-001", "x")
    assert "GEMINI_API_KEY" in str(caught.value)
    assert wire_server.requests == []


def test_a_google_error_answered_with_200_is_classified_by_its_code(
    gemini_client: GeminiClient, wire_server: WireServer, recorded_json: Callable[[str], Any]
) -> None:
    add(wire_server, recorded_json("rate_limit_429.json"))  # its body, with status 200
    with pytest.raises(ModelError) as caught:
        gemini_client().embed("gemini/gemini-embedding-001", "x")
    assert caught.value.error_class.kind == "rate_limit"
    assert caught.value.error_class.retry_after == 26


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ([0.5, True], "not a list of numbers"),
        ([0.5, "0.1"], "not a list of numbers"),
        ([], "not a list of numbers"),
        (b"[0.5, NaN]", "not finite"),
        (b"[1e308, 1e308, Infinity]", "not finite"),
    ],
)
def test_a_vector_that_is_not_finite_numbers_is_a_classified_error(
    gemini_client: GeminiClient, wire_server: WireServer, values: Any, words: str
) -> None:
    raw = values if isinstance(values, bytes) else json.dumps(values).encode()
    add(wire_server, b'{"embeddings": [{"values": ' + raw + b"}]}")
    with pytest.raises(ModelError) as caught:
        gemini_client().embed("gemini/gemini-embedding-001", "x")
    assert caught.value.error_class.kind == "transient"
    assert words in str(caught.value)


def test_whole_numbers_and_huge_finite_values_are_read_as_floats(
    gemini_client: GeminiClient, wire_server: WireServer
) -> None:
    add(wire_server, b'{"embeddings": [{"values": [1, 1e308, 1e308, -0.5]}]}')
    result = gemini_client().embed("gemini/gemini-embedding-001", "x")
    assert result.vectors == [[1.0, 1e308, 1e308, -0.5]]
    assert type(result.vectors[0][0]) is float
