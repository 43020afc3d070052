"""Startup cost: ``import modelplug`` + ``Client()`` + ``resolve()`` with every installed
plugin, beside ``import litellm`` and ``import llm`` when those are installed.

Each measurement is a separate cold process (run several times; the median is printed).
Time is measured inside the process around the import and calls; peak RSS is the
process's maximum resident set. Targets on a 2-core machine: <= 0.35 s, <= 50 MB, and
<= 5% of litellm's import time.

    python bench/startup.py [--runs 7] [--peers-python PATH] [--instructions]

``--instructions`` also counts each case's instructions under valgrind's callgrind
(less the empty interpreter's), which, unlike time on a shared machine, is repeatable.

litellm and llm pull in the old httpx and much else, so they are best kept out of the
project's environment: ``--peers-python`` names another interpreter that has them
(e.g. a venv made with ``python -m venv /tmp/peers && /tmp/peers/bin/pip install litellm llm``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from importlib.util import find_spec

from callgrind import count_instructions, have_valgrind

PROBE = """
import json, resource, sys, time
t0 = time.perf_counter()
{body}
elapsed = time.perf_counter() - t0
top = {{m.split('.')[0] for m in sys.modules}}
heavy = sorted(top & {{'httpx2', 'httpx', 'anthropic', 'openai', 'genai_prices'}})
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": elapsed, "rss_mb": rss, "heavy": heavy}}))
"""

CASES = {
    "modelplug (import + Client() + resolve())": (
        "modelplug",
        "import modelplug\nc = modelplug.Client()\nr = c.resolve('echo')\nn = len(c.plugins())",
    ),
    "modelplug (import only)": ("modelplug", "import modelplug"),
    "python (empty)": (None, "pass"),
    "litellm (import)": ("litellm", "import litellm"),
    "llm (import)": ("llm", "import llm"),
}


def measure(body: str, runs: int, python: str = sys.executable) -> dict[str, object]:
    results = []
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MODELPLUG_CONFIG": os.path.join(home, "none.toml")}
        for _ in range(runs):
            out = subprocess.run(
                [python, "-c", PROBE.format(body=body)],
                capture_output=True,
                text=True,
                env=env,
                cwd=home,
                check=True,
            )
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "seconds": statistics.median(r["seconds"] for r in results),
        "rss_mb": statistics.median(r["rss_mb"] for r in results),
        "heavy": results[0]["heavy"],
    }


def _has(python: str, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", probe], capture_output=True).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peers-python", help="an interpreter that has litellm and llm")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (callgrind)"
    )
    args = parser.parse_args()
    if args.instructions and not have_valgrind():
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    version = sys.version.split()[0]
    print(f"python {version} on {os.cpu_count()} cores, {args.runs} cold runs each (median)\n")
    measured: dict[str, dict[str, object]] = {}
    for name, (module, body) in CASES.items():
        python = sys.executable
        if module is not None and find_spec(module) is None:
            if args.peers_python and _has(args.peers_python, module):
                python = args.peers_python
            else:
                print(f"{name:<44} skipped: {module} is not installed (see --peers-python)")
                continue
        measured[name] = result = measure(body, args.runs, python)
        if args.instructions:
            result["instructions"] = count_instructions([python, "-c", body]) - count_instructions(
                [python, "-c", "pass"]
            )
        heavy = f"  heavy modules: {', '.join(result['heavy'])}" if result["heavy"] else ""
        counted = result.get("instructions")
        extra = f"  {counted / 1e6:,.0f} M instructions" if counted else ""
        print(
            f"{name:<44} {result['seconds']:.3f} s  {result['rss_mb']:.1f} MB peak RSS"
            f"{extra}{heavy}"
        )
    ours = measured["modelplug (import + Client() + resolve())"]
    print()
    print(f"target: modelplug <= 0.35 s -> {'ok' if ours['seconds'] <= 0.35 else 'MISSED'}")
    print(f"target: modelplug <= 50 MB  -> {'ok' if ours['rss_mb'] <= 50 else 'MISSED'}")
    clean = "ok" if not ours["heavy"] else "MISSED"
    print(f"target: no vendor SDK, httpx2 or price data at startup -> {clean}")
    for peer in ("litellm (import)", "llm (import)"):
        if peer in measured:
            ratio = float(ours["seconds"]) / float(measured[peer]["seconds"])  # type: ignore[arg-type]
            note = " (target <= 5%)" if peer.startswith("litellm") else ""
            print(f"ratio modelplug / {peer.split()[0]}: {ratio:.1%}{note}")
            if "instructions" in ours and "instructions" in measured[peer]:
                counted = float(ours["instructions"]) / float(measured[peer]["instructions"])  # type: ignore[arg-type]
                print(f"  in instructions: {counted:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
