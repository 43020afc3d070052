"""One virtual key as the store keeps it: its name, limits and state, and the keyed
hash of the key (the key itself is printed once when made and never kept)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

__all__ = ["KEY_BYTES", "PERIODS", "PREFIX", "KeyRecord", "looks_like_key"]

PREFIX = "mpk-"
PERIODS = ("day", "week", "month", "total")
KEY_BYTES = 32  # random bytes in a key: 256 bits, URL-safe base64 (43 characters)


def looks_like_key(text: str) -> bool:
    return PREFIX in text


@dataclass(frozen=True)
class KeyRecord:
    """A key's record.

    :param hash: HMAC-SHA256 of the key under the server's secret (hex).
    :param budget: USD per ``period``, or None for no budget.
    :param models: the specs, aliases or roles the key may call (empty: any the
        gateway serves).
    :param expires: epoch seconds after which the key is refused, or None.
    """

    name: str
    hash: str
    budget: Decimal | None = None
    period: str = "month"
    rpm: int | None = None
    tpm: int | None = None
    models: tuple[str, ...] = field(default_factory=tuple)
    expires: float | None = None
    revoked: bool = False
    created: float = 0.0

    def usable(self, now: float) -> bool:
        return not self.revoked and (self.expires is None or now < self.expires)

    def with_changes(self, **changes: Any) -> KeyRecord:
        return replace(self, **changes)

    def to_json(self) -> str:
        data = asdict(self)
        data["budget"] = None if self.budget is None else str(self.budget)
        data["models"] = list(self.models)
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> KeyRecord:
        data = json.loads(text)
        budget = data.get("budget")
        return cls(
            name=str(data["name"]),
            hash=str(data["hash"]),
            budget=None if budget is None else Decimal(budget),
            period=str(data.get("period") or "month"),
            rpm=data.get("rpm"),
            tpm=data.get("tpm"),
            models=tuple(data.get("models") or ()),
            expires=data.get("expires"),
            revoked=bool(data.get("revoked")),
            created=float(data.get("created") or 0.0),
        )

    def __repr__(self) -> str:
        # The hash is not the key, but it is what a lookup matches: keep it out of reprs.
        return f"KeyRecord(name={self.name!r}, revoked={self.revoked})"
