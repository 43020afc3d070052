"""How a call picks one deployment of a group among those free now.

Each strategy is a plain function of the candidates (index, deployment, state, price)
that returns the index to try first; ties go to a random one of the tied, so equal
deployments share the calls. ``weighted`` is a smooth weighted round robin (nginx's):
the shares are the weights within one call per deployment, in every process, with no
randomness to drift from them.
"""

from __future__ import annotations

import math
import random as _random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from .groups import Deployment
from .state import State

__all__ = ["Candidate", "Picker"]


@dataclass(slots=True)  # made on every call: no frozen (slower) init
class Candidate:
    """A deployment a call may take now."""

    index: int
    deployment: Deployment
    state: State
    price: Decimal | None = None  # input + output per million tokens; None: unknown


class Picker:
    """The strategies, with the state ``weighted`` keeps between calls (per group)
    and a random source for ties (a seeded ``random.Random`` in tests)."""

    def __init__(self, random: _random.Random | None = None) -> None:
        self.random = random or _random.Random()
        self.current: dict[str, list[float]] = {}  # group -> smooth round robin's weights

    def pick(self, group: str, strategy: str, candidates: Sequence[Candidate]) -> int:
        """The index of the deployment to try first."""
        if len(candidates) == 1:
            return candidates[0].index
        if strategy == "least-busy":
            return self.lowest(candidates, lambda c: c.state.busy)
        if strategy == "latency":  # an untried deployment first: its latency is unknown
            return self.lowest(candidates, lambda c: c.state.latency_ms or -1)
        if strategy == "usage":
            return self.lowest(candidates, usage_of)
        if strategy == "cost":
            cheapest = min(price_of(c) for c in candidates)
            tied = [c for c in candidates if price_of(c) == cheapest]
            return self.weighted(group, tied)
        return self.weighted(group, candidates)

    def lowest(self, candidates: Sequence[Candidate], key: Callable[[Candidate], float]) -> int:
        best = min(key(c) for c in candidates)
        tied = [c.index for c in candidates if key(c) == best]
        return tied[0] if len(tied) == 1 else self.random.choice(tied)

    def weighted(self, group: str, candidates: Sequence[Candidate]) -> int:
        """Smooth weighted round robin over ``candidates``: each gains its weight, the
        one ahead is taken and pays back the total."""
        size = max(c.index for c in candidates) + 1
        current = self.current.setdefault(group, [])
        if len(current) < size:
            current.extend([0.0] * (size - len(current)))
        total = 0.0
        for c in candidates:
            current[c.index] += c.deployment.weight
            total += c.deployment.weight
        chosen = max(candidates, key=lambda c: current[c.index]).index
        current[chosen] -= total
        return chosen


def usage_of(candidate: Candidate) -> float:
    """How full the deployment's windows are: the fuller of rpm and tpm as a fraction of
    its ceiling, or its raw token count when it has no ceiling."""
    d, s = candidate.deployment, candidate.state
    shares = [s.rpm / d.rpm if d.rpm else None, s.tpm / d.tpm if d.tpm else None]
    known = [share for share in shares if share is not None]
    return max(known) if known else float(s.tpm)


def price_of(candidate: Candidate) -> Decimal | float:
    return candidate.price if candidate.price is not None else math.inf
