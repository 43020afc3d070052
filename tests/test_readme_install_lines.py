"""Every `pip install` line in the READMEs and the docs pages works today: the modelplug
distributions are installed from this checkout by path (with every sibling they require
in the same command), and a line that names one by its bare name is marked as being for
once it is released. No README links to a package index page for a distribution that has none."""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))
READMES = [ROOT / "README.md"] + [p / "README.md" for p in PLUGINS]
# The docs pages hold pip lines too (a plugin's page repeats its install line); the
# provider guide's installs the reader's own plugin, which is not one of ours.
PAGES = [p for p in sorted((ROOT / "docs").rglob("*.md")) if p.name != "writing-a-provider.md"]
MARKER = "once released"
# pip and uv options that take a value which is not a thing to install.
VALUE_OPTIONS = {"--python", "-p", "-r", "--requirement", "-c", "--constraint", "--target", "-t"}
EDITABLE = {"-e", "--editable"}


@dataclass(frozen=True, eq=False)
class Distribution:
    name: str
    directory: Path
    extras: dict[str, set[str]]  # "" is the plain dependencies


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normal(re.split(r"[<>=!~\[ ;@(]", requirement.strip(), maxsplit=1)[0])


def read(directory: Path) -> Distribution:
    project = tomllib.loads((directory / "pyproject.toml").read_text())["project"]
    extras = {"": {requirement_name(r) for r in project.get("dependencies", [])}}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        extras[extra] = {requirement_name(r) for r in requirements}
    return Distribution(normal(project["name"]), directory.resolve(), extras)


DISTS = [read(ROOT), *(read(p) for p in PLUGINS)]
BY_NAME = {d.name: d for d in DISTS}
BY_DIR = {d.directory: d for d in DISTS}


@dataclass(frozen=True)
class Command:
    where: str  # README and line, for the failure message
    text: str  # from "pip install" to the end of the command
    marked: bool  # "once released" on its line (code) or in its paragraph (prose)


def commands(readme: str, where: str) -> list[Command]:
    """The pip install commands in a README: each code-block line, and each inline code
    span of a prose paragraph (which may wrap across source lines)."""
    found: list[Command] = []
    fenced = False
    paragraph: list[tuple[int, str]] = []

    def prose() -> None:
        text = " ".join(line for _, line in paragraph)
        for span in re.findall(r"`([^`]*pip install[^`]*)`", text):
            at = f"{where}:{paragraph[0][0]}"
            found.append(Command(at, span[span.index("pip install") :], MARKER in text.lower()))
        paragraph.clear()

    for number, line in enumerate(readme.splitlines(), 1):
        if line.lstrip().startswith("```"):
            prose()
            fenced = not fenced
        elif fenced:
            if "pip install" in line:
                text = line[line.index("pip install") :]
                found.append(Command(f"{where}:{number}", text, MARKER in line.lower()))
        elif line.strip():
            paragraph.append((number, line.strip()))
        else:
            prose()
    prose()
    return found


def targets(command: str) -> list[str]:
    """What the command installs: its arguments, less options and their values."""
    words = shlex.split(command, comments=True)[2:]
    out = []
    skip = False
    for word in words:
        if word in {"&&", ";", "|", "||"}:
            break
        if skip:
            skip = False
        elif word in VALUE_OPTIONS:
            skip = True
        elif word in EDITABLE:
            continue  # its value is a target like any other
        elif not word.startswith("-"):
            out.append(word)
    return out


def split_extras(target: str) -> tuple[str, set[str]]:
    match = re.fullmatch(r"([^\[]+)(?:\[([^\]]*)\])?", target)
    assert match, target
    extras = {normal(e) for e in (match.group(2) or "").split(",") if e.strip()}
    return match.group(1), extras


def problems(command: Command) -> list[str]:
    """What makes the command fail today, or names a distribution that does not exist."""
    out = []
    named: dict[Distribution, set[str]] = {}
    bare = []
    for target in targets(command.text):
        spec, extras = split_extras(target)
        if spec.startswith((".", "/")) or "/" in spec:
            directory = (ROOT / spec).resolve()
            dist = BY_DIR.get(directory)
            if dist is None:
                out.append(f"{spec} is not a distribution of this repository")
                continue
            named[dist] = named.get(dist, set()) | extras
        elif normal(spec).startswith("modelplug"):
            dist = BY_NAME.get(normal(spec))
            if dist is None:
                out.append(f"{spec} is not a distribution of this repository")
                continue
            bare.append(dist.name)
        else:
            continue  # a third-party package: the index has it
        unknown = extras - set(dist.extras) - {""}
        if unknown:
            out.append(f"{dist.name} has no extra {sorted(unknown)}")
    if bare and not command.marked:
        out.append(f"{', '.join(bare)} by name only works {MARKER}: install by path, or say so")
    # pip looks up a requirement it was not given by path on the index, where no
    # modelplug distribution is yet: every sibling a path needs must be named too.
    for dist, extras in named.items():
        for extra in {"", *extras}:
            for requirement in sorted(dist.extras.get(extra, set())):
                sibling = BY_NAME.get(requirement)
                if sibling is not None and sibling not in named and requirement not in bare:
                    out.append(f"{dist.name} requires {requirement}: install it by path too")
    return out


ALL = [
    c
    for readme in [*READMES, *PAGES]
    for c in commands(readme.read_text(), readme.relative_to(ROOT).as_posix())
]


@pytest.mark.parametrize("command", ALL, ids=lambda c: c.where)
def test_every_pip_install_line_installs_from_this_checkout_or_is_marked(command: Command) -> None:
    assert problems(command) == [], f"{command.where}: {command.text}"


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_every_plugin_readme_installs_its_own_directory_and_names_its_released_name(
    plugin: Path,
) -> None:
    where = (plugin / "README.md").relative_to(ROOT).as_posix()
    found = [c for c in ALL if c.where.startswith(where + ":")]
    own = [
        c
        for c in found
        if any(plugin == (ROOT / split_extras(t)[0]).resolve() for t in targets(c.text))
    ]
    assert own, f"{where} has no `pip install ./plugins/{plugin.name}`"
    released = [c for c in found if c.marked and plugin.name in targets(c.text)]
    assert released, f"{where} does not say that `pip install {plugin.name}` works {MARKER}"


def test_no_readme_links_to_an_index_page_for_a_modelplug_distribution() -> None:
    linked = []
    for readme in READMES:
        for target in re.findall(r"\]\((https?://[^)\s]+)\)", readme.read_text()):
            if re.search(r"/(?:project|p|simple|pypi)/modelplug\b", target):
                linked.append(f"{readme.relative_to(ROOT)}: {target}")
    assert linked == []


# The checks above can fail: each kind of wrong line is caught.


def check(line: str, marked: bool = False) -> list[str]:
    return problems(Command("example", line, marked))


def test_a_bare_name_without_the_marker_is_refused() -> None:
    assert check("pip install modelplug-anthropic") == [
        f"modelplug-anthropic by name only works {MARKER}: install by path, or say so"
    ]
    assert check("pip install modelplug-anthropic", marked=True) == []


def test_a_misspelt_name_or_missing_path_is_refused_even_when_marked() -> None:
    assert check("pip install modelplug-antropic", marked=True) == [
        "modelplug-antropic is not a distribution of this repository"
    ]
    assert check("pip install . ./plugins/modelplug-nothing") == [
        "./plugins/modelplug-nothing is not a distribution of this repository"
    ]


def test_a_path_without_core_or_its_siblings_is_refused() -> None:
    assert check("pip install ./plugins/modelplug-redis") == [
        "modelplug-redis requires modelplug: install it by path too",
        "modelplug-redis requires modelplug-kit: install it by path too",
    ]
    everything = "pip install . ./plugins/modelplug-kit ./plugins/modelplug-redis"
    assert check(everything) == []
    # An extra's siblings count too: the limits tests need the fallback plugin.
    assert check("pip install ./ ./plugins/modelplug-kit './plugins/modelplug-limits[test]'") == [
        "modelplug-limits requires modelplug-fallback: install it by path too"
    ]


def test_options_and_third_party_packages_are_not_distributions() -> None:
    assert targets("pip install --python bench/.peers/bin/python litellm httpx2") == [
        "litellm",
        "httpx2",
    ]
    assert targets("pip install --python x -e ./plugins/modelplug-ollama google-genai # why") == [
        "./plugins/modelplug-ollama",
        "google-genai",
    ]
    assert (
        check(
            "pip install --upgrade . ./plugins/modelplug-kit "
            "'./plugins/modelplug-gemini[vertex]' google-genai"
        )
        == []
    )
    assert check("pip install . ./plugins/modelplug-kit './plugins/modelplug-gemini[nope]'") == [
        "modelplug-gemini has no extra ['nope']"
    ]


def test_commands_are_found_in_code_blocks_and_in_wrapped_prose() -> None:
    text = (
        "Intro.\n\n```sh\n$ pip install . ./plugins/modelplug-ollama  # today\n"
        "pip install modelplug-ollama  # once released\n```\n\n"
        "Skipped without it (`pip install\n  './plugins/modelplug-gemini[test]'`).\n"
    )
    found = commands(text, "x")
    assert [(c.where, c.text, c.marked) for c in found] == [
        ("x:4", "pip install . ./plugins/modelplug-ollama  # today", False),
        ("x:5", "pip install modelplug-ollama  # once released", True),
        ("x:8", "pip install './plugins/modelplug-gemini[test]'", False),
    ]


# The README's own install block: a newcomer's first commands.


def readme_install_block() -> list[str]:
    """The lines of the first ``sh`` block under the README's "## Install"."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Install\n") :]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the README's Install section has no sh block"
    return block.group(1).splitlines()


def test_the_readme_install_lines_name_every_plugin_between_them() -> None:
    named = {
        BY_DIR[(ROOT / split_extras(t)[0]).resolve()].name
        for line in readme_install_block()
        if "pip install" in line
        for t in targets(line[line.index("pip install") :])
    }
    assert sorted({read(p).name for p in PLUGINS} - named) == []


def test_the_readme_makes_and_activates_a_virtual_environment_before_any_pip_install() -> None:
    first, *rest = readme_install_block()
    # Debian's python3 refuses pip outside a virtual environment.
    words = ["python3", "-m", "venv", ".venv", "&&", ".", ".venv/bin/activate"]
    assert first.split("#")[0].split() == words
    assert rest and all(line.startswith("pip install ") for line in rest)


def test_the_readme_s_first_line_gives_a_pip_of_the_new_environment(tmp_path: Path) -> None:
    line = readme_install_block()[0].split("#")[0].strip()
    check = 'command -v pip && python -c "import sys; print(sys.prefix)"'
    done = subprocess.run(
        ["sh", "-c", f"{line} && {check}"],
        cwd=tmp_path,
        # As on a fresh Debian: only the system's python3 on the PATH.
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pip, prefix = done.stdout.split()
    assert (pip, prefix) == (str(tmp_path / ".venv/bin/pip"), str(tmp_path / ".venv"))
