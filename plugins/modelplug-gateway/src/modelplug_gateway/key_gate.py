"""The virtual-key gate: who is calling, may they call this model, is there room.

A key carries a check made under the server's secret: a key without it (a guess, a
typo, a flood of made-up keys) is refused after two HMACs, no store asked. A key with
it costs one keyed hash, a lookup (in this worker's memory for :data:`FRESH` seconds
after the store last said, so a revocation reaches every worker within a second; the
calls that find the copy stale at once share one lookup) and one reservation in the
shared counter store (modelplug-limits' store: SQLite for the workers of one machine,
Redis for replicas). The settlement is one more write, and none when there is nothing
to correct. A key over its rate or budget is refused at once: a gateway never holds a
caller's request waiting for room.

A budget reserves what the call may cost at most: its model's known price for the
request's input (estimated) and its output cap (``max_tokens``, else the model's, else
``[limits] default_max_tokens``), as modelplug-limits' own budgets do; the settlement
puts the real cost in its place. So a budget admits every call that fits it from a key's
first call on, however many arrive at once. Only a model whose price nobody knows
(a provider that reports each call's cost itself) is learned from its first call, which
runs alone across the workers until then.

An unknown key with a valid check does the same work as a known one (the hash is
compared against a dummy digest), so timing does not tell which keys exist. The key
itself is never logged, never put in a message or a metric; only the key's name is.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import math
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import parse_qsl

from modelplug import ModelplugError

from .auth import Refusal, Ticket, presented_key, raw_key_headers
from .keys.record import PREFIX, KeyRecord
from .route_cache import RouteCache

if TYPE_CHECKING:
    from modelplug import Client, Cost, EmbedRequest, Request, Route, Usage
    from modelplug_kit import Charge, CounterStore, Setting

    from .keys import Hasher, KeyStore

__all__ = ["FRESH", "KEEP", "KeyTicket", "MaxCost", "VirtualKeyGate"]

log = logging.getLogger("modelplug.gateway")

FRESH = 0.5  # seconds a verified key is trusted without asking the store again
KEEP = 300.0  # seconds a verified key is still honoured while the store is down (open)
WINDOW = 60.0  # rpm and tpm count per minute
WINDOW_GRACE = 1.0
PERIOD_GRACE = 60.0
MAX_ESTIMATES = 10_000
MAX_MISSING = 10_000
ESTIMATE_TTL = 30 * 86400.0  # seconds a learned cost per call is kept
PRICING_TTL = 60.0  # a first call that never settles frees its model after this
QUERY_KEY_NAMES = frozenset({"key", "api_key", "api-key", "apikey", "token", "access_token"})
STORE_PROBLEMS = (ModelplugError, sqlite3.Error, OSError, TimeoutError)
INVALID = "the key presented is not valid for this gateway"


class VirtualKeyGate:
    """Admit callers holding a virtual key (see :mod:`modelplug_gateway.keys`).

    :param keys: where the keys are.
    :param hasher: the keyed hash they are stored under.
    :param counters: modelplug-limits' counter store the rates and budgets count in.
    :param fail: ``[redis] fail``: ``"open"`` honours keys this worker verified in the
        last :data:`KEEP` seconds while the key store is down; ``"closed"`` refuses
        with 503.
    :param clock: wall-clock seconds (windows and budget periods).
    :param monotonic: seconds for how long a store's answer is trusted.
    :param client: the Client the calls run through: its prices and routes give what
        a call may cost at most (None: a budget learns each model's cost from its first
        call, as for a model of unknown price).
    """

    def __init__(
        self,
        keys: KeyStore,
        hasher: Hasher,
        counters: CounterStore,
        *,
        fail: str = "open",
        fresh: float = FRESH,
        keep: float = KEEP,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        client: Client | None = None,
    ) -> None:
        self.keys = keys
        self.hasher = hasher
        self.counters = counters
        self.fail = fail
        self.fresh = fresh
        self.keep = keep
        self.clock = clock
        self.monotonic = monotonic
        self._verified: dict[str, tuple[KeyRecord, float]] = {}  # digest -> (record, when)
        # Well-formed keys no store had, for FRESH seconds (a key made after such a miss
        # works within a second), and the store lookups under way for known keys.
        self._missing: dict[str, float] = {}  # digest -> when
        self._pending: dict[str, asyncio.Future[KeyRecord | None]] = {}
        # (key name, model) -> (tokens, nano-USD) of the last call: what the next reserves.
        self._estimates: dict[tuple[str, str], tuple[int, int]] = {}
        self._degraded = False
        self.counts: dict[tuple[str, str], int] = {}  # (key name, outcome) -> requests
        self.spent: dict[str, Decimal] = {}  # key name -> USD settled by this worker
        self.degraded_total = 0
        self.client = client
        self._routes: RouteCache | None = None
        self._default_max_tokens: int | None = None

    @classmethod
    def for_client(cls, client: Client) -> VirtualKeyGate:
        """The gate for the operator's settings: the key store and counter store they
        choose, ``[redis] fail``."""
        from modelplug_limits import counter_store_for

        from .keys import hasher_for, open_store

        counters = counter_store_for(client)
        fail = client.settings.plugin_options("redis", project=False).get("fail", "open")
        return cls(open_store(client), hasher_for(client), counters, fail=str(fail), client=client)

    @classmethod
    def from_settings(cls, client: Client, options: object = None) -> VirtualKeyGate:
        """What the app calls for ``[gateway] auth = "keys"`` (the options are read by
        :meth:`for_client` itself: key_secret_env, ``[redis]``, ``[limits] store``)."""
        return cls.for_client(client)

    # -- admission -------------------------------------------------------------------

    def precheck(self, headers: Iterable[tuple[bytes, bytes]], query: bytes) -> None:
        """What can be refused before the body is read (the app calls this first, with
        the raw headers): a key in the URL, no key, a key without the secret's check. A
        caller that cannot be admitted never gets its body read or parsed (up to
        ``max_request_bytes`` of JSON per request otherwise)."""
        self._presented(raw_key_headers(headers), query)

    def _presented(self, headers: Mapping[str, str], query: bytes) -> str:
        """The key presented, when it may be one of this gateway's; else Refusal."""
        if query and _key_in_query(query):
            self._count("-", "key_in_url")
            raise Refusal(
                "a key in the URL is refused (URLs end up in logs): send it as "
                "'Authorization: Bearer KEY' or 'x-api-key: KEY'"
            )
        key = presented_key(headers)
        if key is None:
            self._count("-", "no_key")
            raise Refusal("no key: send it as 'Authorization: Bearer KEY' or 'x-api-key: KEY'")
        if not self.hasher.checks(key):
            # Not made under this gateway's secret (a guess, a typo, a flood of made-up
            # keys): refused with no store asked, so such a flood costs two HMACs each.
            self._count("-", "invalid")
            raise Refusal(INVALID)
        return key

    async def admit(
        self,
        headers: Mapping[str, str],
        query: bytes,
        model: str,
        request: Request | EmbedRequest | None = None,
    ) -> KeyTicket:
        """Admit a call of ``model`` or raise :class:`Refusal`. ``request``: the call
        (a budget reserves what it may cost at most; without it, what the last call of
        the key to the model cost)."""
        record = await self.identify(headers, query)
        now = self.clock()
        if record.models and model not in record.models:
            self._count(record.name, "forbidden_model")
            raise Refusal(
                f"key {record.name!r} may not call model {model[:100]!r}; it may call: "
                + ", ".join(record.models),
                status=403,
                kind="permission_error",
                key_name=record.name,
            )
        most = None
        if record.budget is not None:
            most = self.max_cost(model, request)
            if most is None and (record.name, model) not in self._estimates:
                await self._shared_estimate(record.name, model)
        ticket = KeyTicket(self, record, model, now, most)
        if ticket.charges:
            await self._reserve(ticket)
        self._count(record.name, "admitted")
        return ticket

    async def identify(self, headers: Mapping[str, str], query: bytes) -> KeyRecord:
        """The record of the key presented, when it is one of this gateway's, in use:
        else :class:`Refusal` (no key, an unknown, revoked or expired one)."""
        key = self._presented(headers, query)
        digest = self.hasher.digest(key)
        record = await self._lookup(digest)
        # The same comparison whether or not the key exists.
        if not hmac.compare_digest(digest, record.hash if record else self.hasher.dummy):
            record = None
        if record is None:
            self._count("-", "invalid")
            raise Refusal(INVALID)
        now = self.clock()
        if record.revoked:
            self._count(record.name, "revoked")
            raise Refusal(f"key {record.name!r} has been revoked", key_name=record.name)
        if record.expires is not None and now >= record.expires:
            self._count(record.name, "expired")
            raise Refusal(f"key {record.name!r} has expired", key_name=record.name)
        return record

    async def budget_spent(self, record: KeyRecord) -> tuple[Decimal, str | None]:
        """What ``record``'s key has spent in its budget's current period (calls in
        flight count what they reserved) and when that period ends (ISO 8601, UTC; None
        for a budget that never resets). Only a key with a budget counts its spend."""
        from modelplug_kit import from_nano, period_window

        period, _, resets = period_window(record.period, self.clock())
        found = await self.counters.read([spend_key(record.name, period)])
        counted = found[0] if found else None
        return (from_nano(counted[0]) if counted is not None else Decimal(0)), resets

    async def _lookup(self, digest: str) -> KeyRecord | None:
        now = self.monotonic()
        known = self._verified.get(digest)
        if known is not None and now - known[1] < self.fresh:
            return known[0]
        if known is None:
            missed = self._missing.get(digest)
            if missed is not None and now - missed < self.fresh:
                return None  # a well-formed key no store has (a rotated one, say)
            return await self._fetch(digest, known, now)
        # Every call of a busy key finds its copy stale at once: one asks the store,
        # the others wait for that answer (shielded: one caller leaving stops no one).
        pending = self._pending.get(digest)
        if pending is None:
            pending = asyncio.ensure_future(self._fetch(digest, known, now))
            self._pending[digest] = pending
            pending.add_done_callback(partial(self._fetched, digest))
        return await asyncio.shield(pending)

    def _fetched(self, digest: str, pending: asyncio.Future[KeyRecord | None]) -> None:
        self._pending.pop(digest, None)
        if not pending.cancelled():
            pending.exception()  # retrieved: the waiters, if any are left, raise it

    async def _fetch(
        self, digest: str, known: tuple[KeyRecord, float] | None, now: float
    ) -> KeyRecord | None:
        try:
            record = await self.keys.find(digest)
        except STORE_PROBLEMS as exc:
            if self.fail == "open" and known is not None and now - known[1] < self.keep:
                self._went_degraded(f"the key store is unavailable ({type(exc).__name__})")
                return known[0]
            raise Refusal(
                "the gateway's key store is unavailable; try again shortly",
                status=503,
                kind="overloaded_error",
                retry_after=1.0,
            ) from None
        self._back()
        if record is None:
            self._verified.pop(digest, None)
            if len(self._missing) >= MAX_MISSING:
                self._missing.clear()  # digests callers sent: never let this grow unbounded
            self._missing[digest] = now
        else:
            self._verified[digest] = (record, now)
            self._missing.pop(digest, None)
        return record

    async def _shared_estimate(self, name: str, model: str) -> None:
        """What another worker learned a call of ``name`` to ``model`` costs (one read,
        on this worker's first such call only)."""
        try:
            found = await self.counters.read([estimate_key(name, model, "spend")])
        except STORE_PROBLEMS:
            return
        if found and found[0] is not None:
            self._remember(name, model, None, found[0][0])

    def max_cost(self, model: str, request: Request | EmbedRequest | None) -> MaxCost | None:
        """What a call of ``request`` to ``model`` may cost at most, in nano-USD: the
        model's known price for its input's estimate and its output cap. None when that
        cannot be known (no request or client, a model that does not resolve, a price
        unknown or not in USD): the learned estimate applies then."""
        if request is None or self.client is None:
            return None
        from modelplug import EmbedRequest, Usage
        from modelplug_kit import to_nano

        try:
            route = self.routes().get(model)
        except ModelplugError:
            return None  # the call fails before it costs anything: the app says why
        if isinstance(request, EmbedRequest):
            from modelplug import estimate_tokens

            sent, cap = estimate_tokens(sum(len(text) + 8 for text in request.inputs)), 0
        else:
            from modelplug_limits import input_tokens

            sent = input_tokens(request)
            cap = request.max_tokens or route.info.max_output_tokens or self.default_max_tokens()
        cost = self.client.price(route, Usage(input=sent, output=cap))
        if cost is None or cost.currency != "USD":
            return None
        return MaxCost(max(1, to_nano(cost.amount, up=True)), cap)

    def routes(self) -> RouteCache:
        if self._routes is None:
            assert self.client is not None
            self._routes = RouteCache(self.client)
        return self._routes

    def default_max_tokens(self) -> int:
        """``[limits] default_max_tokens``: the output a call that sets no cap may take."""
        if self._default_max_tokens is None:
            from modelplug_limits import default_max_tokens

            assert self.client is not None
            self._default_max_tokens = default_max_tokens(self.client)
        return self._default_max_tokens

    def _remember(self, name: str, model: str, tokens: int | None, spend: int | None) -> None:
        if len(self._estimates) >= MAX_ESTIMATES:
            self._estimates.clear()  # models named by callers: never let this grow unbounded
        before = self._estimates.get((name, model), (0, 0))
        self._estimates[(name, model)] = (
            before[0] if tokens is None else tokens,
            before[1] if spend is None else spend,
        )

    async def _reserve(self, ticket: KeyTicket) -> None:
        try:
            outcome = await self.counters.reserve(ticket.charges)
        except STORE_PROBLEMS as exc:  # a store that fails closed
            self._count(ticket.key_name or "-", "store_down")
            raise Refusal(
                "the gateway's limits store is unavailable; try again shortly",
                status=503,
                kind="overloaded_error",
                retry_after=1.0,
                key_name=ticket.key_name,
            ) from exc
        if outcome.degraded:
            self._went_degraded(outcome.degraded)
        if outcome.refused is None:
            return
        index = outcome.refused
        what = ticket.what[index]
        record = ticket.record
        wait = None if outcome.retry_in == math.inf else max(1.0, math.ceil(outcome.retry_in))
        if what == "pricing":
            self._count(record.name, "pricing")
            raise Refusal(
                f"key {record.name!r} has a budget and its first call to this model is being "
                "priced; retry in 1 s",
                status=429,
                kind="rate_limit_error",
                retry_after=1.0,
                key_name=record.name,
            )
        if what == "spend":
            self._count(record.name, "over_budget")
            raise Refusal(
                budget_refusal(ticket, outcome.value, ticket.charges[index].amount),
                status=429,
                kind="rate_limit_error",
                retry_after=wait if ticket.resets and wait is not None else None,
                key_name=record.name,
            )
        self._count(record.name, "rate_limited")
        limit = f"{record.rpm} requests" if what == "requests" else f"{record.tpm} tokens"
        wait = wait or 1.0
        raise Refusal(
            f"key {record.name!r} is over its rate of {limit} per minute; retry in {wait:.0f} s",
            status=429,
            kind="rate_limit_error",
            retry_after=wait,
            key_name=record.name,
        )

    # -- settling --------------------------------------------------------------------

    async def settle(
        self, ticket: KeyTicket, route: Route | None, usage: Usage | None, cost: Cost | None
    ) -> None:
        from modelplug_kit import Charge, Setting, to_nano

        adjust: list[Charge] = []
        tokens = None if usage is None else usage.total_input + usage.output
        spent = None if cost is None or cost.currency != "USD" else to_nano(cost.amount)
        name = ticket.record.name
        if spent is not None:
            self.spent[name] = self.spent.get(name, Decimal(0)) + cost.amount  # type: ignore[union-attr]
        if route is None and usage is None:
            tokens = spent = 0  # never reached a provider: it cost nothing
        for charge, what in zip(ticket.charges, ticket.what, strict=True):
            real = {"tokens": tokens, "spend": spent, "pricing": 0}.get(what)
            if real is not None and real != charge.amount:
                adjust.append(Charge(charge.key, real - charge.amount))
        learned: list[Setting] = []
        if route is not None and (tokens is not None or spent is not None):
            known = self._estimates.get((name, ticket.model))
            self._remember(name, ticket.model, tokens, spent)
            if (
                spent is not None
                and ticket.record.budget is not None
                and ticket.most is None
                and (known is None or known[1] != spent)
            ):
                # A model of unknown price: every worker's first call to it reserves
                # what this one cost (a priced one reserves what each call may cost).
                which = estimate_key(name, ticket.model, "spend")
                # Read back, never a server's room: the limits store keeps knowing that
                # no room exists (the policy's reservation for the route costs no trip).
                learned.append(Setting(which, spent, ESTIMATE_TTL, room=False))
        if not adjust and not learned:
            return
        try:
            said = await self.counters.settle(adjust, learned)
        except STORE_PROBLEMS as exc:
            said = f"a settlement was lost ({type(exc).__name__})"
        if said:
            self._went_degraded(said)

    def estimate(self, name: str, model: str) -> tuple[int, int] | None:
        """What a call of key ``name`` to ``model`` reserves: the last such call's
        tokens and cost (at least 1 each: a budget spent to the last unit refuses), or
        None before any such call was priced."""
        found = self._estimates.get((name, model))
        return None if found is None else (max(found[0], 1), max(found[1], 1))

    # -- reporting -------------------------------------------------------------------

    def _count(self, name: str, outcome: str) -> None:
        key = (name, outcome)
        self.counts[key] = self.counts.get(key, 0) + 1

    def _went_degraded(self, message: str) -> None:
        self.degraded_total += 1
        if not self._degraded:
            self._degraded = True
            log.warning("modelplug gateway: going on degraded: %s", message)

    def _back(self) -> None:
        if self._degraded:
            self._degraded = False
            log.warning("modelplug gateway: the key store answers again")

    def metrics_lines(self) -> list[str]:
        """Prometheus text lines for this worker's key counters (labelled by key name,
        which the operator chose: bounded; a wrong key is counted under ``-``)."""
        lines = [
            "# TYPE modelplug_gateway_key_requests_total counter",
            *(
                f'modelplug_gateway_key_requests_total{{key="{_label(n)}",outcome="{o}"}} {v}'
                for (n, o), v in sorted(self.counts.items())
            ),
            "# TYPE modelplug_gateway_key_spend_usd_total counter",
            *(
                f'modelplug_gateway_key_spend_usd_total{{key="{_label(n)}"}} {float(v):.9g}'
                for n, v in sorted(self.spent.items())
            ),
            "# TYPE modelplug_gateway_store_degraded_total counter",
            f"modelplug_gateway_store_degraded_total {self.degraded_total}",
        ]
        return lines

    def __repr__(self) -> str:
        return f"VirtualKeyGate(keys={self.keys!r}, fail={self.fail!r})"


class MaxCost(NamedTuple):
    """What a call may cost at most (nano-USD), and the output cap it was priced at."""

    spend: int
    max_tokens: int


class KeyTicket(Ticket):
    """An admitted call of one key: the charges reserved for it, settled once.

    :param most: what the call may cost at most (reserved against the budget), or None
        to reserve what the key's last call to the model cost.
    """

    __slots__ = ("charges", "gate", "model", "most", "record", "resets", "settled", "what")

    def __init__(
        self,
        gate: VirtualKeyGate,
        record: KeyRecord,
        model: str,
        now: float,
        most: MaxCost | None = None,
    ) -> None:
        from modelplug_kit import Charge

        super().__init__(record.name)
        self.gate = gate
        self.record = record
        self.model = model
        self.most = most
        self.settled = False
        self.resets: str | None = None
        self.charges: list[Charge] = []
        self.what: list[str] = []
        base = f"gwkey:{record.name}"
        if record.rpm is not None or record.tpm is not None:
            window = int(now // WINDOW)
            left = (window + 1) * WINDOW - now
            if record.rpm is not None:
                self._add(
                    Charge(f"{base}:requests:{window}", 1, record.rpm, left, grace=WINDOW_GRACE),
                    "requests",
                )
            if record.tpm is not None:
                tokens = (gate.estimate(record.name, model) or (1, 1))[0]
                self._add(
                    Charge(f"{base}:tokens:{window}", tokens, record.tpm, left, grace=WINDOW_GRACE),
                    "tokens",
                )
        if record.budget is not None:
            from modelplug_kit import period_window, to_nano

            period, left, self.resets = period_window(record.period, now)
            estimate = None if most is not None else gate.estimate(record.name, model)
            if most is None and estimate is None:
                # Nothing says what this model costs (its price is unknown): one call at a
                # time, across every worker, until one has been priced (so a burst cannot
                # overrun the budget).
                self._add(Charge(f"{base}:pricing:{_short(model)}", 1, 1, PRICING_TTL), "pricing")
            spend = most.spend if most is not None else (estimate or (1, 1))[1]
            charge = Charge(
                spend_key(record.name, period),
                spend,
                to_nano(record.budget),
                left,
                refresh=record.period == "total",
                grace=PERIOD_GRACE,
            )
            self._add(charge, "spend")

    def _add(self, charge: Charge, what: str) -> None:
        self.charges.append(charge)
        self.what.append(what)

    async def settle(self, route: Route | None, usage: Usage | None, cost: Cost | None) -> None:
        if self.settled:
            return
        self.settled = True
        await self.gate.settle(self, route, usage, cost)


def budget_refusal(ticket: KeyTicket, spent: int, needs: int) -> str:
    """Why a key's budget refuses this call: what is spent and what the call may cost
    (the call does not fit: the key need not be over its budget yet)."""
    from modelplug_kit import PERIOD_WORDS, from_nano, to_nano

    record = ticket.record
    period = PERIOD_WORDS[record.period]
    budget = f"key {record.name!r} has a budget of {record.budget} USD {period}"
    most = ticket.most
    if most is not None:
        may = (
            f"this call to {ticket.model[:100]!r} may cost up to {from_nano(needs):f} USD "
            f"(its output cap of {most.max_tokens} tokens at the model's price)"
        )
    else:
        may = f"this call is reserved at {from_nano(needs):f} USD (what its last one cost)"
    if record.budget is not None and needs > to_nano(record.budget):
        lower = ": lower max_tokens" if most is not None else ""
        return f"{budget}, and {may}, more than the whole budget{lower}"
    when = f"it resets at {ticket.resets}" if ticket.resets else "it does not reset"
    counted = f"{from_nano(spent):f} USD spent or held for calls under way"
    return f"{budget}, {counted}, and {may}: it does not fit; {when}"


def estimate_key(name: str, model: str, what: str) -> str:
    return f"gwkey:{name}:estimate:{what}:{_short(model)}"


def _short(model: str) -> str:
    # A model is named by the caller: a counter's name holds a digest of it, not the text.
    return hashlib.sha256(model.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def spend_key(name: str, period: str) -> str:
    """The counter a key's spend in ``period`` (a period id) counts in."""
    return f"gwkey:{name}:spend:{period}"


def _key_in_query(query: bytes) -> bool:
    text = query.decode("latin-1")
    if PREFIX in text:
        return True
    return any(
        name.lower() in QUERY_KEY_NAMES for name, _ in parse_qsl(text, keep_blank_values=True)
    )


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
