"""tools/release.py and release.yml: the publish order comes from the distributions'
requirements, the file names from their names and versions, and the workflow has one
publish job for each level the script computes, each after the one before."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def load_release() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_tool", ROOT / "tools" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


release = load_release()


def write_project(directory: Path, name: str, deps: list[str], extras: str = "") -> None:
    directory.mkdir(parents=True)
    quoted = ", ".join(f'"{d}"' for d in deps)
    (directory / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "2.3.4"\ndependencies = [{quoted}]\n{extras}'
    )


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    """Core and four plugins: b needs a, c needs b only through its test extra, and
    d (spelt with an underscore and capitals) needs core alone."""
    repo = tmp_path / "repo"
    write_project(repo, "modelplug", ["pluggy>=1.5"])
    plugins = repo / "plugins"
    write_project(plugins / "modelplug-a", "modelplug-a", ["modelplug>=2.3,<3"])
    write_project(plugins / "modelplug-b", "modelplug-b", ["modelplug>=2.3,<3", "modelplug-a>=2.3"])
    write_project(
        plugins / "modelplug-c",
        "modelplug-c",
        ["modelplug"],
        '[project.optional-dependencies]\ntest = ["pytest", "modelplug-b[x]>=2.3"]\n',
    )
    write_project(plugins / "modelplug_D", "Modelplug_D", ["modelplug>=2.3"])
    return repo


def names(dists: list) -> list[str]:  # type: ignore[type-arg]
    return [d.name for d in dists]


def test_order_puts_core_first_and_each_plugin_after_the_siblings_it_requires(
    small_repo: Path,
) -> None:
    dists = release.distributions(small_repo)
    levels = [names(level) for level in release.levels(dists)]
    assert levels == [
        ["modelplug"],
        ["modelplug-a", "modelplug-d"],
        ["modelplug-b"],
        ["modelplug-c"],
    ]
    assert names(release.order(dists)) == [
        "modelplug",
        "modelplug-a",
        "modelplug-d",
        "modelplug-b",
        "modelplug-c",
    ]


def test_a_cycle_among_plugins_is_refused_naming_it(small_repo: Path) -> None:
    a = small_repo / "plugins" / "modelplug-a" / "pyproject.toml"
    a.write_text(a.read_text().replace('"modelplug>=2.3,<3"', '"modelplug>=2.3,<3", "modelplug-c"'))
    with pytest.raises(
        SystemExit, match="modelplug-a -> modelplug-c -> modelplug-b -> modelplug-a"
    ):
        release.levels(release.distributions(small_repo))


def test_out_of_order_names_a_plugin_published_before_what_it_requires(small_repo: Path) -> None:
    dists = release.order(release.distributions(small_repo))
    assert release.out_of_order(dists) == []
    swapped = [dists[0], dists[3], dists[1], dists[2], dists[4]]  # b before a
    assert release.out_of_order(swapped) == [
        "modelplug-b comes before modelplug-a, which it requires"
    ]
    assert release.out_of_order(dists[1:] + dists[:1]) == [
        f"{name} comes before modelplug, which it requires" for name in names(dists[1:])
    ]


def test_the_repository_publishes_redis_after_fallback_and_limits() -> None:
    order = names(release.order(release.distributions()))
    assert order[0] == "modelplug"
    plugins = sorted(p.parent.name for p in (ROOT / "plugins").glob("*/pyproject.toml"))
    assert sorted(order[1:]) == plugins  # every plugin directory, none by hand
    redis = order.index("modelplug-redis")
    assert redis > order.index("modelplug-fallback")
    assert redis > order.index("modelplug-limits")
    assert release.out_of_order(release.order(release.distributions())) == []


def test_file_names_follow_the_normalised_name_and_version(small_repo: Path) -> None:
    d = next(x for x in release.distributions(small_repo) if x.name == "modelplug-d")
    assert release.expected_files(d) == (
        "modelplug_d-2.3.4.tar.gz",
        "modelplug_d-2.3.4-py3-none-any.whl",
    )
    assert release.expected_files(d, "3.0.0")[0] == "modelplug_d-3.0.0.tar.gz"


def built(directory: Path, dists: list, version: str = "2.3.4") -> Path:  # type: ignore[type-arg]
    directory.mkdir()
    for dist in dists:
        for name in release.expected_files(dist, version):
            (directory / name).write_bytes(b"")
    return directory


def test_misnamed_accepts_one_sdist_and_one_wheel_each(small_repo: Path, tmp_path: Path) -> None:
    dists = release.distributions(small_repo)
    out = built(tmp_path / "dist", dists)
    assert release.misnamed(out, dists, None) == []
    assert release.misnamed(out, dists, "2.3.4") == []


def test_misnamed_reports_a_missing_wheel_a_stray_file_and_another_version(
    small_repo: Path, tmp_path: Path
) -> None:
    dists = release.distributions(small_repo)
    out = built(tmp_path / "dist", dists)
    (out / "modelplug_a-2.3.4-py3-none-any.whl").unlink()
    (out / "modelplug_b-2.3.3.tar.gz").write_bytes(b"")
    (out / "other-1.0.tar.gz").write_bytes(b"")
    problems = release.misnamed(out, dists, None)
    assert problems == [
        "modelplug-a: expected modelplug_a-2.3.4.tar.gz and modelplug_a-2.3.4-py3-none-any.whl, "
        "found ['modelplug_a-2.3.4.tar.gz']",
        "modelplug-b: expected modelplug_b-2.3.4.tar.gz and modelplug_b-2.3.4-py3-none-any.whl, "
        "found ['modelplug_b-2.3.3.tar.gz', 'modelplug_b-2.3.4-py3-none-any.whl', "
        "'modelplug_b-2.3.4.tar.gz']",
        "other-1.0.tar.gz: no distribution in this repository makes it",
    ]
    # The tag says 9.9.9: every file is for another version.
    assert len(release.misnamed(built(tmp_path / "d2", dists), dists, "9.9.9")) == len(dists)


def test_check_names_a_file_for_another_version_before_running_twine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dists = release.distributions()
    out = built(tmp_path / "dist", dists, version=dists[0].version)
    assert release.main(["check", str(out), "--version", "99.0.0"]) == 1
    err = capsys.readouterr().err
    assert "release: modelplug: expected modelplug-99.0.0.tar.gz and " in err
    assert "twine" not in err  # the names failed first: nothing was sent to twine


def test_stage_copies_each_level_into_its_own_directory(small_repo: Path, tmp_path: Path) -> None:
    dists = release.distributions(small_repo)
    out = built(tmp_path / "dist", dists)
    assert release.stage(out, tmp_path / "staged", dists, 4) == 0
    staged = {
        p.relative_to(tmp_path / "staged").as_posix() for p in (tmp_path / "staged").rglob("*.*")
    }
    assert "0/modelplug-2.3.4.tar.gz" in staged
    assert "1/modelplug_d-2.3.4-py3-none-any.whl" in staged
    assert "3/modelplug_c-2.3.4.tar.gz" in staged
    assert len(staged) == 2 * len(dists)


def test_stage_refuses_when_the_workflow_has_another_number_of_levels(
    small_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dists = release.distributions(small_repo)
    out = built(tmp_path / "dist", dists)
    assert release.stage(out, tmp_path / "staged", dists, 3) == 1
    assert "need 4 publish levels" in capsys.readouterr().err
    assert not (tmp_path / "staged").exists()


def jobs(text: str) -> dict[str, str]:
    """release.yml's jobs by id, each its text (two-space indented keys under jobs:)."""
    body = text.split("\njobs:\n", 1)[1]
    parts = re.split(r"(?m)^  ([a-z0-9-]+):\n", body)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_workflow_publishes_each_level_after_the_one_before() -> None:
    text = WORKFLOW.read_text()
    levels = release.levels(release.distributions())
    found = jobs(text)
    publish = sorted(j for j in found if j.startswith("publish-"))
    assert publish == [f"publish-level-{n}" for n in range(len(levels))]
    assert f"release.py stage dist staged --levels {len(levels)}" in text
    for number, job in enumerate(publish):
        needs = "build" if number == 0 else f"publish-level-{number - 1}"
        assert re.search(rf"(?m)^    needs: {needs}$", found[job]), job
        assert "environment: pypi" in found[job]
        assert "id-token: write" in found[job]
        assert f"packages-dir: dist/{number}/" in found[job]
        assert "uses: pypa/gh-action-pypi-publish@release/v1" in found[job]
    # Only the publish jobs may mint a token; the build job runs the repository's code.
    assert "id-token" not in found["build"]
    assert re.search(r'(?m)^  push:\n    tags: \["v\*"\]$', text)


def test_the_workflow_builds_and_checks_with_the_script_tox_runs() -> None:
    text = WORKFLOW.read_text()
    build = jobs(text)["build"]
    for step in ("release.py build dist", "release.py check dist", "release.py order --verify"):
        assert step in build
    tox = (ROOT / "tox.ini").read_text()
    section = tox.split("[testenv:release]", 1)[1]
    for step in ("release.py build", "release.py check", "release.py order --verify"):
        assert step in section
    assert re.search(r"(?m)^env_list = .*\brelease\b", tox)
