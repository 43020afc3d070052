"""Who may call the gateway: a :class:`Gate` admits a request or refuses it, and the
:class:`Ticket` it hands back is settled once the call ended (for per-key accounting).

Two gates live here: :class:`OpenGate` (``--no-auth``, loopback only) and
:class:`OperatorKeyGate` (one key from the environment). Virtual keys are another gate
(``key_gate.py``)."""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from modelplug import Cost, EmbedRequest, Request, Route, Usage

__all__ = ["Gate", "OpenGate", "OperatorKeyGate", "Refusal", "Ticket", "presented_key"]


class Refusal(Exception):
    """The gate's no: a status, an error kind for the caller's shape, a message that
    never contains the key presented, and the key's name when the key was known."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 401,
        kind: str = "authentication_error",
        retry_after: float | None = None,
        key_name: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.retry_after = retry_after
        self.key_name = key_name  # for the request log: which key was refused, when known


class Ticket:
    """One admitted request. ``settle`` is called once when the call ended, with what
    is known then (None for each part that is not, e.g. after a refusal upstream)."""

    __slots__ = ("key_name",)

    def __init__(self, key_name: str | None = None) -> None:
        self.key_name = key_name

    async def settle(self, route: Route | None, usage: Usage | None, cost: Cost | None) -> None:
        """Nothing to account for by default."""
        return None


class Gate(Protocol):
    """Admits or refuses a request. A gate may also have ``precheck(raw_headers, query)``,
    which the app calls before reading the body: raising :class:`Refusal` there spares
    reading and parsing the body of a caller who cannot be admitted."""

    async def admit(
        self,
        headers: Mapping[str, str],
        query: bytes,
        model: str,
        request: Request | EmbedRequest | None = None,
    ) -> Ticket:
        """Admit a request or raise :class:`Refusal`. ``headers`` have lower-case names;
        ``request`` is the call (for a gate that reserves what it may cost)."""
        ...


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a caller sent: ``Authorization: Bearer KEY`` (OpenAI's SDKs) or
    ``x-api-key: KEY`` (Anthropic's)."""
    value = headers.get("authorization")
    if value is not None:
        scheme, _, token = value.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    value = headers.get("x-api-key")
    if value:
        return value.strip()
    return None


def raw_key_headers(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The headers a key comes in (:func:`presented_key`'s), from the raw ASGI headers a
    gate's ``precheck`` gets."""
    wanted = {}
    for name, value in headers:
        if name == b"authorization" or name == b"x-api-key":
            wanted[name.decode()] = value.decode("latin-1")
    return wanted


_OPEN = Ticket()


class OpenGate:
    """Everyone is admitted (``--no-auth``, which the CLI allows on loopback only)."""

    async def admit(
        self,
        headers: Mapping[str, str],
        query: bytes,
        model: str,
        request: Request | EmbedRequest | None = None,
    ) -> Ticket:
        return _OPEN


class OperatorKeyGate:
    """One key, the operator's, from the environment variable ``[gateway] key_env``."""

    def __init__(self, key: str, variable: str = "MODELPLUG_GATEWAY_KEY") -> None:
        if not key:
            raise ValueError(f"{variable} is empty: the gateway needs a key to check against")
        self._key = key.encode()
        self._ticket = Ticket("operator")
        self.variable = variable

    def __repr__(self) -> str:
        return f"OperatorKeyGate(variable={self.variable!r})"

    def precheck(self, headers: Iterable[tuple[bytes, bytes]], query: bytes) -> None:
        """The whole check, on the raw headers: a caller without the key is refused
        before its body is read or parsed."""
        self._check(raw_key_headers(headers))

    async def admit(
        self,
        headers: Mapping[str, str],
        query: bytes,
        model: str,
        request: Request | EmbedRequest | None = None,
    ) -> Ticket:
        self._check(headers)
        return self._ticket

    def _check(self, headers: Mapping[str, str]) -> None:
        key = presented_key(headers)
        if key is None:
            raise Refusal(
                "no key: send it as 'Authorization: Bearer KEY' or 'x-api-key: KEY'",
            )
        # Constant time: how long the comparison takes says nothing about the key.
        if not hmac.compare_digest(key.encode(), self._key):
            raise Refusal("the key presented is not valid for this gateway")
