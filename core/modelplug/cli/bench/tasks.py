"""Bench tasks are data: a folder per task holding ``task.toml`` beside the task's
starting files. ``prompt`` is what the model is asked, ``check`` the command whose exit
status judges the result (0: passed), ``budget_usd`` and ``timeout_s`` the most one run
of the task may spend."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from modelplug.contract.errors import RequestError

__all__ = ["DEFAULT_BUDGET_USD", "DEFAULT_TIMEOUT_S", "SHIPPED", "Task", "load_tasks"]

#: The folder of task folders that ships with modelplug.
SHIPPED = Path(__file__).resolve().parent.parent / "bench_tasks"
DEFAULT_BUDGET_USD = 0.10
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Task:
    """One task: its name (the folder's), where its starting files are, and its rules."""

    name: str
    folder: Path
    prompt: str
    check: str
    budget_usd: float = DEFAULT_BUDGET_USD
    timeout_s: float = DEFAULT_TIMEOUT_S


def load_task(folder: Path) -> Task:
    """The task a folder holds; a RequestError naming the file and what is wrong."""
    path = folder / "task.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RequestError(f"cannot read the bench task {path}: {exc}") from None
    for key in ("prompt", "check"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise RequestError(f"{path}: '{key}' must be a non-empty string")
    limits = {}
    for key, default in (("budget_usd", DEFAULT_BUDGET_USD), ("timeout_s", DEFAULT_TIMEOUT_S)):
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise RequestError(f"{path}: '{key}' must be a positive number, not {value!r}")
        limits[key] = float(value)
    unknown = sorted(set(data) - {"prompt", "check", "budget_usd", "timeout_s"})
    if unknown:
        raise RequestError(
            f"{path}: unknown keys {unknown}; a task has prompt, check, budget_usd and timeout_s"
        )
    return Task(folder.name, folder, data["prompt"].strip(), data["check"], **limits)


def load_tasks(extra: Path | None = None, *, only_extra: bool = False) -> list[Task]:
    """The shipped tasks, then those of ``extra`` (a folder of task folders); with
    ``only_extra`` only the latter. A task of ``extra`` replaces a shipped one of its name."""
    folders: dict[str, Path] = {}
    sources = ([] if only_extra else [SHIPPED]) + ([extra] if extra is not None else [])
    for source in sources:
        if not source.is_dir():
            raise RequestError(f"{source} is not a folder of task folders")
        for folder in sorted(source.iterdir()):
            if (folder / "task.toml").is_file():
                folders[folder.name] = folder
    if not folders:
        raise RequestError(f"no task.toml in any folder of {extra}: nothing to run")
    return [load_task(folder) for folder in folders.values()]
