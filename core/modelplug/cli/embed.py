"""``modelplug embed``: the vectors of some texts, a line each, or as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from modelplug.cli.output import money

if TYPE_CHECKING:
    from modelplug.client.client import Client
    from modelplug.contract.types import Embeddings

__all__ = ["add_parser", "embed"]

# Values shown of each vector in text output: enough to tell two apart at a glance.
SHOWN = 4
# Characters shown of each input beside its vector.
PREVIEW = 40


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("embed", help="embed texts: one vector per TEXT")
    parser.add_argument("text", nargs="+", metavar="TEXT", help="a text to embed ('-': stdin)")
    parser.add_argument("-m", "--model", default=None, help="provider/model, an alias or a role")
    parser.add_argument("--dimensions", type=int, default=None, help="the vector size to ask for")
    parser.add_argument(
        "--json", action="store_true", help='print {"model", "vectors", "usage"} as JSON'
    )
    parser.set_defaults(handler=embed)


def embed(args: argparse.Namespace, client: Client) -> int:
    texts = [sys.stdin.read() if text == "-" else text for text in args.text]
    result = client.embed(args.model, texts, dimensions=args.dimensions)
    if args.json:
        data = {
            "model": result.model,
            "vectors": result.vectors,
            "usage": result.usage.model_dump(mode="json", include={"input", "reported"}),
        }
        json.dump(data, sys.stdout)
        sys.stdout.write("\n")
        return 0
    for index, (text, vector) in enumerate(zip(texts, result.vectors, strict=True)):
        print(f"{index}: {vector_line(vector)}  {preview(text)}")
    print(usage_line(result), file=sys.stderr)
    return 0


def vector_line(vector: list[float]) -> str:
    """``1536 dims [0.0123, -0.0456, ...]``."""
    head = ", ".join(f"{value:.4f}" for value in vector[:SHOWN])
    more = ", ..." if len(vector) > SHOWN else ""
    return f"{len(vector)} dims [{head}{more}]"


def preview(text: str) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= PREVIEW else flat[: PREVIEW - 3] + "...")


def usage_line(result: Embeddings) -> str:
    usage, cost = result.usage, result.cost
    parts = [f"{result.model}:", f"input {usage.input}"]
    if not usage.reported:
        parts.append("(estimated)")
    parts.append(f"cost {money(cost.amount, cost.currency)}" if cost else "cost unknown")
    return " ".join(parts)
