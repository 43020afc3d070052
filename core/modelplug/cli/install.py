"""``modelplug install NAME...``: install plugins with pip, carefully, then lock them.

1. pip resolves what it would install into this environment (``pip install --dry-run
   --report``, wheels only: an sdist runs its build code before anything can look at it),
   from the index pip is configured with.
2. pip downloads exactly those wheels into a temporary directory (``pip download
   --no-deps``); each must have the digest the resolution named.
3. Each wheel is opened: one that would put a ``.pth`` file with an executable line into
   site-packages is refused, naming the file (``--allow-pth NAME`` accepts it). With
   ``--min-age``, a release the index says was uploaded more recently is refused; where
   the index does not say (no PEP 700 ``upload-time``), that is said.
4. pip installs those very files (``--no-index --no-deps``), and the lock, when one is
   set, is updated for the distributions just installed (the others stay as locked).

Nothing is installed when anything is refused.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.cli.package_index import index_urls, upload_time
from modelplug.cli.plugin_lock import lock_path, relock
from modelplug.cli.pth_audit import wheel_pth_files
from modelplug.contract.secrets import redact
from modelplug.host.file_digests import sha256_of
from modelplug.host.plugin_lock import LOCK_FILE_NAME, canonical_name

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["add_parser", "parse_age", "run"]

AGE = re.compile(r"^(\d+)([smhdw])$")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass
class Planned:
    """One distribution pip would install: its name, version and wheel digest."""

    name: str
    version: str
    sha256: str | None
    wheel: Path | None = None


def parse_age(text: str) -> timedelta:
    """``7d``, ``12h``, ``2w``, ``30m``, ``90s`` as a timedelta."""
    match = AGE.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an age: give a number and a unit, e.g. 7d, 12h, 2w"
        )
    return timedelta(**{UNITS[match.group(2)]: int(match.group(1))})


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    install = sub.add_parser(
        "install",
        help="install plugins with pip, refusing .pth files that run code, and lock them",
        description=(
            "Install plugins with pip into the environment modelplug runs in (pip's own "
            "index settings decide where from), refusing a wheel that holds a .pth file "
            "with an executable line, then update the plugin lock."
        ),
    )
    install.add_argument("names", nargs="+", metavar="NAME", help="what to install (pip syntax)")
    install.add_argument(
        "--allow-pth",
        action="append",
        default=[],
        metavar="NAME",
        help="accept this distribution's .pth file that runs code (repeatable)",
    )
    install.add_argument(
        "--min-age",
        type=parse_age,
        metavar="AGE",
        help="refuse a release uploaded less than AGE ago (e.g. 7d) where the index says when",
    )
    install.add_argument("--upgrade", "-U", action="store_true", help="upgrade to the newest")
    install.set_defaults(handler=run)


def run(args: argparse.Namespace, client: Client) -> int:
    pip = [sys.executable, "-m", "pip"]
    if subprocess.run([*pip, "--version"], capture_output=True).returncode != 0:
        print(
            f"modelplug: pip is not installed for {sys.executable}; add it with "
            f"`{sys.executable} -m ensurepip`",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="modelplug-install-") as scratch:
        where = Path(scratch)
        plan = _resolve(pip, args, where)
        if plan is None:
            return 1
        if plan and not _download(pip, plan, where):
            return 1
        refusals = _pth_refusals(plan, {canonical_name(n) for n in args.allow_pth})
        if args.min_age is not None:
            refusals += _age_refusals(pip, plan, args.min_age)
        for refusal in refusals:
            print(f"modelplug: refused {refusal}", file=sys.stderr)
        if refusals:
            print("modelplug: nothing was installed", file=sys.stderr)
            return 1
        if plan and not _install(pip, plan):
            return 1
    for item in plan:
        print(f"installed {item.name} {item.version}")
    if not plan:
        print("nothing to install: already satisfied")
    return _update_lock(client, [*(p.name for p in plan), *_requested_names(args.names)])


def _pip(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True)


def _failed(what: str, done: subprocess.CompletedProcess[str]) -> None:
    detail = (done.stderr or done.stdout).strip().splitlines()
    print(f"modelplug: pip could not {what}:", file=sys.stderr)
    for line in detail[-15:]:
        print(f"  {redact(line)}", file=sys.stderr)


def _resolve(pip: list[str], args: argparse.Namespace, where: Path) -> list[Planned] | None:
    report = where / "report.json"
    command = [*pip, "install", "--dry-run", "--quiet", "--only-binary", ":all:"]
    command += ["--report", str(report), *(["--upgrade"] if args.upgrade else []), *args.names]
    done = _pip(command)
    if done.returncode != 0:
        _failed("resolve " + " ".join(args.names), done)
        return None
    data = json.loads(report.read_text(encoding="utf-8"))
    plan = []
    for item in data.get("install", []):
        hashes = item.get("download_info", {}).get("archive_info", {}).get("hashes", {})
        meta = item["metadata"]
        plan.append(Planned(meta["name"], meta["version"], hashes.get("sha256")))
    return plan


def _download(pip: list[str], plan: list[Planned], where: Path) -> bool:
    wheels = where / "wheels"
    command = [*pip, "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
    command += ["--dest", str(wheels), *(f"{p.name}=={p.version}" for p in plan)]
    done = _pip(command)
    if done.returncode != 0:
        _failed("download the wheels", done)
        return False
    files = list(wheels.glob("*.whl"))
    for item in plan:
        prefix = re.sub(r"[-_.]+", "_", item.name).lower() + "-" + item.version + "-"
        found = [f for f in files if f.name.lower().startswith(prefix.lower())]
        digest = sha256_of(found[0]) if found else None
        if not found or (item.sha256 and digest != item.sha256):
            print(
                f"modelplug: the wheel pip downloaded for {item.name} {item.version} is not "
                "the one it resolved (its sha256 differs); nothing was installed",
                file=sys.stderr,
            )
            return False
        item.wheel = found[0]
    return True


def _pth_refusals(plan: list[Planned], allowed: set[str]) -> list[str]:
    out = []
    for item in plan:
        if item.wheel is None or canonical_name(item.name) in allowed:
            continue
        for member, line in wheel_pth_files(item.wheel):
            shown = redact(line)[:80]
            out.append(
                f"{item.name} {item.version}: its wheel {item.wheel.name} holds {member}, "
                f"which runs code at every Python start ({shown}); "
                f"`--allow-pth {item.name}` accepts it"
            )
    return out


def _age_refusals(pip: list[str], plan: list[Planned], min_age: timedelta) -> list[str]:
    indexes = index_urls(pip)
    now = datetime.now(UTC)
    out = []
    for item in plan:
        if item.wheel is None:
            continue
        uploaded = upload_time(indexes, item.name, item.wheel.name)
        if uploaded is None:
            print(
                f"modelplug: warning: the index does not say when {item.wheel.name} was "
                "uploaded (no PEP 700 upload-time), so --min-age was not checked for it",
                file=sys.stderr,
            )
            continue
        age = now - uploaded
        if age < min_age:
            out.append(
                f"{item.name} {item.version}: uploaded {uploaded:%Y-%m-%d %H:%M} UTC, "
                f"{_days(age)} ago, less than --min-age {_days(min_age)}"
            )
    return out


def _days(age: timedelta) -> str:
    hours = age.total_seconds() / 3600
    return f"{hours / 24:.1f} days" if hours >= 24 else f"{hours:.1f} hours"


def _install(pip: list[str], plan: list[Planned]) -> bool:
    wheels = [str(p.wheel) for p in plan if p.wheel is not None]
    done = _pip([*pip, "install", "--quiet", "--no-index", "--no-deps", *wheels])
    if done.returncode != 0:
        _failed("install the wheels", done)
        return False
    return True


def _requested_names(names: list[str]) -> list[str]:
    """The distribution names in pip requirement strings (``x>=1`` -> ``x``)."""
    return [m.group(0) for n in names if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", n))]


def _update_lock(client: Client, names: list[str]) -> int:
    path, named = lock_path(client.settings)
    if not named:
        print(
            "no plugin lock is set ([plugins] lock or MODELPLUG_PLUGIN_LOCK); "
            f"`modelplug plugins lock` writes {LOCK_FILE_NAME}"
        )
        return 0
    importlib.invalidate_caches()
    print(f"updating the plugin lock {path}:")
    _, notes = relock(client, only=names)
    for note in notes:
        print(f"note: {note} (locked as it is now)", file=sys.stderr)
    return 0
