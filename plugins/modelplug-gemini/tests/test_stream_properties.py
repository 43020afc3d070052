"""Property tests of the stream reader: any split of a recorded stream gives the same
Response; mutated bytes end in a Response or a classified ModelplugError, never another
exception."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import Endpoint, ModelplugError, Route
from modelplug.contract.types import Done, Request
from modelplug.testing import examples
from modelplug_gemini.stream import Parser
from modelplug_kit.testing import load_recording

RECORDED = Path(__file__).parent / "recorded"
STREAMS = sorted(p.name for p in RECORDED.glob("*.sse"))
ROUTE = Route(provider="gemini", model="gemini-2.5-flash", endpoint=Endpoint(type="gemini"))
REQUEST = Request(messages=[{"role": "user", "content": "hi"}])


def run(chunks: list[bytes]) -> Done:
    parser = Parser(ROUTE, REQUEST)
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    return parser.finish(100)


def comparable(done: Done) -> dict[str, Any]:
    """The Response without the ids generated for calls the API gave none."""
    data = done.response.model_dump(mode="json")
    for block in data["message"]["content"]:
        if block["type"] == "tool_use" and block["id"].startswith("gemini_call_"):
            block["id"] = "generated"
    return data


def whole(name: str) -> dict[str, Any] | str:
    try:
        return comparable(run([load_recording(RECORDED / name)]))
    except ModelplugError as exc:
        return type(exc).__name__ + exc.error_class.kind  # type: ignore[attr-defined]


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(STREAMS), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_any_split_gives_the_same_response(name: str, cuts: list[int]) -> None:
    data = load_recording(RECORDED / name)
    expected = whole(name)
    try:
        got: dict[str, Any] | str = comparable(run(split(data, cuts)))
    except ModelplugError as exc:
        got = type(exc).__name__ + exc.error_class.kind  # type: ignore[attr-defined]
    assert got == expected


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(STREAMS),
    position=st.integers(min_value=0),
    junk=st.binary(min_size=0, max_size=8),
    drop=st.integers(min_value=0, max_value=6),
)
def test_mutated_bytes_end_in_a_response_or_a_classified_error(
    name: str, position: int, junk: bytes, drop: int
) -> None:
    data = load_recording(RECORDED / name)
    at = position % (len(data) + 1)
    mutated = data[:at] + junk + data[at + drop :]
    try:
        done = run([mutated])
    except ModelplugError as exc:
        assert exc.error_class.kind in (
            "transient",
            "other",
            "rate_limit",
            "overloaded",
            "bad_request",
            "auth",
            "not_found",
            "quota",
            "context_overflow",
        )  # type: ignore[attr-defined]
    else:
        assert isinstance(done, Done)


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from(
    [
        "candidates",
        "content",
        "parts",
        "text",
        "thought",
        "thoughtSignature",
        "functionCall",
        "name",
        "args",
        "id",
        "finishReason",
        "usageMetadata",
        "promptFeedback",
        "blockReason",
        "groundingMetadata",
        "groundingChunks",
        "groundingSupports",
        "segment",
        "groundingChunkIndices",
        "web",
        "error",
        "citationMetadata",
        "citationSources",
    ]
)
SHAPED = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-2, max_value=5)
    | st.sampled_from(["STOP", "SAFETY", "x", ""]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(300), deadline=None)
@given(events=st.lists(SHAPED | ANY_JSON, min_size=1, max_size=4))
def test_events_of_any_shape_end_in_a_response_or_a_classified_error(events: list[Any]) -> None:
    data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    try:
        done = run([data])
    except ModelplugError as exc:
        assert exc.error_class.kind  # type: ignore[attr-defined]
    else:
        assert isinstance(done, Done)
