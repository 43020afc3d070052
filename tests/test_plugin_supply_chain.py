"""The plugin lock, the audit and the careful install, end to end: real wheels (written by
tests/plugin_index.py with a correct RECORD), served by a package index on 127.0.0.1,
installed by pip into a throwaway virtual environment, and modelplug run there as its own
process (the environment is the thing under test).

The throwaway environment has no pip or packages of its own: a path-only ``.pth`` file
lets it see the development environment's packages (see ``throwaway_venv``), so pip runs
from there but installs into the throwaway one, and nothing is downloaded but the test
wheels. One environment per module (per xdist worker); each test leaves the installed
files as it found them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import sysconfig
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
# The suite imports test modules by path (--import-mode=importlib): load the helper so.
_spec = importlib.util.spec_from_file_location("plugin_index", HERE / "plugin_index.py")
assert _spec is not None and _spec.loader is not None
plugin_index = sys.modules.setdefault("plugin_index", importlib.util.module_from_spec(_spec))
if not hasattr(plugin_index, "plugin_wheel"):
    _spec.loader.exec_module(plugin_index)
PluginIndex = plugin_index.PluginIndex
base_env = plugin_index.base_env
plugin_wheel = plugin_index.plugin_wheel
run_modelplug = plugin_index.run_modelplug
serving = plugin_index.serving
throwaway_venv = plugin_index.throwaway_venv

PTH_LINE = "import os; os.environ.setdefault('MODELPLUG_TEST_PTH_RAN', '1')\n"


class World:
    """The throwaway environment, its index and its settings."""

    def __init__(self, root: Path, index: PluginIndex, python: Path) -> None:
        self.root = root
        self.index = index
        self.python = python
        self.home = root / "home"
        self.lock = self.home / "modelplug.lock"
        self.wheels = index.directory
        out = self.run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])")
        self.site = Path(out.strip())

    def env(self, **extra: str) -> dict[str, str]:
        env = base_env(self.home)
        env.update(
            PIP_INDEX_URL=self.index.url("json"),
            MODELPLUG_PLUGIN_LOCK=str(self.lock),
            MODELPLUG_PLUGINS="modelplug-clean,modelplug-tampered",
        )
        env.update(extra)
        return {k: v for k, v in env.items() if v != ""}

    def modelplug(self, *args: str, **extra: str) -> Any:
        return run_modelplug(self.python, *args, env=self.env(**extra), cwd=self.home)

    def run_python(self, code: str, **extra: str) -> str:
        import subprocess

        done = subprocess.run(
            [str(self.python), "-c", code],
            capture_output=True,
            text=True,
            env=self.env(**extra) if hasattr(self, "home") else None,
            timeout=120,
        )
        return done.stdout + done.stderr

    def pip_install(self, wheel: Path) -> None:
        import subprocess

        subprocess.run(
            [str(self.python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
            check=True,
            env=self.env(),
            capture_output=True,
            timeout=120,
        )

    def plugins(self, **extra: str) -> dict[str, dict[str, Any]]:
        done = self.modelplug("plugins", "--json", **extra)
        assert done.returncode == 0, done.stderr
        return {p["name"]: p for p in json.loads(done.stdout)}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("supply-chain")
    wheels = root / "wheels"
    wheels.mkdir()
    old = datetime.now(UTC) - timedelta(days=30)
    made = [
        plugin_wheel(wheels, "modelplug-clean", "1.0"),
        plugin_wheel(wheels, "modelplug-tampered", "1.0"),
        plugin_wheel(wheels, "modelplug-evil", "1.0", extra_files={"evil_hook.pth": PTH_LINE}),
        plugin_wheel(wheels, "modelplug-fresh", "1.0"),
    ]
    (root / "home").mkdir()
    with serving(wheels) as index:
        for wheel in made:
            index.upload_times[wheel.name] = old
        index.upload_times[made[3].name] = datetime.now(UTC) - timedelta(hours=20)
        python = throwaway_venv(root / "venv")
        here = World(root, index, python)
        done = here.modelplug("install", "--min-age", "7d", "modelplug-clean", "modelplug-tampered")
        assert done.returncode == 0, done.stdout + done.stderr
        here.install_output = done.stdout + done.stderr  # type: ignore[attr-defined]
        yield here


@pytest.fixture
def tampered_file(world: World) -> Any:
    """The installed data file of modelplug-tampered, put back as it was afterwards."""
    path = world.site / "modelplug_tampered" / "data.txt"
    original = path.read_bytes()
    yield path
    path.write_bytes(original)


def test_install_writes_the_lock_with_version_entry_point_and_digests(world: World) -> None:
    assert "installed modelplug-clean 1.0" in world.install_output  # type: ignore[attr-defined]
    import tomllib

    lock = tomllib.loads(world.lock.read_text())
    clean = lock["plugins"]["modelplug-clean"]
    assert clean["version"] == "1.0"
    assert clean["entry_point"] == "modelplug-clean = modelplug_clean"
    assert clean["editable"] is False
    import hashlib

    installed = (world.site / "modelplug_clean" / "__init__.py").read_bytes()
    assert clean["files"]["modelplug_clean/__init__.py"] == hashlib.sha256(installed).hexdigest()
    # What the installer writes about the installation is not the wheel's: left out.
    assert not any(k.endswith(("INSTALLER", "REQUESTED", "RECORD")) for k in clean["files"])
    assert len(clean["sha256"]) == 64 and "modelplug-tampered" in lock["plugins"]


def test_locked_plugins_load_without_a_warning(world: World) -> None:
    done = world.modelplug("plugins", "--json")
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    assert plugins["modelplug-clean"]["enabled"] is True
    assert plugins["modelplug-tampered"]["enabled"] is True
    assert "plugin lock" not in done.stderr


def test_a_file_changed_after_install_keeps_the_plugin_out_naming_the_file(
    world: World, tampered_file: Path
) -> None:
    world.modelplug("plugins")  # the digests are now cached
    tampered_file.write_text("changed after install\n")
    done = world.modelplug("plugins", "--json")
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    assert plugins["modelplug-tampered"]["enabled"] is False
    assert plugins["modelplug-clean"]["enabled"] is True
    warning = [line for line in done.stderr.splitlines() if "modelplug-tampered" in line]
    assert len(warning) == 1, done.stderr
    assert "file modelplug_tampered/data.txt changed" in warning[0]
    assert "`modelplug plugins lock` accepts it" in warning[0]


def test_a_rewrite_that_keeps_size_and_mtime_is_still_caught(
    world: World, tampered_file: Path
) -> None:
    world.modelplug("plugins")  # cache the digest of the file as installed
    before = os.stat(tampered_file)
    original = tampered_file.read_bytes()
    tampered_file.write_bytes(bytes(reversed(original)))
    os.utime(tampered_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(tampered_file).st_size == before.st_size
    plugins = world.plugins()
    assert plugins["modelplug-tampered"]["enabled"] is False


def test_strict_mode_refuses_to_start_naming_the_distribution(
    world: World, tampered_file: Path
) -> None:
    strict = world.home / "strict.toml"
    strict.write_text('[plugins]\nlock_mode = "strict"\n')
    tampered_file.write_text("changed after install\n")
    done = world.modelplug("models", MODELPLUG_CONFIG=str(strict))
    assert done.returncode != 0
    assert "refusing to start" in done.stderr and "modelplug-tampered" in done.stderr
    code = (
        "import modelplug\n"
        "try:\n    modelplug.Client()\n"
        "except modelplug.PluginLockError as exc:\n    print('refused', exc.distributions)\n"
    )
    out = world.run_python(code, MODELPLUG_CONFIG=str(strict))
    assert "refused ['modelplug-tampered']" in out


def test_a_plugin_not_in_the_lock_and_one_removed_since_are_named(world: World) -> None:
    partial = world.home / "partial.lock"
    import tomllib

    from modelplug.cli.lock_writer import lock_text
    from modelplug.host.plugin_lock import LockedPlugin

    data = tomllib.loads(world.lock.read_text())["plugins"]
    clean = LockedPlugin(name="modelplug-clean", **data["modelplug-clean"])
    gone = LockedPlugin("modelplug-gone", "0.9", "modelplug-gone = modelplug_gone", False, "0" * 64)
    partial.write_text(lock_text([clean, gone]))
    done = world.modelplug("plugins", "--json", MODELPLUG_PLUGIN_LOCK=str(partial))
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    assert plugins["modelplug-tampered"]["enabled"] is False
    assert plugins["modelplug-clean"]["enabled"] is True
    assert "modelplug-tampered 1.0 is not in the plugin lock" in done.stderr
    assert "modelplug-gone is in the plugin lock" in done.stderr


def test_lock_names_a_file_that_no_longer_matches_record_and_locks_it_as_it_is(
    world: World, tampered_file: Path
) -> None:
    relocked = world.home / "relocked.lock"
    tampered_file.write_text("changed after install\n")
    done = world.modelplug("plugins", "lock", MODELPLUG_PLUGIN_LOCK=str(relocked))
    assert done.returncode == 0, done.stderr
    assert "modelplug_tampered/data.txt no longer matches its RECORD digest" in done.stderr
    plugins = world.plugins(MODELPLUG_PLUGIN_LOCK=str(relocked))
    assert plugins["modelplug-tampered"]["enabled"] is True


def test_install_refuses_a_wheel_with_an_executable_pth_naming_the_file(world: World) -> None:
    done = world.modelplug("install", "modelplug-evil")
    assert done.returncode == 1
    assert "modelplug-evil 1.0" in done.stderr and "evil_hook.pth" in done.stderr
    assert "--allow-pth modelplug-evil" in done.stderr
    assert not (world.site / "evil_hook.pth").exists()
    assert not (world.site / "modelplug_evil").exists()


def test_install_refuses_a_release_newer_than_min_age(world: World) -> None:
    done = world.modelplug("install", "--min-age", "7d", "modelplug-fresh")
    assert done.returncode == 1
    assert "modelplug-fresh 1.0: uploaded" in done.stderr and "--min-age 7.0 days" in done.stderr
    assert not (world.site / "modelplug_fresh").exists()


def test_min_age_says_so_when_the_index_does_not_give_upload_times(world: World) -> None:
    done = world.modelplug(
        "install", "--min-age", "7d", "modelplug-fresh", PIP_INDEX_URL=world.index.url("html")
    )
    try:
        assert done.returncode == 0, done.stderr
        assert "the index does not say when modelplug_fresh-1.0-py3-none-any.whl" in done.stderr
        assert (world.site / "modelplug_fresh").is_dir()
    finally:
        world.run_python(
            "import subprocess, sys; subprocess.run([sys.executable, '-m', 'pip', 'uninstall', "
            "'-y', '-q', 'modelplug-fresh'])"
        )


def test_audit_lists_pth_files_unlocked_foreign_and_changed_plugins(
    world: World, tampered_file: Path
) -> None:
    stray = world.site / "stray_hook.pth"
    stray.write_text("import sys\n")
    borrower = plugin_wheel(
        world.root, "modelplug-borrower", "1.0", entry_point_module="modelplug_clean"
    )
    world.pip_install(borrower)
    tampered_file.write_text("changed after install\n")
    try:
        done = world.modelplug("plugins", "audit", "--json")
        assert done.returncode == 1
        report = json.loads(done.stdout)
        assert report["lock"] == str(world.lock) and report["lock_checked"] is True
        kinds = {(f["kind"], f.get("distribution")) for f in report["findings"]}
        pth = [f for f in report["findings"] if f["kind"] == "pth"]
        assert {"path": str(stray), "distribution": None, "line": "import sys"} | {
            "kind": "pth"
        } in pth
        assert ("not_locked", "modelplug-borrower") in kinds
        assert ("foreign_module", "modelplug-borrower") in kinds
        assert ("changed", "modelplug-tampered") in kinds
        assert ("not_locked", "modelplug-clean") not in kinds
        text = world.modelplug("plugins", "audit")
        assert text.returncode == 1
        assert f"{stray} (no distribution): import sys" in text.stdout
    finally:
        stray.unlink()
        world.run_python(
            "import subprocess, sys; subprocess.run([sys.executable, '-m', 'pip', 'uninstall', "
            "'-y', '-q', 'modelplug-borrower'])"
        )


def test_allow_pth_installs_and_the_audit_names_the_distribution_of_its_pth(world: World) -> None:
    done = world.modelplug("install", "--allow-pth", "modelplug-evil", "modelplug-evil")
    try:
        assert done.returncode == 0, done.stderr
        assert (world.site / "evil_hook.pth").is_file()
        report = json.loads(world.modelplug("plugins", "audit", "--json").stdout)
        pth = {f["path"]: f["distribution"] for f in report["findings"] if f["kind"] == "pth"}
        assert pth[str(world.site / "evil_hook.pth")] == "modelplug-evil"
        allowed = world.modelplug("plugins", "audit", "--json", "--allow-pth", "modelplug-evil")
        paths = [f.get("path") for f in json.loads(allowed.stdout)["findings"]]
        assert str(world.site / "evil_hook.pth") not in paths
    finally:
        world.run_python(
            "import subprocess, sys; subprocess.run([sys.executable, '-m', 'pip', 'uninstall', "
            "'-y', '-q', 'modelplug-evil'])"
        )


def test_audit_without_a_lock_skips_the_lock_checks_and_says_so(world: World) -> None:
    done = world.modelplug("plugins", "audit", MODELPLUG_PLUGIN_LOCK="")
    assert "no plugin lock is set" in done.stdout
    assert "plugins the lock does not hold" not in done.stdout
    report = json.loads(
        world.modelplug("plugins", "audit", "--json", MODELPLUG_PLUGIN_LOCK="").stdout
    )
    assert report["lock"] is None and report["lock_checked"] is False
    assert {f["kind"] for f in report["findings"]} <= {"pth", "foreign_module"}


def test_the_throwaway_environment_is_not_the_development_one(world: World) -> None:
    assert world.site != Path(sysconfig.get_paths()["purelib"])
