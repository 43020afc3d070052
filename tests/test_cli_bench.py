"""``modelplug bench`` end to end, as a real process: the shipped tasks run against two
scripted models (project-local plugins of a trusted project, see tests/bench_scripted):
one passes every task, one fails every task, so the judging is shown to fail a wrong
fix. Then ``--json``, ``--tasks``/``--only-tasks``, a tool-less model, the exit status,
the path checks of the workspace tools and ``--suggest`` writing the user's settings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest
from modelplug.cli.bench.report import ModelResult, plot_text, table
from modelplug.cli.bench.runner import RunResult
from modelplug.cli.bench.suggest import apply_to_text, billions, guess_price
from modelplug.cli.bench.workspace import Workspace

SCRIPTED = Path(__file__).resolve().parent / "bench_scripted"
TASKS = ("fix_failing_test", "implement_stub", "rename_function")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name in ("scripted.py", "solver.py", "failer.py"):
        shutil.copy(SCRIPTED / name, root / name)
    (root / "pyproject.toml").write_text('[tool.modelplug.plugins]\nlocal = ["solver", "failer"]\n')
    return root


def bench(
    project: Path, *args: str, stdin: str = "", config: str | None = None
) -> subprocess.CompletedProcess[str]:
    user = project.parent / "user.toml"
    if config is not None or not user.exists():
        user.write_text(f"trusted_projects = [{json.dumps(str(project))}]\n" + (config or ""))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env |= {
        "MODELPLUG_CONFIG": str(user),
        "MODELPLUG_DATA_DIR": str(project.parent / "data"),
        "NO_COLOR": "1",
        "BENCH_ESCAPE": str(project.parent / "escaped.py"),
    }
    return subprocess.run(
        [sys.executable, "-m", "modelplug", "bench", *args],
        cwd=project,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_bench_passes_the_solver_and_fails_the_failer_on_every_task(project: Path) -> None:
    done = bench(project, "-m", "solver/good", "-m", "failer/bad", "--runs", "1", "--json")
    assert done.returncode == 0, done.stderr
    solver, failer = (json.loads(line) for line in done.stdout.splitlines())
    assert solver["model"] == "solver/good"
    assert (solver["pass_rate"], solver["passed"], solver["runs"]) == (1.0, 3, 3)
    assert sorted(solver["tasks"]) == sorted(TASKS)
    for task in solver["tasks"].values():
        (run,) = task["runs"]
        assert (run["passed"], run["ending"], run["turns"]) == (True, "answered", 3)
    assert Decimal(solver["cost_usd"]) > 0 and solver["tokens"] > 0
    assert (failer["pass_rate"], failer["passed"], failer["cost_usd"]) == (0.0, 0, None)
    assert all(not t["runs"][0]["passed"] for t in failer["tasks"].values())
    assert not solver["tool_less"] and not failer["tool_less"]
    # The failer wrote $BENCH_ESCAPE: refused, so nothing appeared outside its copy.
    assert not (project.parent / "escaped.py").exists()


def test_the_table_and_plot_name_every_model(project: Path) -> None:
    png = project.parent / "plot.png"
    done = bench(
        project, "-m", "solver/good", "-m", "failer/bad", "--runs", "2", "--plot", str(png)
    )
    assert done.returncode == 0, done.stderr
    # A PNG when matplotlib is installed, else a line saying there is none.
    assert png.exists() or "no PNG: matplotlib is not installed" in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["model", "passed", "rate", "cost", "tokens", "time"]
    assert lines[1].split()[:3] == ["solver/good", "6/6", "100%"]
    assert lines[2].split()[:4] == ["failer/bad", "0/6", "0%", "unpriced"]
    assert "A = solver/good" in done.stdout and "B = failer/bad (unpriced" in done.stdout
    assert "solver/good rename_function 2/2: pass" in done.stderr
    assert "failer/bad fix_failing_test 1/2: fail (answered)" in done.stderr


def test_user_tasks_are_added_or_run_alone(project: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine" / "always_true"
    mine.mkdir(parents=True)
    (mine / "task.toml").write_text(
        'prompt = "Nothing to do: stats.py and slugify and area_of are fine."\n'
        'check = "python -c \\"import sys; sys.exit(0)\\""\ntimeout_s = 30\n'
    )
    done = bench(project, "-m", "failer/bad", "--runs", "1", "--tasks", str(mine.parent), "--json")
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(done.stdout)["tasks"]) == sorted([*TASKS, "always_true"])
    done = bench(
        project,
        "-m",
        "failer/bad",
        "--runs",
        "1",
        "--tasks",
        str(mine.parent),
        "--only-tasks",
        "--json",
    )
    result = json.loads(done.stdout)
    assert (list(result["tasks"]), result["pass_rate"]) == (["always_true"], 1.0)


def test_a_broken_task_or_unknown_model_exits_2_and_says_why(project: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "t"
    broken.mkdir(parents=True)
    (broken / "task.toml").write_text('prompt = "x"\n')
    done = bench(project, "-m", "solver/good", "--tasks", str(broken.parent))
    assert done.returncode == 2
    assert "'check' must be a non-empty string" in done.stderr
    done = bench(project, "-m", "nowhere/model", "--runs", "1")
    assert done.returncode == 2 and "nowhere" in done.stderr


def test_a_tool_less_model_still_runs_every_task_and_is_marked(project: Path) -> None:
    config = '[models."solver/plain"]\nsupports_tools = false\n'
    done = bench(project, "-m", "solver/plain", "--runs", "1", config=config)
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[1]
    assert row.startswith("solver/plain (tool-less)") and " 0/3 " in row


def test_suggest_shows_the_change_and_writes_only_when_confirmed(project: Path) -> None:
    args = ("-m", "solver/good", "-m", "failer/bad", "--runs", "1", "--suggest")
    config = '[aliases]\nfast = "echo"\nother = "echo"\n'
    done = bench(project, *args, stdin="n\n", config=config)
    assert done.returncode == 0, done.stderr
    assert '- [aliases] fast = "echo"' in done.stdout
    assert '+ [aliases] fast = "solver/good"' in done.stdout
    assert '+ [roles] smart = "solver/good"' in done.stdout
    assert "failer/bad: guessed from its name" in done.stdout
    assert "not written" in done.stdout
    user = project.parent / "user.toml"
    assert tomllib.loads(user.read_text())["aliases"]["fast"] == "echo"
    done = bench(project, *args, stdin="y\n")
    assert "written to" in done.stdout
    data = tomllib.loads(user.read_text())
    assert data["aliases"] == {"fast": "solver/good", "cheap": "solver/good", "other": "echo"}
    assert data["roles"] == {"smart": "solver/good", "worker": "solver/good"}
    assert str(project) in data["trusted_projects"]
    done = bench(project, *args, "--yes")
    assert "(unchanged)" in done.stdout and "written" not in done.stdout


def test_the_workspace_refuses_paths_outside_its_folder(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    root = tmp_path / "copy"
    root.mkdir()
    space = Workspace(root, 10)
    for path in ("../secret.txt", "/etc/passwd", "sub/../../secret.txt"):
        text, error = space.call("read_file", {"path": path})
        assert error and "outside the task folder" in text
    text, error = space.call("write_file", {"path": "a/b.py", "content": "x"})
    assert not error and (root / "a" / "b.py").read_text() == "x"
    assert space.call("nope", {}) == (
        "no tool named 'nope': use list_files, read_file, write_file or run",
        True,
    )


def test_a_command_sees_no_key_of_yours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    space = Workspace(tmp_path, 30)
    status, output = space.run('python -c "import os; print(sorted(os.environ))"', 30)
    assert status == 0
    assert "OPENAI_API_KEY" not in output and "HTTPS_PROXY" not in output


def test_a_command_past_its_time_is_killed(tmp_path: Path) -> None:
    status, output = Workspace(tmp_path, 1).run('python -c "import time; time.sleep(60)"', 0.5)
    assert status == 124 and output.startswith("killed after")


def test_apply_to_text_keeps_the_rest_of_the_file() -> None:
    text = 'model = "echo"\n\n[aliases]\nfast = "old"\nkeep = "x"\n\n[http]\nmax_connections = 5'
    new = apply_to_text(text, {"fast": "a/b", "worker": "c/d"})
    data = tomllib.loads(new)
    assert data["aliases"] == {"fast": "a/b", "keep": "x"}
    assert data["roles"] == {"worker": "c/d"} and data["http"] == {"max_connections": 5}
    assert data["model"] == "echo"


def test_a_guess_from_the_name() -> None:
    assert guess_price("gpt-4o-mini") < guess_price("some-model") < guess_price("claude-opus-4")
    assert billions("qwen3:8b") == 8 and billions("gemma-3-270m") == 0.27
    assert billions("gpt-4o") is None


def test_the_text_plot_places_each_model_by_pass_rate_and_cost() -> None:
    cheap = ModelResult("a/cheap", [RunResult("t", True, "answered", Decimal("0.01"))])
    dear = ModelResult("b/dear", [RunResult("t", False, "answered", Decimal("0.04"))])
    lines = plot_text([cheap, dear], width=4, height=2).splitlines()
    assert lines[0] == "100% | A"
    assert lines[2] == "  0% |    B"
    assert "a/cheap" in table([cheap, dear]) and "$0.0400" in table([cheap, dear])
    same = ModelResult("c/same", [RunResult("t", False, "answered", Decimal("0.04"))])
    lines = plot_text([cheap, dear, same], width=4, height=2).splitlines()
    assert lines[2] == "  0% |    *"
    assert lines[-1].endswith("C = c/same (at *: the same point as another)")


def test_the_png_plot_is_skipped_and_said_without_matplotlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from modelplug.cli.bench import report

    real = importlib.import_module

    def no_matplotlib(name: str, package: str | None = None) -> object:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(report.importlib, "import_module", no_matplotlib)
    one = ModelResult("a/m", [RunResult("t", True, "answered", Decimal("0.01"))])
    assert report.plot_png([one], tmp_path / "plot.png") is False
    assert not (tmp_path / "plot.png").exists()
