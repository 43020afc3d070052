"""The CLI page (docs/cli.md) lists every command and every option the parser has (core's
and the installed plugins'), so the two cannot drift apart."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from modelplug.cli import build_parser
from modelplug.client.client import Client

CLI_PAGE = (Path(__file__).resolve().parent.parent / "docs/cli.md").read_text()


def cli_block() -> dict[str, str]:
    """Each ``modelplug COMMAND ...`` line of the CLI section's synopsis, by command."""
    section = CLI_PAGE
    block = re.search(r"```text\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the CLI section has no synopsis block"
    lines = [line for line in block.group(1).splitlines() if line.startswith("modelplug ")]
    return {line.split()[1]: line for line in lines}


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser(Client())
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [
        option
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
    ]


def test_every_command_is_in_the_synopsis() -> None:
    missing = set(commands()) - set(cli_block())
    assert missing == set()


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_option_of_a_command_is_on_its_line(name: str) -> None:
    line = cli_block()[name]
    written = set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", line))
    missing = [o for o in option_strings(commands()[name]) if o not in written]
    assert missing == [], f"docs/cli.md's `modelplug {name}` line lacks {missing}"


def test_the_global_options_are_in_the_synopsis() -> None:
    lines = "\n".join(cli_block().values())
    written = set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", lines))
    missing = [o for o in option_strings(build_parser(None)) if o not in written]
    assert missing == []


def test_every_command_and_option_of_the_synopsis_exists() -> None:
    # The other way round: nothing documented that the parser does not have.
    known = commands()
    for name, line in cli_block().items():
        if name.startswith("-"):
            continue
        assert name in known, f"docs/cli.md documents `modelplug {name}`, which does not exist"
        written = set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", line))
        assert written <= set(option_strings(known[name])), (name, written)


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_action_of_a_command_is_on_its_line(name: str) -> None:
    # `modelplug config path|edit`: a command's own subcommands are listed too.
    line = cli_block()[name]
    nested = [
        action
        for action in commands()[name]._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    actions = [choice for action in nested for choice in action.choices]
    written = set(re.findall(r"[\w-]+", line))
    assert [a for a in actions if a not in written] == []
