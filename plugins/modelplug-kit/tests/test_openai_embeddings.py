"""The kit's reader of the OpenAI embeddings answer (modelplug_kit.embeddings), which
modelplug-openai and modelplug-openai-compat share. The answers below follow OpenAI's
API reference for ``POST /v1/embeddings`` (the ``data``/``usage``/``model`` object);
the numbers in them are invented."""

from __future__ import annotations

import base64
import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug import ModelError
from modelplug.contract.types import EmbedRequest, Endpoint, Route
from modelplug.testing import examples
from modelplug_kit import EmbeddingsBatch, WireErrors, combine_embeddings, read_openai_embeddings

ROUTE = Route(provider="box", model="m", endpoint=Endpoint(type="kit", base_url="http://x"))
ERRORS = WireErrors("box")
ANSWER = {
    "object": "list",
    "data": [
        {"object": "embedding", "index": 1, "embedding": [0.5, -1, 2.25]},
        {"object": "embedding", "index": 0, "embedding": [1.0, 0.0, 0.125]},
    ],
    "model": "text-embedding-3-small",
    "usage": {"prompt_tokens": 8, "total_tokens": 8},
}


def read(answer: object, count: int = 2, dimensions: int | None = None) -> EmbeddingsBatch:
    return read_openai_embeddings(ROUTE, json.dumps(answer).encode(), count, dimensions, ERRORS)


def test_vectors_come_back_in_the_inputs_order_with_tokens_and_model() -> None:
    batch = read(ANSWER)
    assert batch.vectors == [[1.0, 0.0, 0.125], [0.5, -1.0, 2.25]]
    assert all(type(x) is float for v in batch.vectors for x in v)
    assert (batch.tokens, batch.model) == (8, "text-embedding-3-small")


def test_base64_vectors_are_little_endian_float32() -> None:
    packed = base64.b64encode(struct.pack("<3f", 1.5, -2.0, 0.25)).decode()
    batch = read({"data": [{"embedding": packed}]}, count=1)
    assert batch.vectors == [[1.5, -2.0, 0.25]]
    assert (batch.tokens, batch.model) == (None, None)


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ([], "not a JSON object"),
        ({"data": "x"}, "no data list"),
        ({"data": [{"embedding": [1.0]}]}, "1 vectors for 2 inputs"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]},
            "not 0..1",
        ),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"embedding": [1.0]}]}, "no integer index"),
        ({"data": [{"embedding": [1.0]}, {"embedding": "%%%"}]}, "item 1 holds no vector"),
        ({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}, "different lengths"),
    ],
)
def test_an_answer_that_cannot_be_read_is_a_transient_error_saying_why(
    answer: object, said: str
) -> None:
    with pytest.raises(ModelError, match=said) as caught:
        read(answer)
    assert caught.value.error_class.kind == "transient"
    assert caught.value.error_class.retryable


def test_nan_is_not_a_number_here() -> None:
    raw = b'{"data": [{"embedding": [NaN]}]}'
    with pytest.raises(ModelError, match="not JSON"):
        read_openai_embeddings(ROUTE, raw, 1, None, ERRORS)


def test_vectors_of_another_size_than_asked_fall_back_and_do_not_retry() -> None:
    with pytest.raises(ModelError, match="ignored dimensions") as caught:
        read(ANSWER, dimensions=2)
    assert caught.value.error_class.fallback
    assert not caught.value.error_class.retryable


def test_combined_batches_sum_reported_tokens_or_estimate_when_one_said_none() -> None:
    request = EmbedRequest(inputs=["a" * 40, "b" * 40, "c"])
    said = [EmbeddingsBatch([[1.0], [2.0]], 5, "m-1"), EmbeddingsBatch([[3.0]], 2, None)]
    whole = combine_embeddings(request, said)
    assert whole.vectors == [[1.0], [2.0], [3.0]]
    assert (whole.usage.input, whole.usage.reported) == (7, True)
    assert whole.metadata == {"batches": 2, "response_model": "m-1"}
    unsaid = combine_embeddings(request, [EmbeddingsBatch([[1.0]], None, None)])
    assert not unsaid.usage.reported
    assert "response_model" not in unsaid.metadata
    assert unsaid.usage.input > 0


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=300) | st.sampled_from([json.dumps(ANSWER).encode()]), st.data())
def test_mutated_answers_end_in_a_batch_or_a_classified_error(
    raw: bytes, data: st.DataObject
) -> None:
    if raw and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + data.draw(st.binary(max_size=8)) + raw[at + 1 :]
    try:
        batch = read_openai_embeddings(ROUTE, raw, 2, None, ERRORS)
    except ModelError as error:
        assert error.error_class.kind in ("transient", "other")
    else:
        assert len(batch.vectors) == 2
