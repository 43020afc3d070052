"""A tool call cut by the output limit is never handed back as one to run.

Core's rule for every provider: an answer that ends inside a tool call's arguments
(``max_tokens``, or a context window that filled) ends in a
:class:`~modelplug.contract.errors.TruncatedToolCallError`, never in a Done whose
tool_use block a caller or a tool loop would run with half its arguments.

A provider plugin says a call was cut by leaving it out of the message and listing it
in ``Response.metadata["truncated_tool_calls"]`` (``{"id", "name", "arguments"}`` each,
with a Notice of kind ``truncated_tool_call``). A plugin that does not, and hands on a
tool_use block whose input is not an object (its JSON broke off) at ``stop_reason
"max_tokens"``, is caught here too: the block is moved into that list the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modelplug.contract.errors import CutToolCall, TruncatedToolCallError
from modelplug.contract.types import Response, ToolUseBlock

if TYPE_CHECKING:
    from modelplug.contract.routes import Route
    from modelplug.contract.types import Request

__all__ = ["truncated_tool_calls"]

TRUNCATED = "truncated_tool_calls"


def truncated_tool_calls(
    route: Route, request: Request, response: Response
) -> TruncatedToolCallError | None:
    """The error to raise for ``response`` when the output limit cut a tool call in it,
    else None (the common case costs two lookups)."""
    marked = response.metadata.get(TRUNCATED)
    if not marked and response.stop_reason != "max_tokens":
        return None
    broken = [
        block
        for block in response.message.content
        if isinstance(block, ToolUseBlock) and not isinstance(block.input, dict)
    ]
    if response.stop_reason != "max_tokens":
        broken = []  # a closed call with broken JSON is the caller's to judge, not a cut
    if not marked and not broken:
        return None
    calls = [_cut(entry) for entry in marked or ()] + [
        CutToolCall(id=block.id, name=block.name, arguments=str(block.input)) for block in broken
    ]
    if broken:
        response = _marked(response, broken)
    return TruncatedToolCallError(
        _message(calls, request, response), calls=calls, route=route, partial=response
    )


def _cut(entry: Any) -> CutToolCall:
    if not isinstance(entry, dict):
        return CutToolCall(id=None, name=None, arguments=str(entry))
    name, call_id, arguments = entry.get("name"), entry.get("id"), entry.get("arguments")
    return CutToolCall(
        id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else None,
        arguments=arguments if isinstance(arguments, str) else "",
    )


def _marked(response: Response, broken: list[ToolUseBlock]) -> Response:
    """``response`` as a plugin that follows the rule would have made it: the cut blocks
    out of the message, listed in its metadata."""
    content = [b for b in response.message.content if not any(b is cut for cut in broken)]
    listed = list(response.metadata.get(TRUNCATED) or ())
    listed += [{"id": b.id, "name": b.name, "arguments": str(b.input)} for b in broken]
    return response.model_copy(
        update={
            "message": response.message.model_copy(update={"content": content}),
            "metadata": {**response.metadata, TRUNCATED: listed},
        }
    )


def _message(calls: list[CutToolCall], request: Request, response: Response) -> str:
    names = ", ".join(call.name or "an unnamed call" for call in calls)
    written = sum(len(call.arguments) for call in calls)
    if response.stop_reason == "max_tokens":
        limit = f"max_tokens ({request.max_tokens:,})" if request.max_tokens else "its output limit"
        why = (
            f"the answer hit {limit} or the context window inside the arguments of {names} "
            f"({written:,} characters written)"
        )
        fix = (
            "Raise max_tokens, or shorten the conversation or ask for a smaller call; "
            "retrying unchanged meets the same limit"
        )
    else:
        why = f"the stream ended inside the arguments of {names} (the call never closed)"
        fix = "The provider sent an incomplete call; retrying may not help"
    return (
        f"{why}, so it was not returned as a call to run. {fix}. The text and the cut "
        "arguments are on this error (.partial, .calls)"
    )
