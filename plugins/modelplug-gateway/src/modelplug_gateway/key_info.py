"""``GET /key/info``: a virtual key reads its own budget (seed 004).

The answer is LiteLLM's ``/key/info`` shape (``{"key", "info": {"spend",
"max_budget", "budget_duration", "budget_reset_at", ...}}``), so a client that reads a
LiteLLM proxy's budget reads this one too, with ``"served_by": "modelplug-gateway"``
beside it to say whose it is. ``key`` is the key's name, never the key. Amounts are US
dollars (``"currency": "USD"``); ``spend`` counts the budget's current period, calls in
flight at what they reserved, and is null for a key without a budget (such a key's
spend is not counted). ``budget_duration`` is the key's period (``hour``, ``day``,
``week``, ``month``; null for ``total``, which never resets).

Only a gateway with virtual keys has this path: an open gateway answers 404, which a
client reads as "no key budget here".
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .auth import Refusal

if TYPE_CHECKING:
    from .app_protocol import GatewayApp
    from .asgi import Scope, Send
    from .auth import Gate
    from .key_gate import VirtualKeyGate
    from .keys.record import KeyRecord

__all__ = ["handle", "key_info"]

SERVED_BY = "modelplug-gateway"


def _when(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


async def key_info(gate: VirtualKeyGate, record: KeyRecord) -> dict[str, Any]:
    """The ``/key/info`` answer for ``record``'s key."""
    spend: float | None = None
    resets: str | None = None
    if record.budget is not None:
        spent, resets = await gate.budget_spent(record)
        spend = float(spent)
    return {
        "key": record.name,
        "served_by": SERVED_BY,
        "info": {
            "key_name": record.name,
            "spend": spend,
            "max_budget": None if record.budget is None else float(record.budget),
            "budget_duration": None if record.period == "total" else record.period,
            "budget_reset_at": resets,
            "currency": "USD",
            "expires": _when(record.expires),
            "models": list(record.models),
            "rpm_limit": record.rpm,
            "tpm_limit": record.tpm,
        },
    }


async def handle(gateway: GatewayApp, gate: Gate, scope: Scope, send: Send) -> None:
    """Answer ``GET /key/info`` for the key presented to ``gate``."""
    from .key_gate import VirtualKeyGate

    shape = gateway.shapes["openai"]
    if not isinstance(gate, VirtualKeyGate):
        await gateway.send_error(
            send, shape, 404, "this gateway has no virtual keys, so no key budget"
        )
        return
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    try:
        record = await gate.identify(headers, scope.get("query_string", b""))
    except Refusal as exc:
        await gateway.send_error(send, shape, exc.status, exc.message, exc.kind)
        return
    await gateway.send_json(send, 200, await key_info(gate, record))
