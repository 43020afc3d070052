"""Each deployment's state, kept in a counter store every process shares.

Five counters a deployment, in the kit's :class:`~modelplug_kit.CounterStore` (the
SQLite file on one machine, Redis for several), so four gateway workers balance as one:

- ``busy``: calls in flight (taken at the start, given back at the end);
- ``rpm`` and ``tpm``: requests and estimated tokens in the current minute's window;
- ``latency``: the moving average of the time to the first event, in milliseconds;
- ``cool``: present while the deployment cools down after a failure;
- ``seen``: present for ``health_interval`` after a call or a probe took the
  deployment (only with ``health_interval``): absent, the deployment is idle;
- ``probe``: the last health probe's outcome (1 passed, 0 failed), kept a day.

Picking reads all of them in one ``read`` (one round trip), and taking a deployment is
one ``reserve`` of its ``busy``, ``rpm`` and ``tpm`` counters, all or nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modelplug_kit import Charge, Setting

if TYPE_CHECKING:
    from modelplug_kit import CounterStore

    from .groups import Deployment, Group

__all__ = ["State", "busy_charge", "keys_of", "read_states"]

WINDOW = 60.0  # seconds of an rpm/tpm window
BUSY_TTL = 900.0  # an in-flight count untouched this long was left by a process that died
LATENCY_TTL = 3600.0  # an average this old says nothing about the deployment now
LATENCY_WEIGHT = 0.2  # the share of a new sample in the moving average
PROBE_TTL = 86400.0  # how long the last probe's outcome is shown
FIELDS = ("busy", "rpm", "tpm", "latency", "cool", "seen", "probe")
PICKING = 5  # the fields a pick reads of a group without health checks (the first five)


@dataclass(slots=True)  # made on every call: no frozen (slower) init
class State:
    """What a deployment is doing now, as the store says."""

    busy: int = 0
    rpm: int = 0
    tpm: int = 0
    latency_ms: int | None = None
    cooling: float = 0.0  # seconds left; 0: free
    window_left: float = 0.0  # seconds until the fuller of its rpm/tpm windows ends
    idle: bool = True  # no call or probe within its health_interval
    probe_ok: bool | None = None  # the last health probe passed; None: none kept
    probe_age: float = 0.0  # seconds since that probe


def keys_of(group: Group, deployment: Deployment) -> dict[str, str]:
    """The store keys of one deployment of a group, by field (made once: every call
    reads them)."""
    return _keys(group.name, deployment.spec)


@functools.cache
def _keys(group: str, spec: str) -> dict[str, str]:
    base = f"router:{group}:{spec}"
    return {name: f"{base}:{name}" for name in FIELDS}


@functools.cache
def _group_keys(group: str, specs: tuple[str, ...], width: int) -> list[str]:
    return [key for spec in specs for key in list(_keys(group, spec).values())[:width]]


async def read_states(store: CounterStore, group: Group, *, health: bool = False) -> list[State]:
    """Every deployment's state, in the group's order, in one read (its health check
    fields only when the group has health checks, or ``health`` asks for them)."""
    width = len(FIELDS) if health or group.probed else PICKING
    found = await store.read(group_keys(group, width))
    states = []
    for start in range(0, len(found), width):
        busy, rpm, tpm, latency, cool = found[start : start + PICKING]
        state = State()  # the defaults: a deployment no call has touched
        if busy:
            state.busy = busy[0]
        if rpm or tpm:
            state.rpm = rpm[0] if rpm else 0
            state.tpm = tpm[0] if tpm else 0
            state.window_left = max(rpm[1] if rpm else 0.0, tpm[1] if tpm else 0.0)
        if latency:
            state.latency_ms = latency[0]
        if cool:
            state.cooling = cool[1]
        if width > PICKING:
            seen, probe = found[start + PICKING : start + width]
            state.idle = seen is None
            if probe is not None:
                state.probe_ok = probe[0] == 1
                state.probe_age = max(0.0, PROBE_TTL - probe[1])
        states.append(state)
    return states


def group_keys(group: Group, width: int) -> list[str]:
    """The keys a pick reads of ``group``: the first ``width`` fields of every
    deployment, in the group's order (made once per group and width)."""
    return _group_keys(group.name, tuple(d.spec for d in group.deployments), width)


# The charges every call of a deployment makes alike are made once (a Charge is frozen,
# so one object serves every call); only the tokens' charge differs from call to call.


@functools.lru_cache(maxsize=4096)
def busy_charge_of(key: str, limit: int | None) -> Charge:
    return Charge(key=key, amount=1, limit=limit, ttl=BUSY_TTL, refresh=True)


@functools.lru_cache(maxsize=4096)
def request_charge_of(key: str, limit: int | None) -> Charge:
    return Charge(key=key, amount=1, limit=limit, ttl=WINDOW)


@functools.lru_cache(maxsize=4096)
def freed_charge_of(key: str) -> Charge:
    return Charge(key=key, amount=-1)


def busy_charge(keys: dict[str, str], limit: int | None) -> Charge:
    """One call more in flight (refused when that would pass ``limit``)."""
    return busy_charge_of(keys["busy"], limit)


def freed_charge(keys: dict[str, str]) -> Charge:
    """One call less in flight (the call ended)."""
    return freed_charge_of(keys["busy"])


def window_charges(keys: dict[str, str], deployment: Deployment, tokens: int) -> list[Charge]:
    """One request and ``tokens`` in the deployment's minute windows."""
    return [
        request_charge_of(keys["rpm"], deployment.rpm),
        Charge(key=keys["tpm"], amount=tokens, limit=deployment.tpm, ttl=WINDOW),
    ]


def latency_setting(keys: dict[str, str], before: int | None, sample_ms: float) -> Setting:
    """The moving average with one more sample (the sample itself when none was kept)."""
    value = sample_ms if before is None else before + LATENCY_WEIGHT * (sample_ms - before)
    return Setting(key=keys["latency"], value=round(value), ttl=LATENCY_TTL, room=False)


def cooldown_setting(keys: dict[str, str], seconds: float) -> Setting:
    """The deployment skipped for ``seconds``."""
    return Setting(key=keys["cool"], value=1, ttl=seconds, room=False)


def seen_charge(keys: dict[str, str], interval: float) -> Charge:
    """A call took the deployment: not idle for ``interval`` seconds."""
    return Charge(key=keys["seen"], amount=1, ttl=interval, refresh=True)


def probe_claim(keys: dict[str, str], interval: float) -> Charge:
    """The right to probe an idle deployment: taken by one caller (task or process)
    only, and then not idle for ``interval`` seconds."""
    return Charge(key=keys["seen"], amount=1, limit=1, ttl=interval)


def probe_setting(keys: dict[str, str], ok: bool) -> Setting:
    """The last health probe's outcome."""
    return Setting(key=keys["probe"], value=1 if ok else 0, ttl=PROBE_TTL, room=False)
