"""What the bench prints: a table per model (pass rate, cost, tokens, wall time), a
scatter of pass rate against cost drawn in text, the same as JSON, and optionally a PNG
(when matplotlib is installed)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from modelplug.cli.bench.runner import RunResult

__all__ = ["ModelResult", "as_json", "plot_png", "plot_text", "table"]


@dataclass
class ModelResult:
    """All runs of one model."""

    model: str
    runs: list[RunResult] = field(default_factory=list)
    local: bool = False

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.runs)

    @property
    def pass_rate(self) -> float:
        return self.passed / len(self.runs) if self.runs else 0.0

    @property
    def cost_usd(self) -> Decimal | None:
        """The total cost; None when no run was priced."""
        costs = [r.cost_usd for r in self.runs if r.cost_usd is not None]
        return sum(costs, Decimal(0)) if costs else None

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.runs)

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)

    @property
    def tool_less(self) -> bool:
        return any(r.tool_less for r in self.runs)


def _money(value: Decimal | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def table(results: list[ModelResult]) -> str:
    """The per-model table, one line each, tool-less models marked."""
    header = ("model", "passed", "rate", "cost", "tokens", "time")
    rows = [
        (
            r.model + (" (tool-less)" if r.tool_less else ""),
            f"{r.passed}/{len(r.runs)}",
            f"{r.pass_rate:.0%}",
            _money(r.cost_usd),
            str(r.tokens),
            f"{r.seconds:.1f}s",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def _tasks(result: ModelResult) -> dict[str, dict[str, Any]]:
    by_task: dict[str, dict[str, Any]] = {}
    for run in result.runs:
        entry = by_task.setdefault(run.task, {"passed": 0, "runs": []})
        entry["passed"] += run.passed
        entry["runs"].append(
            {
                "passed": run.passed,
                "ending": run.ending,
                "cost_usd": None if run.cost_usd is None else str(run.cost_usd),
                "tokens": run.tokens,
                "seconds": round(run.seconds, 3),
                "turns": run.turns,
                "error": run.error,
            }
        )
    return by_task


def as_json(result: ModelResult) -> dict[str, Any]:
    """One model's results as a JSON-ready object."""
    cost = result.cost_usd
    return {
        "model": result.model,
        "pass_rate": result.pass_rate,
        "passed": result.passed,
        "runs": len(result.runs),
        "cost_usd": None if cost is None else str(cost),
        "tokens": result.tokens,
        "seconds": round(result.seconds, 3),
        "tool_less": result.tool_less,
        "local": result.local,
        "tasks": _tasks(result),
    }


def plot_text(results: list[ModelResult], width: int = 50, height: int = 10) -> str:
    """Pass rate (up) against total cost (right) as a text scatter; each model is a
    letter, named in the legend under it. Unpriced models sit at cost 0, said so."""
    costs = [float(r.cost_usd or 0) for r in results]
    top = max(costs) or 1.0
    grid = [[" "] * (width + 1) for _ in range(height + 1)]
    points = []
    for index, (result, cost) in enumerate(zip(results, costs, strict=True)):
        x = round(cost / top * width)
        y = height - round(result.pass_rate * height)
        points.append((y, x))
        # Models on the same point share a "*", and the legend says which.
        grid[y][x] = "*" if grid[y][x] != " " else chr(ord("A") + index % 26)
    lines = []
    for row, cells in enumerate(grid):
        label = f"{(height - row) / height:4.0%}" if row % (height // 2 or 1) == 0 else "    "
        lines.append(f"{label} |{''.join(cells)}".rstrip())
    lines.append("     +" + "-" * (width + 1))
    shown = max(costs)
    lines.append(f"      $0{'cost':^{max(width - 10, 4)}}${shown:.4f}")
    for index, result in enumerate(results):
        note = " (unpriced: drawn at $0)" if result.cost_usd is None else ""
        if points.count(points[index]) > 1:
            note += " (at *: the same point as another)"
        lines.append(f"      {chr(ord('A') + index % 26)} = {result.model}{note}")
    return "\n".join(lines)


def plot_png(results: list[ModelResult], path: Path) -> bool:
    """The scatter as a PNG at ``path``; False when matplotlib is not installed."""
    # Imported by name: matplotlib is optional, and no checker needs its types here.
    try:
        importlib.import_module("matplotlib").use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(6, 4))
    for result in results:
        cost = float(result.cost_usd or 0)
        axes.scatter([cost], [result.pass_rate * 100])
        axes.annotate(result.model, (cost, result.pass_rate * 100), fontsize=8)
    axes.set_xlabel("total cost (USD)")
    axes.set_ylabel("pass rate (%)")
    axes.set_ylim(-5, 105)
    axes.set_title("modelplug bench: pass rate against cost")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return True
