"""Two scripted models for ``modelplug bench``'s end-to-end test, loaded as a trusted
project's local plugins: ``solver/...`` fixes each shipped task with the workspace tools
(writes the fix, runs the tests, answers), ``failer/...`` writes a wrong fix to each
(and tries to write $BENCH_ESCAPE, outside its folder). Their steps read the task from
the prompt and the turn from how many answers came before, so the same script serves
any number of runs."""

from __future__ import annotations

import os

from modelplug.contract.types import Price, Request, Response, ToolUseBlock
from modelplug.testing import FakeModel, reply

FIXED = {
    "stats.py": {"stats.py": "def mean(values):\n    return sum(values) / len(values)\n"},
    "slugify": {
        "slug.py": "import re\n\n\ndef slugify(text):\n"
        "    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n"
    },
    "area_of": {
        "geometry.py": "def rectangle_area(width, height):\n    return width * height\n",
        "report.py": "from geometry import rectangle_area\n\n\ndef describe(width, height):\n"
        "    return f'{width} x {height}: area {rectangle_area(width, height)}'\n",
    },
}
WRONG = {
    "stats.py": {"stats.py": "def mean(values):\n    return sum(values) // (len(values) + 1)\n"},
    "slugify": {"slug.py": "def slugify(text):\n    return text.lower().replace(' ', '-')\n"},
    # Renamed where it is defined only: report.py still imports the old name.
    "area_of": {"geometry.py": "def rectangle_area(width, height):\n    return width * height\n"},
}


def _task(request: Request) -> str:
    prompt = request.messages[0].text
    return next(key for key in FIXED if key in prompt)


def _turn(request: Request) -> int:
    return sum(1 for m in request.messages if m.role == "assistant")


def _writes(files: dict[str, str]) -> list[ToolUseBlock]:
    return [
        ToolUseBlock(name="write_file", input={"path": p, "content": c}) for p, c in files.items()
    ]


def solve(request: Request) -> Response:
    turn = _turn(request)
    if turn == 0:
        return reply(ToolUseBlock(name="list_files"), *_writes(FIXED[_task(request)]))
    if turn == 1:
        return reply(ToolUseBlock(name="run", input={"command": "python -m pytest -q"}))
    return reply("Done: the tests pass.")


def fail(request: Request) -> Response:
    if _turn(request) == 0:
        # An absolute path outside its copy (the test names it), which must be refused.
        outside = os.environ.get("BENCH_ESCAPE", "/nonexistent/escaped.py")
        escape = ToolUseBlock(name="write_file", input={"path": outside, "content": "x"})
        return reply(escape, *_writes(WRONG[_task(request)]))
    return reply("Done.")


def model(provider: str, step: object, price: Price | None) -> FakeModel:
    return FakeModel([step] * 500, provider=provider, price=price)  # type: ignore[list-item]
