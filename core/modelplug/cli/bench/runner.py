"""One run of one task against one model: copy the task's files to a throwaway folder,
let the model work there with the workspace tools until it answers without a call (or
its budget in money or time is spent), then judge the folder by the task's check.

The time budget is checked as the model's events arrive, between turns, and caps each
command; the money budget after each answer (the first answer past it ends the run)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from modelplug.cli.bench.tasks import Task
from modelplug.cli.bench.workspace import TOOLS, Workspace
from modelplug.contract.errors import ModelplugError
from modelplug.contract.types import (
    Block,
    Done,
    Message,
    Notice,
    Response,
    Route,
    TextBlock,
    ToolResultBlock,
)

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["MAX_TURNS", "RunResult", "run_task"]

#: The most answers one run may take (a model calling tools forever ends here).
MAX_TURNS = 40
CHECK_TIMEOUT_S = 120.0

SYSTEM = (
    "You are working in a folder of files. Use the tools to list, read and write files "
    "and to run commands there, until the task is done; then answer briefly. Paths are "
    "relative to the folder."
)
TOOL_LESS_SYSTEM = (
    "You are asked to change files you cannot touch: answer with the changes in text."
)

Ending = Literal["answered", "over_budget", "timed_out", "turns", "error"]


@dataclass
class RunResult:
    """What one run did: whether the check passed, why the work stopped, its spend."""

    task: str
    passed: bool
    ending: Ending
    cost_usd: Decimal | None = None
    tokens: int = 0
    seconds: float = 0.0
    turns: int = 0
    tool_less: bool = False
    error: str | None = None
    check_output: str = field(default="", repr=False)


def run_task(
    client: Client,
    route: Route,
    task: Task,
    *,
    tools: bool,
    now: Callable[[], float] = time.monotonic,
) -> RunResult:
    """Run ``task`` once on ``route`` (with the workspace tools when ``tools``)."""
    started = now()
    deadline = started + task.timeout_s
    with tempfile.TemporaryDirectory(prefix=f"modelplug-bench-{task.name}-") as scratch:
        root = Path(scratch) / task.name
        shutil.copytree(task.folder, root, ignore=shutil.ignore_patterns("task.toml"))
        workspace = Workspace(root, task.timeout_s)
        result = RunResult(task.name, False, "answered", tool_less=not tools)
        try:
            _work(client, route, task, workspace, result, deadline, now)
        except ModelplugError as exc:
            result.ending, result.error = "error", str(exc).splitlines()[0][:300]
        status, output = workspace.run(task.check, CHECK_TIMEOUT_S)
        result.passed = status == 0
        result.check_output = output
    result.seconds = now() - started
    return result


def _work(
    client: Client,
    route: Route,
    task: Task,
    workspace: Workspace,
    result: RunResult,
    deadline: float,
    now: Callable[[], float],
) -> None:
    messages = [Message(role="user", content=[TextBlock(text=task.prompt)])]
    for _ in range(MAX_TURNS):
        response = _answer(client, route, messages, result, deadline, now)
        if response is None:
            result.ending = "timed_out"
            return
        result.turns += 1
        result.tokens += response.usage.total
        if response.cost is not None:
            result.cost_usd = (result.cost_usd or Decimal(0)) + response.cost.amount
        messages.append(response.message)
        if result.cost_usd is not None and result.cost_usd > Decimal(str(task.budget_usd)):
            result.ending = "over_budget"
            return
        calls = response.message.tool_calls
        if not calls or result.tool_less:
            return
        results: list[Block] = []
        for call in calls:
            workspace.command_timeout = max(0.0, deadline - now())
            text, is_error = workspace.call(call.name, call.input)
            results.append(
                ToolResultBlock(
                    tool_use_id=call.id, content=[TextBlock(text=text)], is_error=is_error
                )
            )
        messages.append(Message(role="user", content=results))
        if now() > deadline:
            result.ending = "timed_out"
            return
    result.ending = "turns"


def _answer(
    client: Client,
    route: Route,
    messages: list[Message],
    result: RunResult,
    deadline: float,
    now: Callable[[], float],
) -> Response | None:
    """The model's next answer, or None when the deadline passed while it streamed."""
    fields = (
        {"tools": TOOLS, "system": SYSTEM} if not result.tool_less else {"system": TOOL_LESS_SYSTEM}
    )
    stream = client.stream(route, messages=list(messages), **fields)
    try:
        for event in stream:
            if now() > deadline:
                return None
            if isinstance(event, Notice) and event.kind == "tools_unsupported":
                result.tool_less = True
            if isinstance(event, Done):
                return event.response
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return None
