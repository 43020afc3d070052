"""The gateway's counters, rendered in Prometheus' text format for ``GET /metrics``.

Written by hand: a few dict increments per request cost less than a client library's
locks and label objects, and there is one event loop per worker. Each worker counts
its own calls (scrape each, or run one worker per replica)."""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from decimal import Decimal

__all__ = ["Histogram", "Metrics"]

# Seconds: a call's latency spans milliseconds (a local model's first token) to minutes.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# Seconds: the gateway's own part of a call, where a millisecond matters.
OVERHEAD_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1)


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
    def __init__(self) -> None:
        self.requests: defaultdict[tuple[str, int], int] = defaultdict(int)
        self.errors: defaultdict[str, int] = defaultdict(int)
        self.tokens: defaultdict[str, int] = defaultdict(int)
        self.cost = Decimal(0)
        self.latency: dict[str, Histogram] = {}
        self.overhead = Histogram(OVERHEAD_BUCKETS)
        self.open_streams = 0

    def request(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests[(endpoint, status)] += 1
        histogram = self.latency.get(endpoint)
        if histogram is None:
            histogram = self.latency[endpoint] = Histogram(LATENCY_BUCKETS)
        histogram.observe(seconds)

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
            "# HELP modelplug_gateway_requests_total Requests answered, by endpoint and status."
        )
        out.append("# TYPE modelplug_gateway_requests_total counter")
        for (endpoint, status), count in sorted(self.requests.items()):
            labels = f'endpoint="{endpoint}",status="{status}"'
            out.append(f"modelplug_gateway_requests_total{{{labels}}} {count}")
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
