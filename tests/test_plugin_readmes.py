"""A plugin's README is its index page: its first five lines (after the title) say what
the plugin adds, how to install it and open the smallest example; the rest of what it
says lives on its docs page, `docs/plugins/NAME.md`, which the README names."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs" / "plugins").glob("*.md"))


def opening(readme: str) -> list[str]:
    """The five lines after the title, blank lines not counted."""
    lines = readme.splitlines()
    assert lines[0].startswith("# "), "the README starts with its title"
    return [line for line in lines[1:] if line.strip()][:5]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_the_readme_opens_with_what_install_and_an_example(page: Path) -> None:
    name = f"modelplug-{page.stem}"
    readme = (ROOT / "plugins" / name / "README.md").read_text()
    assert readme.startswith(f"# {name}\n")
    first = opening(readme)
    assert any(f"pip install {name}" in line for line in first), f"{name}: no install line"
    assert any(line.startswith("```") for line in first), f"{name}: no example begins"
    assert f"docs/plugins/{page.name}" in readme, f"{name}: the README names its docs page"
    assert len(readme.splitlines()) <= 30, f"{name}: the rest belongs on its docs page"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_the_docs_page_is_the_plugins(page: Path) -> None:
    assert (ROOT / "plugins" / f"modelplug-{page.stem}").is_dir(), f"{page.name}: no such plugin"
    assert page.read_text().startswith(f"# modelplug-{page.stem}\n")


def test_the_opening_skips_the_title_and_blank_lines() -> None:
    text = "# modelplug-x\n\nOne.\nTwo.\n\n```python\nthree\n```\nfour\nfive\n"
    assert opening(text) == ["One.", "Two.", "```python", "three", "```"]
