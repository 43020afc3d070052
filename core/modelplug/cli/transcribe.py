"""``modelplug transcribe FILE``: the text an audio file says, or the Transcript as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.cli.output import money
from modelplug.contract.errors import RequestError

if TYPE_CHECKING:
    from modelplug.client.client import Client
    from modelplug.contract.transcripts import Transcript

__all__ = ["add_parser", "transcribe"]


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("transcribe", help="turn speech into text: the text of an audio FILE")
    parser.add_argument("file", metavar="FILE", help="an audio file (wav, mp3, m4a, ogg, ...)")
    parser.add_argument("-m", "--model", default=None, help="provider/model, an alias or a role")
    parser.add_argument("--language", default=None, help="the speech's language (ISO-639-1)")
    parser.add_argument("--prompt", default=None, help="words the speech may contain")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"text", "model", "language", "duration_s", "usage", "cost"} as JSON',
    )
    parser.set_defaults(handler=transcribe)


def transcribe(args: argparse.Namespace, client: Client) -> int:
    path = Path(args.file)
    try:
        audio = path.read_bytes()
    except OSError as exc:
        raise RequestError(f"cannot read {path}: {exc.strerror or exc}") from None
    fields = {
        name: value
        for name, value in (("language", args.language), ("prompt", args.prompt))
        if value is not None
    }
    result = client.transcribe(args.model, audio, filename=path.name, **fields)
    if args.json:
        json.dump(as_json(result), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(result.text)
    print(usage_line(result), file=sys.stderr)
    return 0


def as_json(result: Transcript) -> dict[str, Any]:
    return {
        "text": result.text,
        "model": result.model,
        "language": result.language,
        "duration_s": result.duration_s,
        "usage": result.usage.model_dump(mode="json", include={"input", "output", "reported"}),
        "cost": None if result.cost is None else str(result.cost.amount),
    }


def usage_line(result: Transcript) -> str:
    parts = [f"{result.model}:"]
    if result.duration_s is not None:
        parts.append(f"{result.duration_s:.1f} s of audio")
    if result.usage.reported:
        parts.append(f"input {result.usage.input}, output {result.usage.output}")
    cost = result.cost
    parts.append(f"cost {money(cost.amount, cost.currency)}" if cost else "cost unknown")
    return " ".join(parts)
