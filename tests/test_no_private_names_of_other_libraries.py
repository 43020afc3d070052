"""Well-kept libraries through their public interfaces only: no source file of core or a
plugin uses a private name (one with a leading underscore) of another distribution. Any
release of those libraries may change a private name without a word; a public one comes
with a deprecation.

Found statically, on the syntax tree of every file under core/ and plugins/*/src:
- an import of a private module or name: ``from httpx2._transports import X``,
  ``from uvicorn import _x``, ``import redis._parsers``;
- an attribute ``._x`` read off a name bound by importing one of those distributions
  (``httpx2._transport_for_url``, ``Server._private``, ``sdk._client``) or off an
  attribute chain starting there;
- an attribute ``._x`` read off anything when no source file of ours defines ``_x``
  (as a function, a class, an assignment, a field or a slot): then it is another
  library's (``http._transport_for_url`` on an ``httpx2.AsyncClient`` passed in);
- ``getattr(obj, "_x")`` / ``setattr`` / ``hasattr`` with a private literal name, and
  ``obj.__dict__[...]`` writes (pydantic's slots written behind its back), whatever
  ``obj`` is: the object is most often another library's; a read of a watched class's
  ``__dict__`` (``BaseModel.__dict__["__dict__"]``);
- a server's internals: an import from ``uvicorn.protocols`` or a class of ours that
  subclasses anything uvicorn or granian defines.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVERS = {"uvicorn", "granian"}
WATCHED = {
    "httpx2",
    "httpcore2",
    "uvicorn",
    "granian",
    "redis",
    "hiredis",
    "pluggy",
    "anthropic",
    "openai",
    "opentelemetry",
    "botocore",
    "pydantic",
    "pydantic_core",
    "genai_prices",
    "google",
    "prometheus_client",
}
SOURCES = sorted([*ROOT.glob("core/modelplug/**/*.py"), *ROOT.glob("plugins/*/src/**/*.py")])


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _watched(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in WATCHED


def defined_private_names(sources: list[str]) -> set[str]:
    """Every private name our own code defines: functions, classes, assignments
    (``x._n = ...`` included), annotated fields, imports' local names, ``__slots__``."""
    names: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Constant) and str(node.value).isidentifier():
                names.add(str(node.value))  # __slots__ entries, setattr names
    return {name for name in names if _private(name)}


def private_uses(source: str, filename: str = "<source>", own: set[str] | None = None) -> list[str]:
    """Each private use of another distribution in ``source``, as 'line N: what';
    ``own`` is the private names our code defines (default: those of ``source``)."""
    tree = ast.parse(source, filename)
    own = defined_private_names([source]) if own is None else own
    bound: set[str] = set()  # local names bound to a watched module or one of its names
    stdlib: set[str] = set()  # local names of the standard library's modules
    servers: set[str] = set()  # local names bound to uvicorn or granian, or their names
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in sys.stdlib_module_names:
                    stdlib.add(alias.asname or alias.name.split(".")[0])
                if not _watched(alias.name):
                    continue
                if any(_private(part) for part in alias.name.split(".")):
                    found.append(f"line {node.lineno}: import {alias.name}")
                bound.add(alias.asname or alias.name.split(".")[0])
                if alias.name.split(".")[0] in SERVERS:
                    servers.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _watched(node.module):
            module = node.module or ""
            if any(_private(part) for part in module.split(".")) or module.startswith(
                "uvicorn.protocols"
            ):
                found.append(f"line {node.lineno}: from {module} import ...")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"line {node.lineno}: from {module} import {alias.name}")
                bound.add(alias.asname or alias.name)
                if module.split(".")[0] in SERVERS:
                    servers.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                root = base
                while isinstance(root, ast.Attribute | ast.Subscript):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in servers:
                    found.append(f"line {node.lineno}: class {node.name}({ast.unparse(base)})")
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root: ast.expr = node.value
            while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
                root = root.func if isinstance(root, ast.Call) else root.value
            name = root.id if isinstance(root, ast.Name) else None
            # The standard library is not another distribution (argparse's
            # _SubParsersAction is the only name typeshed gives add_subparsers' result).
            if name in bound or (node.attr not in own and name not in stdlib):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            # Our own marks on objects we hand out (redact.py's on logging's records).
            and not node.args[1].value.startswith("_modelplug")
        ) or (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__dict__"
            and (
                isinstance(node.ctx, ast.Store)
                or (isinstance(node.value.value, ast.Name) and node.value.value.id in bound)
            )
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.fixture(scope="module")
def own_names() -> set[str]:
    return defined_private_names([path.read_text(encoding="utf-8") for path in SOURCES])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_of_another_distribution(path: Path, own_names: set[str]) -> None:
    uses = private_uses(path.read_text(encoding="utf-8"), str(path), own_names)
    assert not uses, (
        f"{path.relative_to(ROOT)} uses private names of another distribution: "
        + "; ".join(uses)
        + ". Use its public API, or pick a library that offers one."
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import httpx2\nhttpx2.AsyncClient()._transport_for_url(u)", "line 2"),
        ("from httpx2._transports.default import AsyncHTTPTransport", "line 1"),
        ("from genai_prices.data_snapshot import _bundled_snapshot", "line 1"),
        ("import redis._parsers", "line 1"),
        ("from uvicorn.protocols import http as h\nh.x._private_thing", "line 1"),
        ("from uvicorn import config as c\nc.x._private_thing", "line 2"),
        ("getattr(protocol, '_transport')", "line 1"),
        ("model.__dict__['text'] = text", "line 1"),
        ("def send(http):\n    return http._transport_for_url(url)", "line 2"),
        ("from pydantic import BaseModel\nset_ = BaseModel.__dict__['__dict__']", "line 2"),
        ("from uvicorn.protocols.http.auto import AutoHTTPProtocol", "line 1"),
        ("import uvicorn\nclass P(uvicorn.Server):\n    pass", "line 2"),
        ("from granian.server import Server\nclass P(Server):\n    pass", "line 2"),
    ],
)
def test_the_check_finds_each_kind_of_private_use(source: str, expected: str) -> None:
    uses = private_uses(source)
    assert uses and uses[0].startswith(expected), uses


@pytest.mark.parametrize(
    "source",
    [
        "import httpx2\nhttpx2.AsyncClient().__aenter__",  # a dunder is public protocol
        "class A:\n    _own = 1\n\n    def f(self):\n        return self._own",  # ours
        "from modelplug.contract.types import _Model",  # core's own
        "import json\njson._default_encoder",  # not a watched distribution
        "getattr(record, '_modelplug_redacted', False)",  # our own mark
    ],
)
def test_the_check_leaves_public_and_own_names_alone(source: str) -> None:
    assert private_uses(source) == []
