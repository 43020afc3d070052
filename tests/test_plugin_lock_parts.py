"""The parts of the plugin supply chain, one at a time, in this process: the digest
cache, the lock file's text and settings, the files of an editable install, the ``.pth``
lines Python runs, a wheel's ``.pth`` files, ``--min-age`` and where pip's index is.
(tests/test_plugin_supply_chain.py runs them together on real installs.)"""

from __future__ import annotations

import os
import sys
import zipfile
from datetime import timedelta
from importlib import metadata
from pathlib import Path

import pytest
from modelplug.cli.install import parse_age
from modelplug.cli.lock_writer import combined_digest, lock_text
from modelplug.cli.package_index import index_urls, public_url
from modelplug.cli.pth_audit import executable_lines, wheel_pth_files
from modelplug.contract.errors import ConfigError
from modelplug.host.file_digests import CACHE_NAME, VerificationCache, sha256_of, stamp_of
from modelplug.host.plugin_files import distribution_files, is_editable
from modelplug.host.plugin_lock import LockedPlugin, canonical_name, lock_setting, read_lock
from modelplug.host.settings import load_settings


def test_a_verified_plugin_holds_while_the_stamps_of_what_was_read_hold(tmp_path: Path) -> None:
    lock, target = tmp_path / "modelplug.lock", tmp_path / "module.py"
    lock.write_text("version = 1\n")
    target.write_text("x = 1\n")
    first = VerificationCache(tmp_path / "data")
    assert not first.still_verified(lock, [1, 2, 3], "key")
    first.for_lock(lock, [1, 2, 3])["plugins"]["key"] = [[str(target), stamp_of(target)]]
    first.changed = True
    first.save()
    assert oct((tmp_path / "data" / CACHE_NAME).stat().st_mode & 0o777) == "0o600"
    assert VerificationCache(tmp_path / "data").still_verified(lock, [1, 2, 3], "key")
    # Another lock (or the same one changed) starts from nothing.
    assert not VerificationCache(tmp_path / "data").still_verified(lock, [1, 2, 4], "key")


def test_a_file_rewritten_with_its_old_size_and_mtime_is_not_taken_as_verified(
    tmp_path: Path,
) -> None:
    lock, target = tmp_path / "modelplug.lock", tmp_path / "module.py"
    target.write_text("x = 1\n")
    cache = VerificationCache(tmp_path / "data")
    cache.still_verified(lock, None, "key")
    cache.for_lock(lock, None)["plugins"]["key"] = [[str(target), stamp_of(target)]]
    assert cache.still_verified(lock, None, "key")
    info = os.stat(target)
    target.write_text("x = 2\n")
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert os.stat(target).st_size == info.st_size
    assert not cache.still_verified(lock, None, "key")


def test_the_audit_cache_never_remembers(tmp_path: Path) -> None:
    cache = VerificationCache(None)
    cache.still_verified(tmp_path / "x.lock", None, "key")
    cache.for_lock(tmp_path / "x.lock", None)["plugins"]["key"] = [["a", [1, 2, 3]]]
    cache.changed = True
    cache.save()
    assert list(tmp_path.iterdir()) == []


def test_a_missing_file_has_no_digest(tmp_path: Path) -> None:
    assert sha256_of(tmp_path / "gone.py") is None


def _plugin(name: str = "modelplug-x") -> LockedPlugin:
    files = {"modelplug_x/__init__.py": "a" * 64, 'odd "name".py': "b" * 64}
    return LockedPlugin(name, "1.0", f"{name} = modelplug_x", False, combined_digest(files), files)


def test_the_lock_text_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "modelplug.lock"
    path.write_text(lock_text([_plugin("modelplug-x"), _plugin("Modelplug_Y")]))
    locked = read_lock(path)
    assert set(locked) == {"modelplug-x", "modelplug-y"}
    assert locked["modelplug-x"] == _plugin("modelplug-x")
    # Stable text: sorted plugins and files, one line per file, so diffs are small.
    assert lock_text([_plugin("modelplug-x")]) == lock_text([_plugin("modelplug-x")])


def test_a_lock_that_is_not_one_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "modelplug.lock"
    path.write_text('version = 1\n[plugins.x]\nversion = "1"\n')
    with pytest.raises(ConfigError, match=r"modelplug\.lock: not a plugin lock .*entry_point"):
        read_lock(path)
    path.write_text("not toml [")
    with pytest.raises(ConfigError, match="not a plugin lock"):
        read_lock(path)
    assert read_lock(tmp_path / "absent.lock") == {}


def test_the_lock_setting_is_read_relative_to_the_file_that_names_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "modelplug.toml").write_text('[plugins]\nlock = "locks/modelplug.lock"\n')
    settings = load_settings(user_path=os.devnull, project_dir=project, environ={})
    setting = lock_setting(settings)
    assert setting is not None and setting.path == project / "locks" / "modelplug.lock"
    assert setting.strict is False and "project file" in setting.where
    env = load_settings(
        user_path=os.devnull,
        project_dir=project,
        environ={"MODELPLUG_PLUGIN_LOCK": str(tmp_path / "ci.lock")},
    )
    assert lock_setting(env).path == tmp_path / "ci.lock"  # type: ignore[union-attr]


def test_a_project_file_cannot_soften_the_users_strict_mode(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('[plugins]\nlock_mode = "strict"\nlock = "user.lock"\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "modelplug.toml").write_text('[plugins]\nlock_mode = "warn"\n')
    setting = lock_setting(load_settings(user_path=user, project_dir=project, environ={}))
    assert setting is not None and setting.strict is True


def test_a_lock_mode_that_is_neither_warn_nor_strict_is_refused(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('[plugins]\nlock_mode = "loud"\nlock = "x.lock"\n')
    settings = load_settings(user_path=user, use_project=False, environ={})
    with pytest.raises(ConfigError, match="lock_mode"):
        settings.toggle_layers()


def test_no_lock_setting_means_no_lock(tmp_path: Path) -> None:
    settings = load_settings(user_path=os.devnull, use_project=False, environ={})
    assert lock_setting(settings) is None


def _editable_dist(site: Path, source: Path) -> metadata.Distribution:
    """An editable install as pip leaves one: RECORD lists a path-only .pth and
    direct_url.json says editable; the package lives in ``source``."""
    (source / "modelplug_x" / "__pycache__").mkdir(parents=True)
    (source / "modelplug_x" / "__init__.py").write_text("x = 1\n")
    (source / "modelplug_x" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")
    info = site / "modelplug_x-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "_modelplug_x.pth").write_text(f"{source}\n")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: modelplug-x\nVersion: 1.0\n")
    (info / "direct_url.json").write_text('{"url": "file:///x", "dir_info": {"editable": true}}')
    (info / "RECORD").write_text(
        "_modelplug_x.pth,sha256=AAAA,10\nmodelplug_x-1.0.dist-info/METADATA,sha256=AAAA,5\n"
        "modelplug_x-1.0.dist-info/direct_url.json,sha256=AAAA,5\n"
        "modelplug_x-1.0.dist-info/RECORD,,\n"
    )
    return metadata.PathDistribution(info)


def test_an_editable_install_is_hashed_through_the_source_its_pth_names(tmp_path: Path) -> None:
    source = tmp_path / "src"
    dist = _editable_dist(tmp_path / "site", source)
    assert is_editable(dist)
    listings: list[Path] = []
    files = {f.key: f for f in distribution_files(dist, "modelplug_x", listings)}
    assert set(files) == {
        "_modelplug_x.pth",
        "modelplug_x-1.0.dist-info/METADATA",
        "modelplug_x/__init__.py",
    }
    assert files["modelplug_x/__init__.py"].path == source / "modelplug_x/__init__.py"
    assert source in listings and any(p.name == "RECORD" for p in listings)


def test_a_setuptools_finder_editable_install_is_hashed_through_its_mapping(
    tmp_path: Path,
) -> None:
    source = tmp_path / "src"
    site = tmp_path / "site"
    dist = _editable_dist(site, source)
    (site / "_modelplug_x.pth").write_text("import __editable___modelplug_x_finder; x()\n")
    finder = "__editable___modelplug_x_1_0_finder.py"
    (site / finder).write_text(
        f"MAPPING: dict[str, str] = {{'modelplug_x': '{source / 'modelplug_x'}'}}\n"
        "raise SystemExit('never run')\n"
    )
    record = site / "modelplug_x-1.0.dist-info" / "RECORD"
    record.write_text(record.read_text() + f"{finder},sha256=AAAA,5\n")
    files = {f.key: f.path for f in distribution_files(dist, "modelplug_x", [])}
    assert files["modelplug_x/__init__.py"] == source / "modelplug_x" / "__init__.py"
    assert finder in files


def test_only_lines_starting_with_import_run() -> None:
    text = "/some/path\nimport os; os.system('x')\n# import no\n  import indented\nimport\tsys\n"
    assert executable_lines(text) == ["import os; os.system('x')", "import\tsys"]


def test_a_wheels_pth_files_with_executable_lines_are_found(tmp_path: Path) -> None:
    wheel = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("paths.pth", "/only/a/path\n")
        archive.writestr("hook.pth", "import os\n")
        archive.writestr("x-1.0.data/purelib/deep.pth", "import sys\n")
        archive.writestr("x/inner.pth", "import never_processed\n")
    assert wheel_pth_files(wheel) == [
        ("hook.pth", "import os"),
        ("x-1.0.data/purelib/deep.pth", "import sys"),
    ]


def test_min_age_is_a_number_and_a_unit() -> None:
    assert parse_age("7d") == timedelta(days=7)
    assert parse_age("12h") == timedelta(hours=12)
    assert parse_age("2w") == timedelta(weeks=2)
    with pytest.raises(Exception, match="not an age"):
        parse_age("7 days")


def test_the_index_is_the_one_pip_is_told_about() -> None:
    pip = [sys.executable, "-m", "pip"]
    env = {"PIP_INDEX_URL": "http://127.0.0.1:9/simple/", "PIP_EXTRA_INDEX_URL": "http://a/ b"}
    assert index_urls(pip, env) == ["http://127.0.0.1:9/simple/", "http://a/", "b"]


def test_an_index_urls_password_is_not_shown() -> None:
    assert (
        public_url("https://me:s3cret@127.0.0.1:8080/simple/") == "https://127.0.0.1:8080/simple/"
    )


def test_distribution_names_compare_as_pep_503_says() -> None:
    assert canonical_name("Modelplug_X.Extra") == canonical_name("modelplug-x-extra")


def test_a_start_where_nothing_changed_reads_neither_the_lock_nor_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modelplug.cli import lock_writer
    from modelplug.host import plugin_files, plugin_lock

    ep = next(e for e in metadata.entry_points(group="modelplug") if e.name == "modelplug-redis")
    assert ep.dist is not None
    locked, _ = lock_writer.snapshot(ep.dist, ep)
    lock = tmp_path / "modelplug.lock"
    lock_writer.write_lock(lock, [locked])
    setting = plugin_lock.LockSetting(lock, False, "test")
    first = plugin_lock.LockGuard(setting, tmp_path / "data")
    assert first.check(ep) is None and first.removed([ep.name]) == []
    first.cache.save()

    def never(*args: object) -> object:
        raise AssertionError("read on a start where nothing changed")

    monkeypatch.setattr(plugin_lock, "read_lock", never)
    monkeypatch.setattr(plugin_files, "record_rows", never)
    second = plugin_lock.LockGuard(setting, tmp_path / "data")
    assert second.check(ep) is None
    assert second.removed([ep.name]) == []
    assert second.removed([]) == ["modelplug-redis"]
    # A changed lock is read again.
    monkeypatch.undo()
    lock.write_text(lock.read_text() + "\n")
    third = plugin_lock.LockGuard(setting, tmp_path / "data")
    assert third.check(ep) is None and third._locked is not None
