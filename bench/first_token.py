"""Time to the first token from a cold process: import, make a client, resolve, connect
to a loopback server, and read the first text delta of a streamed chat call, for
modelplug (the plain ``Client()``, every plugin installed), the openai SDK and litellm.

    python bench/first_token.py [--runs 7] [--peers-python PATH]

The server (bench/stream.py's, in its own process) streams a short Chat Completions
answer. Each case runs ``--runs`` times as a fresh process (after one uncounted run that
writes the bytecode, as an installed package has it), the cases alternating round by
round; the median (and range) of the in-process time from before the first import
to the first text is printed, with peak RSS, and the ratios from the same run.
modelplug reads its provider from a settings file (``[providers.bench]``, an
openai-compatible server), as a user's program would. litellm runs with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` and, like llm, lives in ``--peers-python``
(default ``bench/.peers/bin/python``) when it is not installed here.
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

HERE = Path(__file__).resolve().parent
PEERS = HERE / ".peers" / "bin" / "python"
sys.path.insert(0, str(HERE))

from stream import start_server  # noqa: E402

PROBE = """
import json, resource, sys, time
t0 = time.perf_counter()
{body}
elapsed = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": elapsed, "rss_mb": rss, "first": first}}))
"""

CASES = {
    "modelplug": (
        "modelplug",
        """import modelplug
client = modelplug.Client()
for event in client.stream("bench/bench-model", "hi"):
    if type(event).__name__ == "TextDelta":
        first = event.text
        break""",
    ),
    "openai SDK": (
        "openai",
        """import openai
sdk = openai.OpenAI(base_url=URL + "/v1", api_key="bench", max_retries=0)
stream = sdk.chat.completions.create(
    model="bench-model", messages=[{"role": "user", "content": "hi"}], stream=True
)
for chunk in stream:
    if chunk.choices and chunk.choices[0].delta.content:
        first = chunk.choices[0].delta.content
        break""",
    ),
    "litellm": (
        "litellm",
        """import litellm
stream = litellm.completion(
    model="openai/bench-model", api_base=URL + "/v1", api_key="bench",
    messages=[{"role": "user", "content": "hi"}], stream=True,
)
for chunk in stream:
    if chunk.choices and chunk.choices[0].delta.content:
        first = chunk.choices[0].delta.content
        break""",
    ),
}


def has(python: str, module: str) -> bool:
    probe = f"import importlib.util as u, sys; sys.exit(u.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", probe], capture_output=True).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peers-python", default=str(PEERS) if PEERS.exists() else None)
    args = parser.parse_args()
    pythons: dict[str, str] = {}
    for name, (module, _) in CASES.items():
        for python in (sys.executable, args.peers_python):
            if python and has(python, module):
                pythons[name] = python
                break
        else:
            print(f"{name}: skipped ({module} is not installed; see --peers-python)")
    process, url = start_server(20)
    try:
        with tempfile.TemporaryDirectory() as home:
            config = Path(home) / "config.toml"
            config.write_text(
                f'[providers.bench]\ntype = "openai-compatible"\nbase_url = "{url}/v1"\n'
            )
            env = {
                **os.environ,
                "MODELPLUG_CONFIG": str(config),
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            }
            # Compiled bytecode, as an installed package has it (see bench/startup.py).
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in pythons}
            for round_ in range(args.runs + 1):
                for name, python in pythons.items():
                    body = f"URL = {url!r}\n" + CASES[name][1]
                    out = subprocess.run(
                        [python, "-c", PROBE.format(body=body)],
                        capture_output=True,
                        text=True,
                        env=env,
                        cwd=home,
                    )
                    if out.returncode:
                        raise SystemExit(f"{name} failed:\n{out.stderr[-2000:]}")
                    if round_:  # the first round only writes the bytecode
                        runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        process.kill()
        process.wait()
    print(
        f"cold process to the first text delta from a loopback server, {args.runs} runs "
        "per case, alternating (median, range)"
    )
    medians = {}
    for name, results in runs.items():
        seconds = [r["seconds"] for r in results]
        medians[name] = statistics.median(seconds)
        rss = statistics.median(r["rss_mb"] for r in results)
        print(
            f"  {name:<12} {medians[name]:.3f} s ({min(seconds):.3f}-{max(seconds):.3f})  "
            f"{rss:.1f} MB peak RSS"
        )
    if "modelplug" in medians:
        for peer in ("openai SDK", "litellm"):
            if peer in medians:
                ratio = medians["modelplug"] / medians[peer]
                print(f"  modelplug / {peer:<10} {ratio:6.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
