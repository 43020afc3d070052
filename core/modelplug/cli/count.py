"""``modelplug count -m MODEL FILE``: how many tokens a prompt is, counted by the
route's server before anything is sent.

FILE (``-``: standard input) is a prompt: a JSON list of OpenAI-style messages, or a
JSON object with ``messages`` (and ``system``), is that conversation; anything else is
one user message holding the file's text. ``--text`` counts the text alone, with the
model's tokenizer and no chat template. The count goes to standard output; when the
endpoint cannot count (or did not answer this time) nothing does, a line on standard
error says so, and the exit status is 3.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.contract.errors import RequestError

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["NO_COUNT", "add_parser", "count", "read_prompt"]

#: The exit status when the endpoint gave no count (0: counted; 1 and 2 as every command).
NO_COUNT = 3


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "count",
        help="count a prompt's tokens on the model's server, before sending it",
        description=(
            "Count FILE's tokens as the model's server counts them. FILE is a JSON list "
            "of messages (or an object with messages and system), else one user message "
            "of its text. Exit status 3: the endpoint cannot count."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the prompt ('-': standard input)")
    parser.add_argument("-m", "--model", default=None, help="provider/model, an alias or a role")
    parser.add_argument("--system", default=None, help="a system prompt to count with it")
    parser.add_argument(
        "--text",
        action="store_true",
        help="count the text alone: the tokenizer, no chat template around it",
    )
    parser.add_argument("--json", action="store_true", help='print {"model", "tokens", "what"}')
    parser.set_defaults(handler=count)


def read_prompt(raw: str) -> tuple[Any, str | None]:
    """The messages and system prompt a FILE holds (see the module)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw, None
    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        return data, None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        system = data.get("system")
        return data["messages"], system if isinstance(system, str) else None
    return raw, None


def count(args: argparse.Namespace, client: Client) -> int:
    try:
        raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestError(f"cannot read {args.file}: {exc}") from None
    route = client.resolve(args.model)
    if args.text:
        what = "text"
        tokens = client.count_tokens(route, raw)
    else:
        what = "prompt"
        messages, system = read_prompt(raw)
        tokens = client.count_prompt(route, messages, system=args.system or system)
    if args.json:
        json.dump({"model": route.name, "tokens": tokens, "what": what}, sys.stdout)
        sys.stdout.write("\n")
    elif tokens is not None:
        print(tokens)
    if tokens is None:
        print(
            f"{route.name}: this endpoint cannot count the {what} (or did not answer); "
            "estimate instead, or send it and read the usage",
            file=sys.stderr,
        )
        return NO_COUNT
    return 0
