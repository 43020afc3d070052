"""The ``modelplug`` command.

Exit codes: 0 ok; 1 the call failed (the model or provider answered with an error, or a
plugin broke); 2 what was given is wrong (the command line, a settings file, the spec,
the request, a missing key). Errors are one line, never a traceback.
Plugins add subcommands through the ``modelplug_cli_commands`` hook.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .client import Client
from .errors import (
    ConfigError,
    MissingKeyError,
    ModelplugError,
    RequestError,
    UnknownProviderError,
)
from .redact import redact
from .settings import ModelplugWarning, load_settings, user_config_path

if TYPE_CHECKING:
    from .routes import Route
    from .types import Usage

__all__ = ["build_parser", "main"]

DIM = "\x1b[2m"
RESET = "\x1b[0m"


def build_parser(client: Client | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelplug", description="A provider-neutral LLM client built on plugins."
    )
    parser.add_argument(
        "-V", "--version", action="store_true", help="print core's and each plugin's version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    chat = sub.add_parser("chat", help="send a prompt and stream the reply")
    chat.add_argument("prompt", nargs="?", default=None, help="the prompt, or - for stdin")
    chat.add_argument("-m", "--model", help="provider/model, an alias or a role")
    chat.add_argument("-s", "--system", help="a system prompt")
    chat.add_argument("--max-tokens", type=int, default=None)
    chat.add_argument("--effort", choices=["low", "medium", "high", "xhigh", "max"])
    chat.add_argument("--hide-thinking", action="store_true", help="do not show thinking")
    chat.add_argument("--usage", action="store_true", help="print tokens and cost to stderr")
    chat.add_argument(
        "--schema", metavar="FILE", help="a JSON Schema file: print the validated JSON answer"
    )
    chat.add_argument(
        "--retries", type=int, default=1, help="with --schema: re-ask this often (default 1)"
    )
    chat.set_defaults(handler=_chat)

    plugins = sub.add_parser("plugins", help="list plugins and why each is on or off")
    plugins.add_argument("--all", action="store_true", help="include built-in plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")
    plugins.set_defaults(handler=_plugins)

    resolve = sub.add_parser("resolve", help="show the route a spec resolves to")
    resolve.add_argument("spec", nargs="?", default=None)
    resolve.add_argument("--json", action="store_true", help="print JSON")
    resolve.add_argument("--probe", action="store_true", help="ask the server what it serves")
    resolve.set_defaults(handler=_resolve)

    price = sub.add_parser("price", help="price a number of tokens on a model")
    price.add_argument("spec")
    price.add_argument("--input", type=int, required=True, help="uncached input tokens")
    price.add_argument("--output", type=int, required=True)
    price.add_argument("--cache-read", type=int, default=0)
    price.add_argument("--cache-write", type=int, default=0)
    price.add_argument("--web-searches", type=int, default=0)
    price.add_argument("--batch", action="store_true", help="batch pricing (half the tokens)")
    price.set_defaults(handler=_price)

    trust = sub.add_parser("trust", help="trust a project so its local plugins load")
    trust.add_argument("directory", nargs="?", default=".")
    trust.set_defaults(handler=_trust)

    if client is not None:
        client.hook.modelplug_cli_commands(subparsers=sub, client=client)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] in (["--version"], ["-V"]):
        return _version()
    warnings.showwarning = _show_warning
    warnings.simplefilter("default", ModelplugWarning)
    command = next((a for a in args_list if not a.startswith("-")), None)
    if command == "trust":
        # It is fixing exactly that: no "not trusted" warning while it does.
        warnings.filterwarnings("ignore", message=".*is not trusted", category=ModelplugWarning)
    try:
        client = Client()
    except ModelplugError as exc:
        if command != "plugins":
            print(f"modelplug: {exc}", file=sys.stderr)
            return exit_code(exc)
        # A broken settings file must not hide which plugins there are.
        print(f"modelplug: {exc}", file=sys.stderr)
        print("modelplug: listing plugins without the settings files", file=sys.stderr)
        client = Client(settings=load_settings(user_path=Path(os.devnull), use_project=False))
    parser = build_parser(client)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args, client)
        sys.stdout.flush()  # a closed pipe shows here, where it is handled
        return code
    except ModelplugError as exc:
        print(f"modelplug: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("modelplug: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`modelplug plugins | head`): stop quietly, and keep the
        # interpreter from failing again while it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        try:
            client.close()
        except RuntimeError:
            pass


def exit_code(error: ModelplugError) -> int:
    """The CLI's one rule: 2 when what you gave is wrong (the command line, a settings
    file, the spec, the request, a missing key) and you must change it; 1 when the call
    itself failed (the model or provider answered with an error, or a plugin broke)."""
    wrong_input = (ConfigError, RequestError, MissingKeyError, UnknownProviderError)
    return 2 if isinstance(error, wrong_input) else 1


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Every warning as one line, in modelplug's style, with no Python source line."""
    text = redact(str(message)).replace("\n", " ")
    if not text.startswith("modelplug: warning: "):
        text = f"modelplug: warning: {text}"
    print(text, file=file or sys.stderr)


def _version() -> int:
    """Core's version and each installed plugin's."""
    from importlib.metadata import entry_points, version

    print(f"modelplug {version('modelplug')}")
    for ep in sorted(entry_points(group="modelplug"), key=lambda e: e.name):
        dist = ep.dist
        print(f"{ep.name} {dist.version if dist is not None else 'unknown'}")
    return 0


# -- chat ------------------------------------------------------------------------------


def _chat(args: argparse.Namespace, client: Client) -> int:
    # The event types (pydantic) are imported by the commands that call a model only.
    from .types import Done, Notice, TextDelta, ThinkingDelta, ToolCallStart

    prompt = args.prompt
    if prompt is None or prompt == "-":
        if prompt is None and sys.stdin.isatty():
            print("modelplug: give a prompt, or - to read it from stdin", file=sys.stderr)
            return 2
        prompt = sys.stdin.read()
    fields: dict[str, Any] = {}
    if args.system:
        fields["system"] = args.system
    if args.max_tokens:
        fields["max_tokens"] = args.max_tokens
    if args.effort or args.hide_thinking:
        fields["thinking"] = {"effort": args.effort, "hide": args.hide_thinking}
    if args.schema:
        return _chat_structured(args, client, prompt, fields)
    out = sys.stdout
    err = sys.stderr
    dim = err.isatty() and not os.environ.get("NO_COLOR")
    thinking_open = False
    response = None
    for event in client.stream(args.model, prompt, **fields):
        if isinstance(event, ThinkingDelta):
            if not args.hide_thinking:
                thinking_open = True
                _write(err, f"{DIM}{event.text}{RESET}" if dim else event.text)
        elif isinstance(event, TextDelta):
            if thinking_open:
                _write(err, "\n")
                thinking_open = False
            _write(out, event.text)
        elif isinstance(event, ToolCallStart):
            _write(err, f"[tool call: {event.name}]\n")
        elif isinstance(event, Notice):
            _write(err, f"modelplug: {event.message}\n")
        elif isinstance(event, Done):
            response = event.response
    if response is not None and response.text and not response.text.endswith("\n"):
        _write(out, "\n")
    if args.usage and response is not None:
        print(_usage_line(response.model or "", response.usage, response.cost), file=err)
    return 0


def _chat_structured(
    args: argparse.Namespace, client: Client, prompt: str, fields: dict[str, Any]
) -> int:
    """``chat --schema``: the validated answer as JSON on stdout, notices on stderr."""
    from .types import Notice

    path = Path(args.schema)
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--schema {path}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:
        raise ConfigError(f"--schema {path}: not JSON ({exc})") from None

    def notice(event: Any) -> None:
        if isinstance(event, Notice):
            print(f"modelplug: {event.message}", file=sys.stderr)

    response = client.complete(
        args.model,
        prompt,
        output_schema=schema,
        output_retries=max(0, args.retries),
        on_event=notice,
        **fields,
    )
    print(json.dumps(response.parsed, indent=2, ensure_ascii=False))
    if args.usage:
        print(_usage_line(response.model or "", response.usage, response.cost), file=sys.stderr)
    return 0


def _write(stream: TextIO, text: str) -> None:
    stream.write(text)
    stream.flush()


def _usage_line(model: str, usage: Usage, cost: Any) -> str:
    parts = [
        f"{model}:",
        f"input {usage.input}",
        f"output {usage.output}",
    ]
    if usage.cache_read or usage.cache_write:
        parts.append(f"cache read {usage.cache_read} write {usage.cache_write}")
    if usage.reasoning:
        parts.append(f"reasoning {usage.reasoning}")
    if not usage.reported:
        parts.append("(estimated)")
    parts.append(f"cost {_money(cost.amount, cost.currency)}" if cost else "cost unknown")
    return " ".join(parts)


def _money(amount: Decimal, currency: str) -> str:
    text = f"{amount.normalize():f}" if amount else "0"
    return f"${text}" if currency == "USD" else f"{text} {currency}"


# -- plugins ---------------------------------------------------------------------------


def _plugins(args: argparse.Namespace, client: Client) -> int:
    infos = [p for p in client.plugins() if args.all or p.source != "builtin"]
    if args.json:
        print(json.dumps([p.as_dict() for p in infos], indent=2))
        return 0
    if not infos:
        print("no plugins installed (core's built-ins: modelplug plugins --all)")
        return 0
    width = max(len(p.name) for p in infos)
    for p in infos:
        state = "on " if p.enabled else "off"
        version = p.version or "-"
        line = f"{state} {p.name:<{width}}  {version:<10} {p.source:<12} {p.reason}"
        if p.hooks:
            line += f"\n    hooks: {', '.join(h.removeprefix('modelplug_') for h in p.hooks)}"
        if p.error:
            line += f"\n    error: {p.error}"
        print(line)
    return 0


# -- resolve ---------------------------------------------------------------------------


def _alternatives(client: Client, route: Route) -> list[dict[str, str]]:
    """The other plugins that declare the route's provider name, and their types."""
    declared = client.declared_providers().get(route.provider, [])
    return [
        {"plugin": plugin, "type": entry.type}
        for entry, plugin in declared
        if plugin != route.plugin or entry.type != route.endpoint.type
    ]


def _resolve(args: argparse.Namespace, client: Client) -> int:
    route = client.resolve(args.spec)
    probed = None
    if args.probe:
        probed = client.probe(args.spec)
    data = route.public_dict()
    data["alternatives"] = _alternatives(client, route)
    if args.probe:
        data["probe"] = probed.public_dict() if probed is not None else None
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{route.name}  (from {route.spec!r}{', role ' + route.role if route.role else ''})")
    endpoint = route.endpoint
    print(f"  served by: {route.plugin or 'unknown'}")
    for other in data["alternatives"]:
        print(f"  also declared by: {other['plugin']} (type {other['type']})")
    print(f"  endpoint: {endpoint.type} {endpoint.base_url or '(default)'}")
    if endpoint.server:
        print(f"  server: {endpoint.server}")
    if endpoint.api_key_env:
        print(f"  key variable: {endpoint.api_key_env}")
    info = route.info
    print(f"  context window: {info.context_window or 'unknown'}")
    print(f"  max output: {info.max_output_tokens or 'unknown'}")
    if info.supports_tools is not None:
        print(f"  tools: {'yes' if info.supports_tools else 'no'}")
    if info.text_tool_calls:
        print(f"  text tool calls: {info.text_tool_calls}")
    if info.price is not None:
        p = info.price
        print(f"  price (USD/M): input {p.input} output {p.output} ({info.price_source})")
    for note in info.notes:
        if probed is not None and "--probe" in note:
            continue  # the probe ran: its answer is below
        print(f"  note: {note}")
    if args.probe:
        if probed is None:
            print("  probe: this provider cannot be probed")
        else:
            print(f"  probe: context window {probed.context_window or 'unknown'}", end="")
            if probed.supports_tools is not None:
                print(f", tools {'yes' if probed.supports_tools else 'no'}", end="")
            if probed.thinking is not None:
                print(f", thinking {probed.thinking}", end="")
            if probed.supports_images is not None:
                print(f", images {'yes' if probed.supports_images else 'no'}", end="")
            print()
            for note in probed.notes:  # what the server said beyond the fields above
                print(f"  probe: {note}")
    return 0


# -- price -----------------------------------------------------------------------------


def _price(args: argparse.Namespace, client: Client) -> int:
    for name in ("input", "output", "cache_read", "cache_write", "web_searches"):
        if getattr(args, name) < 0:
            print(f"modelplug: --{name.replace('_', '-')} must not be negative", file=sys.stderr)
            return 2
    from .types import Usage

    route = client.resolve(args.spec)
    usage = Usage(
        input=args.input,
        output=args.output,
        cache_read=args.cache_read,
        cache_write=args.cache_write,
        web_searches=args.web_searches,
    )
    factor = 0.5 if args.batch else 1.0
    cost = client.price(route, usage, factor)
    if cost is None:
        tables = [
            p.name
            for p in client.plugins()
            if p.enabled and p.source != "builtin" and "modelplug_price" in p.hooks
        ]
        where = (
            f"no pricing table knows it ({', '.join(tables)})" if tables else _no_pricing(client)
        )
        print(
            f"{route.name}: price unknown: {where}. Set one in your settings file, in USD "
            f"per million tokens:\n"
            f'  [models."{route.name}"]\n'
            "  price = { input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 }"
        )
        return 0
    print(f"{route.name}{' (batch)' if args.batch else ''}  [{cost.source}]")
    for kind, amount in cost.breakdown.items():
        print(f"  {kind:<12} {_money(amount, cost.currency)}")
    print(f"  {'total':<12} {_money(cost.amount, cost.currency)}")
    return 0


# -- trust -----------------------------------------------------------------------------


def _no_pricing(client: Client) -> str:
    from .known_providers import PRICING_DISTRIBUTION

    info = next((p for p in client.plugins() if p.name == PRICING_DISTRIBUTION), None)
    if info is not None and not info.enabled:
        return (
            f"no pricing plugin is enabled ({PRICING_DISTRIBUTION} is installed but {info.reason})"
        )
    return f"no pricing plugin is enabled (pip install {PRICING_DISTRIBUTION})"


def _trust(args: argparse.Namespace, client: Client) -> int:
    directory = Path(args.directory).expanduser().resolve()
    if not directory.is_dir():
        print(f"modelplug: {directory} is not a directory", file=sys.stderr)
        return 2
    path = client.settings.user_path or user_config_path()
    add_trusted_project(path, directory)
    print(f"trusted {directory}: its project-local plugins will load (settings: {path})")
    return 0


def add_trusted_project(path: Path, directory: Path) -> None:
    """Add ``directory`` to ``trusted_projects`` in the user's settings file, keeping
    the rest of the file as it is."""
    import tomllib

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    data = tomllib.loads(text) if text else {}
    trusted = [str(p) for p in data.get("trusted_projects", [])]
    if str(directory) in trusted:
        return
    trusted.append(str(directory))
    line = "trusted_projects = [" + ", ".join(json.dumps(p) for p in trusted) + "]\n"
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    skipping = False
    for raw in lines:
        stripped = raw.strip()
        if stripped.startswith("trusted_projects") and "=" in stripped:
            skipping = not stripped.rstrip().endswith("]")
            continue
        if skipping:
            skipping = not stripped.endswith("]")
            continue
        kept.append(raw)
    # Top-level keys must come before the first table.
    first_table = next((i for i, r in enumerate(kept) if r.lstrip().startswith("[")), len(kept))
    kept.insert(first_table, line)
    path.parent.mkdir(parents=True, exist_ok=True)
    new_text = "".join(kept)
    tomllib.loads(new_text)  # never write a file we could not read back
    path.write_text(new_text, encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
