"""The repetition guard's tool kind: the model calls a tool again with the same
arguments after that call returned the same result ``tool_copies`` times in the
conversation. Nothing in the text repeats, so the byte detector cannot see it; the
turn is ended with stop reason ``repetition`` and the calls are not delivered (running
the tool again would return the same result again).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug.contract.types import Repetition, Request, Response, ToolUseBlock

__all__ = ["repeated_tool_call", "without_calls"]

# The sample of a Repetition: the call, cut to this many characters.
SAMPLE_CHARS = 200


def _key(call: ToolUseBlock) -> tuple[str, str]:
    arguments: Any = call.input
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    return call.name, arguments


def repeated_tool_call(request: Request, response: Response, copies: int) -> Repetition | None:
    """The Repetition for the first call of ``response`` whose last ``copies`` answers in
    ``request``'s conversation (same name, same arguments) were the same result; None
    when there is none (or ``copies`` is 0)."""
    if copies <= 0 or not response.message.tool_calls:
        return None
    results: dict[str, tuple[str, bool]] = {}
    for message in request.messages:
        for result in message.tool_results:
            results[result.tool_use_id] = (result.text, result.is_error)
    answered: dict[tuple[str, str], list[tuple[str, bool]]] = {}
    for message in request.messages:
        for call in message.tool_calls:
            if call.id in results:
                answered.setdefault(_key(call), []).append(results[call.id])
    for call in response.message.tool_calls:
        key = _key(call)
        got = answered.get(key, [])
        same = 0
        for answer in reversed(got):
            if answer != got[-1]:
                break
            same += 1
        if same >= copies:
            from modelplug.contract.types import Repetition

            return Repetition(
                kind="tool",
                channel=f"tool:{call.name}",
                copies=same,
                sample=f"{call.name}({key[1]})"[:SAMPLE_CHARS],
            )
    return None


def without_calls(response: Response, found: Repetition) -> Response:
    """``response`` ended by the tool kind: stop reason ``repetition``, the record, and
    its tool calls left out (its text and thinking kept)."""
    content = [block for block in response.message.content if block.type != "tool_use"]
    message = response.message.model_copy(update={"content": content})
    return response.model_copy(
        update={"message": message, "stop_reason": "repetition", "repetition": found}
    )
