"""One call, one answer: ``n > 1`` is refused; other choices a server sends anyway are
never mixed into the answer."""

from __future__ import annotations

import pytest
from modelplug import RequestError


def test_n_above_one_is_refused_before_anything_is_sent(compat, wire_server):
    with pytest.raises(RequestError) as caught:
        compat().complete("wire/m", "hi", extra={"n": 3})
    assert "n = 3" in str(caught.value) and "one answer per call" in str(caught.value)
    assert wire_server.requests == []


def test_n_of_one_is_sent_as_asked(compat, wire_server):
    wire_server.add_sse([{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}])
    assert compat().complete("wire/m", "hi", extra={"n": 1}).text == "ok"
    assert wire_server.requests[0].json()["n"] == 1


def test_choices_beyond_the_first_are_not_interleaved(compat, wire_server):
    wire_server.add_sse(
        [
            {"choices": [{"index": 0, "delta": {"content": "A1"}}]},
            {"choices": [{"index": 1, "delta": {"content": "B1"}}]},
            {
                "choices": [
                    {"index": 0, "delta": {"content": "A2"}},
                    {"index": 1, "delta": {"content": "B2"}},
                ]
            },
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ],
        done=True,
    )
    response = compat().complete("wire/m", "hi")
    assert response.text == "A1A2"
