"""``modelplug bench``: judge models by outcome. A handful of small self-checking coding
tasks (shipped as data in ``modelplug/cli/bench_tasks``, more from ``--tasks DIR``) run
against each ``-m MODEL``, ``--runs`` times each, every run in its own throwaway folder
and judged by the task's check command (no model grades another); then a table of pass
rate, cost, tokens and wall time per model and a text plot of pass rate against cost.
``--suggest`` proposes the role names ``fast``, ``smart``, ``cheap`` and ``worker`` from
the results and writes them to your settings when you confirm.

The exit status is 0 whatever the pass rates; 2 when the bench could not run (a bad
task folder, a model that does not resolve, no pytest for a check that needs it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.contract.errors import RequestError

if TYPE_CHECKING:
    from modelplug.cli.bench.report import ModelResult
    from modelplug.cli.bench.tasks import Task
    from modelplug.client.client import Client
    from modelplug.contract.types import Route

# The bench's modules (pydantic types among them) are imported when it runs, not when the
# parser is built: every other command stays as light as it was.

__all__ = ["add_parser", "bench"]


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "bench",
        help="run small self-checking coding tasks against models: pass rate, cost, time",
        description=(
            "Run each task (a folder with task.toml and starting files) against each model "
            "in a throwaway copy, judged by the task's check command; print pass rate, "
            "cost, tokens and wall time per model and a plot of pass rate against cost. "
            "Exits 0 whatever the pass rates."
        ),
    )
    parser.add_argument(
        "-m", "--model", action="append", required=True, help="a model to bench (repeatable)"
    )
    parser.add_argument("--tasks", type=Path, help="a folder of your own task folders, added")
    parser.add_argument(
        "--only-tasks", action="store_true", help="run only the --tasks folder's tasks"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each task per model (3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per model")
    parser.add_argument("--plot", type=Path, help="also write the plot as a PNG (matplotlib)")
    parser.add_argument(
        "--suggest", action="store_true", help="propose fast/smart/cheap/worker from the results"
    )
    parser.add_argument("--yes", action="store_true", help="with --suggest: write without asking")
    parser.set_defaults(handler=bench)


def bench(args: argparse.Namespace, client: Client) -> int:
    from modelplug.cli.bench.report import as_json, plot_png, plot_text, table
    from modelplug.cli.bench.tasks import load_tasks

    if args.only_tasks and args.tasks is None:
        raise RequestError("--only-tasks needs --tasks DIR: the folder of tasks to run")
    if args.runs < 1:
        raise RequestError(f"--runs must be at least 1, not {args.runs}")
    tasks = load_tasks(args.tasks, only_extra=args.only_tasks)
    _check_pytest(tasks)
    routes = {spec: client.resolve(spec) for spec in args.model}
    results = [
        _bench_model(client, route, tasks, args.runs, quiet=args.json) for route in routes.values()
    ]
    by_name = {r.model: routes[spec] for r, spec in zip(results, routes, strict=True)}
    if args.json:
        for result in results:
            print(json.dumps(as_json(result)))
    else:
        print(table(results))
        print()
        print(plot_text(results))
    if args.plot is not None:
        if plot_png(results, args.plot):
            print(f"plot written to {args.plot}", file=sys.stderr)
        else:
            print("modelplug: no PNG: matplotlib is not installed", file=sys.stderr)
    if args.suggest:
        _suggest(client, results, by_name, args.yes)
    return 0


def _check_pytest(tasks: list[Task]) -> None:
    if any("pytest" in t.check for t in tasks) and importlib.util.find_spec("pytest") is None:
        raise RequestError(
            "the tasks' check runs pytest, which is not installed beside modelplug: "
            "pip install pytest"
        )


def _bench_model(
    client: Client, route: Route, tasks: list[Task], runs: int, *, quiet: bool
) -> ModelResult:
    from modelplug.cli.bench.report import ModelResult
    from modelplug.cli.bench.runner import run_task

    tools = route.info.supports_tools is not False
    result = ModelResult(route.name, local=route.endpoint.local)
    for task in tasks:
        for number in range(1, runs + 1):
            run = run_task(client, route, task, tools=tools)
            result.runs.append(run)
            if not quiet:
                mark = "pass" if run.passed else f"fail ({run.ending})"
                print(
                    f"{route.name} {task.name} {number}/{runs}: {mark}, {run.seconds:.1f}s",
                    file=sys.stderr,
                )
    return result


def _suggest(
    client: Client, results: list[ModelResult], routes: dict[str, Route], yes: bool
) -> None:
    from modelplug.cli.bench.suggest import apply_to_text, current_names, rank, suggest, table_for
    from modelplug.cli.config import create_user_file
    from modelplug.host.settings import user_config_path

    ranked = rank(client, results, routes)
    print("\ncheapest first:")
    for r in ranked:
        tools = " (tool-less: never smart or worker)" if r.result.tool_less else ""
        print(f"  {r.result.model}: {r.price_said} ${r.price:.2f}/Mtok weighted{tools}")
    chosen = {name: r.result.model for name, r in suggest(ranked).items()}
    if not chosen:
        print("no suggestion: no model passed anything")
        return
    path = client.settings.user_path or user_config_path()
    now = current_names(path, list(chosen))
    changes = {name: model for name, model in chosen.items() if now[name] != model}
    print(f"\nproposed for {path}:")
    for name, model in chosen.items():
        where = f"[{table_for(name)}] {name}"
        if name in changes:
            if now[name] is not None:
                print(f'- {where} = "{now[name]}"')
            print(f'+ {where} = "{model}"')
        else:
            print(f'  {where} = "{model}" (unchanged)')
    if not changes:
        return
    if not yes and not _confirmed(path):
        print("not written")
        return
    create_user_file(path)
    path.write_text(apply_to_text(path.read_text(encoding="utf-8"), changes), encoding="utf-8")
    print(f"written to {path}")


def _confirmed(path: Path) -> bool:
    print(f"write these to {path}? [y/N] ", end="", flush=True)
    answer = sys.stdin.readline()
    if not sys.stdin.isatty():
        print()  # the answer was not echoed: end the question's line
    return answer.strip().lower() in ("y", "yes")
