"""What a model may do to a task's copy: read, write and list its files and run a
command in it. Every path is resolved and refused when it leads outside the copy.

This is not a sandbox against a hostile model: ``run`` starts a real process as you,
with the copy as its working directory, a scrubbed environment (no keys, no proxy
settings, HOME set to the copy) and a timeout; nothing stops a command from reading
other files or opening sockets by itself. Run the bench on models you would let edit a
scratch folder.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from modelplug.contract.types import ToolSpec

__all__ = ["TOOLS", "Workspace", "scrubbed_env"]

#: How much of a file or a command's output goes back to the model.
MAX_OUTPUT = 20_000

TOOLS = [
    ToolSpec(
        name="list_files",
        description="List the files of the task folder (paths relative to it).",
        input_schema={"type": "object", "properties": {}},
    ),
    ToolSpec(
        name="read_file",
        description="Read a text file of the task folder.",
        input_schema={
            "type": "object",
            "properties": {"path": {"type": "string", "description": "relative path"}},
            "required": ["path"],
        },
    ),
    ToolSpec(
        name="write_file",
        description="Write (replace) a text file of the task folder with the whole content.",
        input_schema={
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    ),
    ToolSpec(
        name="run",
        description="Run a command (no shell) in the task folder; returns exit status and output.",
        input_schema={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "python -m pytest -q, say"}
            },
            "required": ["command"],
        },
    ),
]


def scrubbed_env(home: Path) -> dict[str, str]:
    """The environment of a command in a task copy: a PATH that finds this Python first,
    and nothing else of yours (no keys, no proxy settings). pytest loads no installed
    plugin there: a check judges the task's files, not what else is installed."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.defpath])
    return {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


class Workspace:
    """A task's throwaway copy and the tools that act on it."""

    def __init__(self, root: Path, command_timeout: float) -> None:
        self.root = root.resolve()
        self.command_timeout = command_timeout

    def inside(self, relative: str) -> Path:
        """``relative`` resolved in the copy; ValueError when it leads outside it."""
        path = (self.root / relative).resolve()
        if path != self.root and self.root not in path.parents:
            raise ValueError(f"{relative!r} is outside the task folder")
        return path

    def call(self, name: str, arguments: dict[str, Any] | str) -> tuple[str, bool]:
        """Run one tool call: (the text for the model, whether it is an error)."""
        if not isinstance(arguments, dict):
            return "the arguments were not a JSON object", True
        try:
            if name == "list_files":
                return self.list_files(), False
            if name == "read_file":
                return self.inside(str(arguments["path"])).read_text("utf-8")[:MAX_OUTPUT], False
            if name == "write_file":
                target = self.inside(str(arguments["path"]))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(str(arguments["content"]), "utf-8")
                return f"wrote {target.relative_to(self.root)}", False
            if name == "run":
                status, output = self.run(str(arguments["command"]), self.command_timeout)
                return f"exit status {status}\n{output}", status != 0
        except KeyError as exc:
            return f"missing argument {exc}", True
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            return str(exc), True
        return f"no tool named {name!r}: use list_files, read_file, write_file or run", True

    def list_files(self) -> str:
        names = sorted(
            str(p.relative_to(self.root))
            for p in self.root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        )
        return "\n".join(names)

    def run(self, command: str, timeout: float) -> tuple[int, str]:
        """Run ``command`` (split as a shell would, never given to one) in the copy:
        (exit status, output). ``python`` is the Python modelplug runs on; a command
        that outlives ``timeout`` is killed and reported as status 124."""
        argv = shlex.split(command)
        if not argv:
            raise ValueError("an empty command")
        if argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        try:
            done = subprocess.run(
                argv,
                cwd=self.root,
                env=scrubbed_env(self.root),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=max(timeout, 0.1),
                check=False,
            )
        except subprocess.TimeoutExpired:
            return 124, f"killed after {timeout:.0f} s"
        except OSError as exc:
            return 127, f"cannot run {argv[0]!r}: {exc.strerror}"
        return done.returncode, (done.stdout + done.stderr)[-MAX_OUTPUT:]
