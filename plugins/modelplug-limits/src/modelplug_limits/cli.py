"""``modelplug limits``: what each budget has spent and has left, and the rate windows
now, as the store the processes share sees them through the default policy."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from .describe import row_text, snapshot
from .policy import default_policy

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["show_limits"]


def show_limits(client: CallContext, *, as_json: bool = False) -> int:
    data = asyncio.run(snapshot(client, default_policy()))
    if as_json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"store: {data['store']} ({data['where']})")
    if not data["limits"]:
        print("no budgets or rate limits are set ([limits] in your settings)")
    for row in data["limits"]:
        print(row_text(row))
    return 0
