"""The test kit's hypothesis profiles: a conftest that calls ``calm_hypothesis()`` runs
property tests at their full example counts in CI (``CI`` set) and at a quarter of them
on a contributor's machine, where the README's test command must finish in minutes;
``examples(n)`` scales a test's own count the same way. Each case is a real pytest run
in a subprocess, so the profile it loads never leaks into this run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = "from modelplug.testing import calm_hypothesis\n\ncalm_hypothesis()\n"
PROPERTY_TESTS = """
from hypothesis import given, settings, strategies as st
from modelplug.testing import examples

RUNS = {"default": 0, "own": 0}


@given(st.integers())
def test_default_count(n):
    RUNS["default"] += 1


@settings(max_examples=examples(300))
@given(st.integers())
def test_own_count(n):
    RUNS["own"] += 1


def test_report():
    print(f"\\nruns default={RUNS['default']} own={RUNS['own']} slow_ok={settings().deadline}")
"""


def run_property_tests(tmp_path: Path, **environ: str) -> str:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_counts.py").write_text(PROPERTY_TESTS)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "MODELPLUG_HYPOTHESIS_PROFILE", "PYTEST_ADDOPTS")
    }
    env.update(environ)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("runs ")]
    return line


def test_ci_runs_every_example_a_test_asks_for(tmp_path: Path) -> None:
    assert run_property_tests(tmp_path, CI="true") == "runs default=100 own=300 slow_ok=None"


def test_a_contributors_run_takes_a_quarter_of_the_examples(tmp_path: Path) -> None:
    assert run_property_tests(tmp_path) == "runs default=25 own=75 slow_ok=None"


@pytest.mark.parametrize(
    ("environ", "profile"),
    [
        ({"CI": "true"}, "ci"),
        ({"CI": "1"}, "ci"),
        ({"CI": "false"}, "dev"),
        ({"CI": "0"}, "dev"),
        ({}, "dev"),
        ({"MODELPLUG_HYPOTHESIS_PROFILE": "ci"}, "ci"),
        ({"CI": "true", "MODELPLUG_HYPOTHESIS_PROFILE": "dev"}, "dev"),
    ],
)
def test_the_profile_follows_ci_unless_one_is_named(environ: dict[str, str], profile: str) -> None:
    from modelplug.testing import hypothesis_profile

    assert hypothesis_profile(environ) == profile


def test_an_unknown_profile_name_says_which_exist() -> None:
    from modelplug.testing import hypothesis_profile

    with pytest.raises(ValueError, match=r"'quick': set it to one of ci, dev, or unset it"):
        hypothesis_profile({"MODELPLUG_HYPOTHESIS_PROFILE": "quick"})


def test_a_small_count_is_never_scaled_below_ten() -> None:
    script = (
        "from modelplug.testing import calm_hypothesis, examples\n"
        "calm_hypothesis('dev')\n"
        "print(examples(5), examples(25), examples(1000))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["5", "10", "250"]
