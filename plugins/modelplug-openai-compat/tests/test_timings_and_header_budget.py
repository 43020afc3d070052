"""Response.timings from llama.cpp's ``timings`` and a proxy's X-Corrallm-*-Ms headers;
Usage.key_budget from LiteLLM's x-litellm-key-* headers, which on_usage sees."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from modelplug import Done, KeyBudget, Timings, UsageEvent
from modelplug_kit import read_timings
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
# The three headers as a corrallm-style proxy (and the modelplug gateway) stamps them.
PROXY_TIMINGS = {
    "X-Corrallm-Queued-Ms": "9120",
    "X-Corrallm-Load-Ms": "0",
    "X-Corrallm-Upstream-Ttfb-Ms": "81.5",
}


def finished(client: Any, spec: str = "wire/m") -> Any:
    events = list(client.stream(spec, "hi"))
    assert isinstance(events[-1], Done)
    return events[-1].response


def test_llamacpp_timings_with_draft_counts(compat: Any, wire_server: WireServer) -> None:
    wire_server.add_file(RECORDINGS / "llamacpp_draft_timings.sse")
    response = finished(compat(server="llamacpp"))
    assert response.timings == Timings(
        cache_n=12,
        prompt_n=18,
        prompt_ms=80.0,
        predicted_n=42,
        predicted_ms=1000.0,
        draft_n=514,
        draft_n_accepted=365,
    )
    assert response.text == "Hello there."


def test_an_older_llamacpp_sends_no_cache_or_draft_counts(
    compat: Any, wire_server: WireServer
) -> None:
    wire_server.add_file(RECORDINGS / "llamacpp_reasoning_tools.sse")
    timings = finished(compat(server="llamacpp")).timings
    assert timings is not None
    assert (timings.prompt_n, timings.predicted_n, timings.cache_n, timings.draft_n) == (
        412,
        31,
        None,
        None,
    )


def test_proxy_timing_headers_join_the_model_servers(compat: Any, wire_server: WireServer) -> None:
    """A queue in front of the model is told apart from a slow answer."""
    wire_server.add_file(RECORDINGS / "llamacpp_draft_timings.sse", headers=PROXY_TIMINGS)
    timings = finished(compat()).timings
    assert timings is not None
    assert (timings.queued_ms, timings.load_ms, timings.upstream_ttfb_ms) == (9120.0, 0.0, 81.5)
    assert timings.predicted_ms == 1000.0


def test_an_endpoint_that_says_nothing_has_no_timings(compat: Any, wire_server: WireServer) -> None:
    wire_server.add_file(RECORDINGS / "openai_text.sse")
    assert finished(compat()).timings is None


def test_usage_carries_the_header_budget_and_on_usage_sees_it(
    compat: Any, wire_server: WireServer
) -> None:
    wire_server.add_file(
        RECORDINGS / "litellm_proxy.sse",
        headers={
            "x-litellm-response-cost": "0.000153",
            "x-litellm-key-spend": "1.25",
            "x-litellm-key-max-budget": "10.0",
        },
    )
    seen: list[UsageEvent] = []
    response = compat().complete("wire/claude-haiku", "hi", on_usage=seen.append)
    expected = KeyBudget(
        source="litellm-headers",
        spend=Decimal("1.25"),
        limit=Decimal("10.0"),
        remaining=Decimal("8.75"),
        currency="USD",
    )
    assert response.usage.key_budget == expected
    assert [event.usage.key_budget for event in seen] == [expected]
    assert response.server_cost is not None and response.server_cost.currency == "USD"


@given(
    st.dictionaries(
        st.sampled_from(["prompt_n", "prompt_ms", "cache_n", "draft_n", "predicted_ms"]),
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    ),
    st.dictionaries(st.sampled_from(list(PROXY_TIMINGS)), st.text(max_size=8)),
)
def test_any_timings_read_as_timings_or_none(body: dict[str, Any], headers: dict[str, str]) -> None:
    timings = read_timings(body, headers)
    assert timings is None or isinstance(timings, Timings)
