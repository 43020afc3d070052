"""Startup on the user's path: a cold process that imports modelplug, makes a
``Client()`` with every plugin of the repository installed and resolves three real
models (hosted, local, routed), beside ``import llm; llm.get_models()`` and
``import litellm`` (with ``LITELLM_LOCAL_MODEL_COST_MAP=True``, so it does not spend its
time retrying a download of its price map).

    python bench/startup.py [--runs 7] [--peers-python PATH] [--instructions]

Each case runs ``--runs`` times as a separate cold process, the cases alternating round
by round so that a busy machine slows them all alike; the median is printed. One
uncounted run per case comes first, with bytecode writing on, so that every case reads
compiled bytecode as an installed package does (without it, an environment with
PYTHONDONTWRITEBYTECODE compiles pydantic or litellm from source on every start). Time is
measured inside the process, from before the first import to after the last call; peak
RSS is the process's maximum resident set. The routes must carry their context windows
(checked), and the process must not have imported genai-prices, pydantic, httpx2,
asyncio or a vendor SDK (printed). Targets, as ratios measured in this run: at most 20%
of llm's time, at most 4% of litellm's, and at most 30 MB.

``... with the plugin lock`` is the same path with ``MODELPLUG_PLUGIN_LOCK`` naming a lock of
every installed plugin (written by ``modelplug plugins lock`` before the runs; its file
digests cached by the uncounted first run, as a user's first start caches them). Target:
at most 10% slower than without the lock, measured in this run.

``--instructions`` also counts each case's instructions under valgrind's callgrind
(less the empty interpreter's), which, unlike time on a shared machine, is repeatable.

litellm and llm pull in the old httpx and much else, so they live in their own
interpreter: ``--peers-python`` (default ``bench/.peers/bin/python`` when it exists; make
it with ``uv venv bench/.peers && uv pip install --python bench/.peers/bin/python
litellm llm openai httpx2``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from callgrind import count_instructions, have_valgrind

HERE = Path(__file__).resolve().parent
DEFAULT_PEERS = HERE / ".peers" / "bin" / "python"

PROBE = """
import json, resource, sys, time
t0 = time.perf_counter()
{body}
elapsed = time.perf_counter() - t0
top = {{m.split('.')[0] for m in sys.modules}}
watch = {{'httpx2', 'httpx', 'anthropic', 'openai', 'genai_prices', 'pydantic', 'asyncio'}}
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": elapsed, "rss_mb": rss, "heavy": sorted(top & watch)}}))
"""

REAL_PATH = """import modelplug
c = modelplug.Client()
a = c.resolve("anthropic/claude-sonnet-4-6")
o = c.resolve("ollama/qwen3:8b")
r = c.resolve("openrouter/qwen/qwen3-coder")
assert (a.info.context_window, a.info.max_output_tokens) == (1_000_000, 128_000), a.info
assert r.info.context_window == 262_144 and o.info.context_window, (r.info, o.info)"""

OURS = "modelplug: import, Client(), resolve() x3"
LOCKED = "... with the plugin lock"
LLM = "llm: import, get_models()"
LITELLM = "litellm: import (local cost map)"
# name: (module that must be importable, body, extra environment)
CASES: dict[str, tuple[str | None, str, dict[str, str]]] = {
    OURS: ("modelplug", REAL_PATH, {}),
    LOCKED: ("modelplug", REAL_PATH, {"MODELPLUG_PLUGIN_LOCK": "{home}/modelplug.lock"}),
    "modelplug: import only": ("modelplug", "import modelplug", {}),
    "python: empty": (None, "pass", {}),
    LLM: ("llm", "import llm\nmodels = llm.get_models()", {}),
    LITELLM: ("litellm", "import litellm", {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}),
}


def write_lock(python: str, env: dict[str, str], home: str) -> str:
    """Lock every installed plugin in ``home``/modelplug.lock; say how many."""
    lock = os.path.join(home, "modelplug.lock")
    subprocess.run(
        [python, "-c", "from modelplug.cli import main; main()", "plugins", "lock"],
        env={**env, "MODELPLUG_PLUGIN_LOCK": lock},
        cwd=home,
        check=True,
        capture_output=True,
    )
    with open(lock, encoding="utf-8") as handle:
        text = handle.read()
    plugins = text.count("\n[plugins.") - text.count(".files]")
    return f"the lock holds {plugins} plugins, {text.count(chr(10))} lines\n"


def run_once(python: str, body: str, env: dict[str, str], home: str) -> dict[str, object]:
    env = {k: v.replace("{home}", home) for k, v in env.items()}
    out = subprocess.run(
        [python, "-c", PROBE.format(body=body)],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _has(python: str, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", probe], capture_output=True).returncode == 0


def interpreter(module: str | None, peers: str | None) -> str | None:
    """This interpreter when it has ``module``, else the peers one, else None."""
    if module is None or _has(sys.executable, module):
        return sys.executable
    if peers and _has(peers, module):
        return peers
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--peers-python",
        default=str(DEFAULT_PEERS) if DEFAULT_PEERS.exists() else None,
        help="an interpreter that has litellm and llm",
    )
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (callgrind)"
    )
    args = parser.parse_args()
    if args.instructions and not have_valgrind():
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    print(
        f"python {sys.version.split()[0]} on {os.cpu_count()} cores, {args.runs} cold runs "
        "per case, alternating (median)\n"
    )
    pythons = {}
    for name, (module, _, _) in CASES.items():
        python = interpreter(module, args.peers_python)
        if python is None:
            print(f"{name:<42} skipped: {module} is not installed (see --peers-python)")
        else:
            pythons[name] = python
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in pythons}
    with tempfile.TemporaryDirectory() as home:
        base = {**os.environ, "MODELPLUG_CONFIG": os.path.join(home, "none.toml")}
        base["MODELPLUG_DATA_DIR"] = os.path.join(home, "data")
        base.pop("MODELPLUG_PLUGIN_LOCK", None)
        if LOCKED in pythons:
            print(write_lock(pythons[LOCKED], base, home))
        # A user's installation has its bytecode compiled (pip and uv write it, or the
        # first run does): one uncounted run per case writes it, which an environment
        # with PYTHONDONTWRITEBYTECODE set would never do.
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        for name, python in pythons.items():
            _, body, extra = CASES[name]
            run_once(python, body, {**base, **extra}, home)
        for _ in range(args.runs):
            for name, python in pythons.items():
                _, body, extra = CASES[name]
                runs[name].append(run_once(python, body, {**base, **extra}, home))
        measured: dict[str, dict[str, float | list[str]]] = {}
        for name, results in runs.items():
            seconds = [float(r["seconds"]) for r in results]  # type: ignore[arg-type]
            rss = [float(r["rss_mb"]) for r in results]  # type: ignore[arg-type]
            measured[name] = row = {
                "seconds": statistics.median(seconds),
                "low": min(seconds),
                "high": max(seconds),
                "rss_mb": statistics.median(rss),
                "heavy": list(results[0]["heavy"]),  # type: ignore[call-overload]
            }
            if args.instructions:
                _, body, extra = CASES[name]
                env = {k: v.replace("{home}", home) for k, v in {**base, **extra}.items()}
                row["instructions"] = count_instructions(
                    [pythons[name], "-c", body], env=env, cwd=home
                ) - count_instructions([pythons[name], "-c", "pass"], env=env, cwd=home)
            heavy = f"  imported: {', '.join(row['heavy'])}" if row["heavy"] else ""  # type: ignore[arg-type]
            counted = row.get("instructions")
            extra_note = f"  {float(counted) / 1e6:,.0f} M instr" if counted else ""  # type: ignore[arg-type]
            print(
                f"{name:<42} {row['seconds']:.3f} s ({row['low']:.3f}-{row['high']:.3f})"
                f"  {row['rss_mb']:.1f} MB{extra_note}{heavy}"
            )
    return report(measured)


def report(measured: dict[str, dict[str, float | list[str]]]) -> int:
    ours = measured[OURS]
    seconds, rss = float(ours["seconds"]), float(ours["rss_mb"])  # type: ignore[arg-type]
    print("\ntargets (ratios from this run):")
    print(f"  peak RSS {rss:.1f} MB [<= 30 MB] {'ok' if rss <= 30 else 'MISSED'}")
    print(
        "  nothing heavy imported (genai-prices, pydantic, httpx2, asyncio, SDKs) "
        f"{'ok' if not ours['heavy'] else 'MISSED: ' + ', '.join(ours['heavy'])}"  # type: ignore[arg-type]
    )
    if LOCKED in measured:
        locked = float(measured[LOCKED]["seconds"])  # type: ignore[arg-type]
        ratio = locked / seconds
        verdict = "ok" if ratio <= 1.10 else "MISSED"
        line = f"  with the plugin lock / without {ratio:6.1%} [<= 110%] {verdict}"
        line += f"  ({locked:.3f} s / {seconds:.3f} s)"
        if "instructions" in ours and "instructions" in measured[LOCKED]:
            counted = float(measured[LOCKED]["instructions"]) / float(ours["instructions"])  # type: ignore[arg-type]
            line += f"  (instructions: {counted:.1%})"
        print(line)
    for peer, target in ((LLM, 0.20), (LITELLM, 0.04)):
        if peer not in measured:
            print(f"  / {peer}: skipped (not installed)")
            continue
        ratio = seconds / float(measured[peer]["seconds"])  # type: ignore[arg-type]
        verdict = "ok" if ratio <= target else "MISSED"
        line = f"  modelplug / {peer:<34} {ratio:6.1%} [<= {target:.0%}] {verdict}"
        if "instructions" in ours and "instructions" in measured[peer]:
            counted = float(ours["instructions"]) / float(measured[peer]["instructions"])  # type: ignore[arg-type]
            line += f"  (instructions: {counted:.1%})"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
