"""The gateway's counters, rendered in Prometheus' text format for ``GET /metrics``.

Written by hand: a few dict increments per request cost less than a client library's
locks and label objects, and there is one event loop per worker. Each worker counts
its own calls (scrape each, or run one worker per replica).

Labels have bounded values only: the endpoint (a fixed set), the status class (2xx, 4xx,
5xx) and the route, which is a name from the ``[gateway] models`` allow-list when there
is one, else the provider/model that answered, the first ``ROUTE_LIMIT`` distinct ones
kept and the rest counted as ``route="other"``: a caller naming models at random cannot
grow the scrape without bound.

Requests to paths the gateway does not serve count under ``endpoint="unserved"`` and in
``modelplug_gateway_unserved_requests_total{method,path}``, where the path is one of the
LLM APIs' own (always named, so a scanner cannot crowd them out), else one of the first
``PATH_LIMIT`` other paths seen, else ``"other"``; the method is a standard one or
``"other"``."""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from decimal import Decimal

__all__ = [
    "API_PATHS",
    "NO_ROUTE",
    "OTHER_ROUTE",
    "PATH_LIMIT",
    "ROUTE_LIMIT",
    "Histogram",
    "Metrics",
    "status_class",
]

# Seconds: a call's latency spans milliseconds (a local model's first token) to minutes.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# Seconds: the gateway's own part of a call, where a millisecond matters.
OVERHEAD_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1)
# Distinct route label values kept when no allow-list bounds them.
ROUTE_LIMIT = 100
OTHER_ROUTE = "other"
# A call refused before any route was chosen (bad body, unknown model, refused key).
NO_ROUTE = "none"
_CLASSES = {1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}
# Paths of the LLM APIs callers' tools may ask for: named whenever asked (with and
# without /v1, as the SDKs' base URLs go).
API_PATHS = frozenset(
    prefix + path
    for prefix in ("", "/v1")
    for path in (
        "/responses",
        "/completions",
        "/chat/completions",
        "/messages",
        "/messages/count_tokens",
        "/messages/batches",
        "/embeddings",
        "/models",
        "/moderations",
        "/audio/transcriptions",
        "/audio/translations",
        "/audio/speech",
        "/images/generations",
        "/files",
        "/batches",
        "/rerank",
    )
) | {"/", "/api/chat", "/api/generate", "/api/tags", "/api/show", "/api/embed", "/v1beta/models"}
# Other distinct paths named before they count as "other"; longer ones are never named.
PATH_LIMIT = 20
PATH_LENGTH = 100
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def status_class(status: int) -> str:
    """``"2xx"`` for 200 (499, the caller gone, is a ``"4xx"``)."""
    return _CLASSES.get(status // 100, "5xx")


class Histogram:
    __slots__ = ("bounds", "count", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value
        self.count += 1

    def render(self, name: str, labels: str, out: list[str]) -> None:
        running = 0
        sep = "," if labels else ""
        for bound, count in zip(self.bounds, self.counts, strict=False):
            running += count
            out.append(f'{name}_bucket{{{labels}{sep}le="{bound}"}} {running}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.count}')
        suffix = f"{{{labels}}}" if labels else ""
        out.append(f"{name}_sum{suffix} {self.total}")
        out.append(f"{name}_count{suffix} {self.count}")


class Metrics:
    """The counters. ``allowed``: the allow-listed model names (the route label is one
    of them, or ``"none"``); None: routes are whatever answered, capped at
    ``route_limit`` distinct values."""

    def __init__(
        self, allowed: frozenset[str] | None = None, route_limit: int = ROUTE_LIMIT
    ) -> None:
        #: (endpoint, route, status class) -> count.
        self.requests: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        self.allowed = allowed
        self.route_limit = route_limit
        self._routes: set[str] = set()
        self.errors: defaultdict[str, int] = defaultdict(int)
        self.tokens: defaultdict[str, int] = defaultdict(int)
        self.cost = Decimal(0)
        self.latency: dict[str, Histogram] = {}
        self.overhead = Histogram(OVERHEAD_BUCKETS)
        self.open_streams = 0
        #: (method, path) of requests to paths not served -> count.
        self.unserved_paths: defaultdict[tuple[str, str], int] = defaultdict(int)
        self._paths: set[str] = set()

    def route(self, asked: str | None, answered: str | None) -> str:
        """The route label for a call: ``asked`` (the caller's model) when an allow-list
        holds it, else ``answered`` (the provider/model that answered or failed) while
        fewer than ``route_limit`` distinct values were seen, else ``"other"``."""
        if self.allowed is not None:
            return asked if asked is not None and asked in self.allowed else NO_ROUTE
        if answered is None:
            return NO_ROUTE
        routes = self._routes
        if answered in routes:
            return answered
        if len(routes) < self.route_limit:
            routes.add(answered)
            return answered
        return OTHER_ROUTE

    def request(self, endpoint: str, status: int, seconds: float, route: str = NO_ROUTE) -> None:
        """Count one answered request (``route``: a label from :meth:`route`)."""
        self.requests[(endpoint, route, _CLASSES.get(status // 100, "5xx"))] += 1
        histogram = self.latency.get(endpoint)
        if histogram is None:
            histogram = self.latency[endpoint] = Histogram(LATENCY_BUCKETS)
        histogram.observe(seconds)

    def unserved(self, method: str, path: str) -> None:
        """Count a request to a path the gateway does not serve (or not by ``method``)."""
        label = self._path_label(path)
        self.unserved_paths[(method if method in METHODS else "other", label)] += 1

    def _path_label(self, path: str) -> str:
        if path in API_PATHS:
            return path
        if path in self._paths:
            return path
        if len(self._paths) < PATH_LIMIT and len(path) <= PATH_LENGTH and path.isprintable():
            self._paths.add(path)
            return path
        return OTHER_ROUTE

    def error(self, kind: str) -> None:
        self.errors[kind] += 1

    def usage(self, input_tokens: int, output_tokens: int, cost: Decimal | None) -> None:
        self.tokens["input"] += input_tokens
        self.tokens["output"] += output_tokens
        if cost is not None:
            self.cost += cost

    def render(self) -> str:
        out: list[str] = []
        out.append(
            "# HELP modelplug_gateway_requests_total Requests answered, by endpoint, route "
            "and status class."
        )
        out.append("# TYPE modelplug_gateway_requests_total counter")
        for (endpoint, route, klass), count in sorted(self.requests.items()):
            labels = f'endpoint="{endpoint}",route="{_escape(route)}",status_class="{klass}"'
            out.append(f"modelplug_gateway_requests_total{{{labels}}} {count}")
        out.append(
            "# HELP modelplug_gateway_unserved_requests_total Requests to paths the gateway "
            "does not serve, by method and path."
        )
        out.append("# TYPE modelplug_gateway_unserved_requests_total counter")
        for (method, path), count in sorted(self.unserved_paths.items()):
            labels = f'method="{method}",path="{_escape(path)}"'
            out.append(f"modelplug_gateway_unserved_requests_total{{{labels}}} {count}")
        out.append("# HELP modelplug_gateway_errors_total Failed calls, by error kind.")
        out.append("# TYPE modelplug_gateway_errors_total counter")
        for kind, count in sorted(self.errors.items()):
            out.append(f'modelplug_gateway_errors_total{{kind="{kind}"}} {count}')
        out.append("# HELP modelplug_gateway_tokens_total Tokens, by direction.")
        out.append("# TYPE modelplug_gateway_tokens_total counter")
        for direction in ("input", "output"):
            count = self.tokens[direction]
            out.append(f'modelplug_gateway_tokens_total{{direction="{direction}"}} {count}')
        out.append("# HELP modelplug_gateway_cost_usd_total Cost of the calls, where known.")
        out.append("# TYPE modelplug_gateway_cost_usd_total counter")
        out.append(f"modelplug_gateway_cost_usd_total {self.cost}")
        out.append("# HELP modelplug_gateway_request_seconds Time from request to last byte.")
        out.append("# TYPE modelplug_gateway_request_seconds histogram")
        for endpoint, histogram in sorted(self.latency.items()):
            histogram.render("modelplug_gateway_request_seconds", f'endpoint="{endpoint}"', out)
        out.append("# HELP modelplug_gateway_overhead_seconds The gateway's own time per call.")
        out.append("# TYPE modelplug_gateway_overhead_seconds histogram")
        self.overhead.render("modelplug_gateway_overhead_seconds", "", out)
        out.append("# HELP modelplug_gateway_open_streams Streams being answered now.")
        out.append("# TYPE modelplug_gateway_open_streams gauge")
        out.append(f"modelplug_gateway_open_streams {self.open_streams}")
        return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    """A label value as Prometheus' text format writes it."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value
