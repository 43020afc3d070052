"""/metrics labels have bounded values: the route is an allow-listed name, or the
provider/model that answered (capped, the rest as "other"), never free text from the
caller; the status is its class."""

from __future__ import annotations

from typing import Any

import httpx2
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply
from modelplug_gateway.metrics import Metrics, status_class

HELLO = [{"role": "user", "content": "hello"}]


def _requests(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("modelplug_gateway_requests")]


def test_status_classes() -> None:
    assert [status_class(s) for s in (200, 201, 400, 404, 429, 499, 500, 503)] == [
        "2xx",
        "2xx",
        "4xx",
        "4xx",
        "4xx",
        "4xx",
        "5xx",
        "5xx",
    ]


def test_routes_past_the_limit_are_counted_as_other() -> None:
    metrics = Metrics(route_limit=3)
    for n in range(10):
        metrics.request("chat", 200, 0.01, metrics.route(f"up/m{n}", f"up/m{n}"))
    metrics.request("chat", 200, 0.01, metrics.route("up/m1", "up/m1"))  # a known one stays
    lines = _requests(metrics.render())
    assert len(lines) == 4
    assert (
        'modelplug_gateway_requests_total{endpoint="chat",route="other",status_class="2xx"} 7'
        in lines
    )
    assert (
        'modelplug_gateway_requests_total{endpoint="chat",route="up/m1",status_class="2xx"} 2'
        in lines
    )


def test_allow_list_names_the_route_and_nothing_else_does() -> None:
    metrics = Metrics(frozenset({"fast", "smart"}))
    assert metrics.route("fast", "up/m") == "fast"
    assert metrics.route("made-up", "up/made-up") == "none"
    assert metrics.route(None, None) == "none"


def test_a_label_value_is_escaped() -> None:
    metrics = Metrics()
    metrics.request("chat", 500, 0.01, metrics.route(None, 'up/a"b\\c'))
    assert 'route="up/a\\"b\\\\c"' in metrics.render()


def test_metrics_count_by_answering_route_and_status_class(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel([reply("a"), reply("b")])
    app = make_gateway(fake)
    with serve(app) as url:
        for model in ("fake/m", "fake/m", "nope/x"):
            httpx2.post(url + "/v1/chat/completions", json={"model": model, "messages": HELLO})
        httpx2.post(
            url + "/v1/chat/completions", content=b"{", headers={"content-type": "application/json"}
        )
        text = httpx2.get(url + "/metrics").text
    assert sorted(_requests(text)) == [
        'modelplug_gateway_requests_total{endpoint="chat",route="fake/m",status_class="2xx"} 2',
        'modelplug_gateway_requests_total{endpoint="chat",route="none",status_class="4xx"} 2',
    ]


def test_metrics_with_an_allow_list_use_its_names(make_gateway: Any, serve: Any) -> None:
    fake = FakeModel([reply("a")])
    app = make_gateway(fake, models=["fake/m"])
    with serve(app) as url:
        for model in ("fake/m", "fake/other"):
            httpx2.post(url + "/v1/chat/completions", json={"model": model, "messages": HELLO})
        text = httpx2.get(url + "/metrics").text
    assert sorted(_requests(text)) == [
        'modelplug_gateway_requests_total{endpoint="chat",route="fake/m",status_class="2xx"} 1',
        'modelplug_gateway_requests_total{endpoint="chat",route="none",status_class="4xx"} 1',
    ]


def test_unserved_paths_are_counted_by_method_and_a_bounded_path(
    make_gateway: Any, serve: Any
) -> None:
    from modelplug_gateway.metrics import PATH_LIMIT

    app = make_gateway()
    with serve(app) as url:
        for n in range(PATH_LIMIT + 10):  # a scanner's paths: more than are named
            httpx2.get(f"{url}/scan/{n}")
        httpx2.post(url + "/v1/completions", json={"model": "echo", "prompt": "hi"})
        httpx2.post(url + "/v1/completions", json={"model": "echo", "prompt": "again"})
        httpx2.head(url + "/api/tags")  # (HEAD / is served: the probe)
        httpx2.get(url + "/v1/chat/completions")
        httpx2.get(url + "/v1/models")
        text = httpx2.get(url + "/metrics").text
    unserved = [line for line in text.splitlines() if line.startswith("modelplug_gateway_unserved")]
    # The API paths are named even after a scan filled the other names.
    assert 'modelplug_gateway_unserved_requests_total{method="POST",path="/v1/completions"} 2' in (
        unserved
    )
    assert 'modelplug_gateway_unserved_requests_total{method="HEAD",path="/api/tags"} 1' in unserved
    assert (
        'modelplug_gateway_unserved_requests_total{method="GET",path="/v1/chat/completions"} 1'
        in unserved
    )
    assert 'modelplug_gateway_unserved_requests_total{method="GET",path="other"} 10' in unserved
    assert len(unserved) == PATH_LIMIT + 4
    assert sorted(_requests(text)) == [
        'modelplug_gateway_requests_total{endpoint="models",route="none",status_class="2xx"} 1',
        f'modelplug_gateway_requests_total{{endpoint="unserved",route="none",status_class="4xx"}} '
        f"{PATH_LIMIT + 14}",
    ]


def test_an_unserved_label_is_never_free_text() -> None:
    from modelplug_gateway.metrics import PATH_LIMIT

    metrics = Metrics()
    metrics.unserved("BREW", "/coffee")
    metrics.unserved("GET", "/" + "x" * 500)
    metrics.unserved("GET", "/a\x00b")
    for n in range(PATH_LIMIT * 3):
        metrics.unserved("GET", f"/p{n}")
    labels = set(metrics.unserved_paths)
    assert ("other", "/coffee") in labels
    assert {path for _, path in labels} <= {"/coffee", "other"} | {f"/p{n}" for n in range(50)}
    assert len({path for _, path in labels}) == PATH_LIMIT + 1
