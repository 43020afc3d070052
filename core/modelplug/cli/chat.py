"""``modelplug chat``: one prompt, or an interactive chat when none is given.

Every turn sends the whole conversation back (its messages, the system prompt) and adds
the reply to it; the conversation is stored after each reply (see
:mod:`modelplug.cli.conversations`) unless ``-n/--no-log``, so ``-c/--continue`` picks
it up in a later run. ``--list`` shows the stored conversations and ``-c ID`` continues
any one of them. The interactive chat reads stdin line by line, from a terminal
or a pipe; ``exit``, ``quit`` or the end of input end it, and Ctrl-C during a reply
stops that reply, not the chat.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.cli.conversations import Conversation, Store, Summary, is_conversation_id
from modelplug.cli.long_run import RetryLine, Spend
from modelplug.cli.output import DIM, RESET, usage_line, write
from modelplug.cli.request_options import HELP as OPTION_HELP
from modelplug.cli.request_options import parse_options
from modelplug.contract.errors import ConfigError, ModelplugError

if TYPE_CHECKING:
    from modelplug.client.client import Client
    from modelplug.contract.types import Message, Response

__all__ = ["add_parser", "run"]

ENDS = ("exit", "quit")
LAST = ""  # what a bare -c/--continue gives: the last conversation


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    chat = sub.add_parser(
        "chat",
        help="send a prompt and stream the reply; with no prompt, chat interactively",
        description="Send a prompt and stream the reply. With no prompt, chat "
        "interactively: one line is one turn; exit, quit or the end of input ends it, "
        "Ctrl-C stops a reply. Conversations are kept (see -c and -n).",
    )
    chat.add_argument(
        "prompt",
        nargs="?",
        default=None,
        help="the prompt, - to read it from stdin, or nothing for an interactive chat",
    )
    chat.add_argument("-m", "--model", help="provider/model, an alias or a role")
    chat.add_argument("-s", "--system", help="a system prompt")
    chat.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        nargs="?",
        const=LAST,
        default=None,
        metavar="ID",
        help="continue the last conversation, or the one ID names (see --list), with its "
        "model and system prompt unless -m or -s",
    )
    chat.add_argument(
        "--list", action="store_true", help="list the stored conversations, the last first"
    )
    chat.add_argument("-n", "--no-log", action="store_true", help="do not store this conversation")
    chat.add_argument(
        "-o", "--option", action="append", default=[], metavar="KEY=VALUE", help=OPTION_HELP
    )
    chat.add_argument("--max-tokens", type=int, default=None, help="the most tokens to answer")
    chat.add_argument(
        "--effort", choices=["low", "medium", "high", "xhigh", "max"], help="thinking effort"
    )
    chat.add_argument("--hide-thinking", action="store_true", help="do not show thinking")
    chat.add_argument("--usage", action="store_true", help="print tokens and cost to stderr")
    chat.add_argument(
        "--schema",
        metavar="FILE|JSON",
        help='a JSON Schema, in a file or inline (\'{"type": "object", ...}\'): print the '
        "validated JSON answer",
    )
    chat.add_argument(
        "--retries", type=int, default=1, help="with --schema: re-ask this often (default 1)"
    )
    chat.set_defaults(handler=run)


@dataclass
class Turns:
    """What every turn of one run shares."""

    client: Client
    args: argparse.Namespace
    conversation: Conversation
    fields: dict[str, Any]
    store: Store | None
    retry: RetryLine = field(default_factory=lambda: RetryLine(sys.stderr, _live()))
    spend: Spend = field(default_factory=Spend)


def _live() -> bool:
    """Whether stderr is a terminal a live line can be rewritten on."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


def run(args: argparse.Namespace, client: Client) -> int:
    store = Store(client.settings.data_dir())
    if args.list:
        if args.prompt is not None or args.continue_ is not None:
            raise ConfigError("--list lists the conversations: give it alone")
        return _list(store)
    spend = Spend()
    try:
        return _run(args, client, store, spend)
    finally:
        # The total of every call that finished, failed turns or not: on a terminal,
        # and with --usage once there is more than one call to add up (one call's own
        # usage line says it all).
        if spend.calls and (sys.stderr.isatty() or (args.usage and spend.calls > 1)):
            print(spend.line(), file=sys.stderr)


def _run(args: argparse.Namespace, client: Client, store: Store, spend: Spend) -> int:
    fields = _fields(args)
    continued, prompt = _continued(args.continue_, args.prompt)
    if prompt == "-":
        prompt = sys.stdin.read()
    if args.schema:
        if continued is not None or prompt is None:
            raise ConfigError("--schema answers one prompt: give it, without -c/--continue")
        return _structured(args, client, prompt, fields, spend)
    if continued is not None:
        conversation = store.named(continued) if continued else store.last()
        conversation.model = args.model or conversation.model
        if args.system is not None:
            conversation.system = args.system
    else:
        conversation = Conversation.new(args.model or client.choose_model(None), args.system)
    turns = Turns(client, args, conversation, fields, None if args.no_log else store, spend=spend)
    if prompt is not None:
        _turn(turns, prompt)
        return 0
    return _interactive(turns)


def _continued(given: str | None, prompt: str | None) -> tuple[str | None, str | None]:
    """The conversation to continue (None: a new one; ``LAST``: the last one; else its
    id) and the prompt. ``-c hello`` is the last conversation and the prompt "hello":
    only a conversation's id is taken for one."""
    if given is None or given == LAST or is_conversation_id(given):
        return given, prompt
    if prompt is None:
        return LAST, given
    raise ConfigError(
        f"-c {given}: not a conversation's id (such as 20261207T065339-a1b2c3); "
        "modelplug chat --list shows them, and a bare -c continues the last one"
    )


def _list(store: Store) -> int:
    found = store.summaries()
    if not found:
        print(f"no conversations yet in {store.root}; modelplug chat stores each one (not with -n)")
        return 0
    last = store.last_id()
    for summary in found:
        print(_listed(summary, summary.id == last))
    return 0


def _listed(summary: Summary, last: bool) -> str:
    if summary.problem is not None:
        return f"{summary.id}  {summary.problem}"
    from datetime import datetime

    try:
        when = datetime.fromisoformat(summary.updated).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        when = "-"
    line = (
        f"{summary.id}  {when}  {summary.model or '-'}  {summary.messages} messages  "
        f"{json.dumps(summary.opening, ensure_ascii=False)}"
    )
    return line + ("  (last: -c continues it)" if last else "")


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if args.max_tokens:
        fields["max_tokens"] = args.max_tokens
    if args.effort or args.hide_thinking:
        fields["thinking"] = {"effort": args.effort, "hide": args.hide_thinking}
    fields.update(parse_options(args.option))
    return fields


def _interactive(turns: Turns) -> int:
    terminal = sys.stdin.isatty()
    if terminal:
        import readline  # noqa: F401  (line editing and history for input())

        conversation = turns.conversation
        route = turns.client.resolve(conversation.model)
        kept = len(conversation.messages)
        again = f", continuing {kept} messages of {conversation.id}" if kept else ""
        print(
            f"Chatting with {route.name}{again}. Type exit or quit (or press Ctrl-D) to "
            "end; Ctrl-C stops a reply.",
            file=sys.stderr,
        )
    code = 0
    while True:
        try:
            line = input("> ") if terminal else sys.stdin.readline()
        except EOFError:
            break
        except KeyboardInterrupt:
            print(file=sys.stderr)  # at the prompt: a new prompt, as a shell does
            continue
        if not line:  # the end of piped input
            break
        prompt = line.strip()
        if prompt.lower() in ENDS:
            break
        if not prompt:
            continue
        try:
            _turn(turns, prompt)
            code = 0
        except KeyboardInterrupt:
            print("\nmodelplug: reply stopped", file=sys.stderr)
        except ModelplugError as exc:
            # One failed turn is not the end of the chat: the next line may try again.
            from modelplug.cli.exit_code import exit_code

            print(f"modelplug: {exc}", file=sys.stderr)
            code = exit_code(exc)
    if terminal:
        print(file=sys.stderr)
    return code


def _turn(turns: Turns, prompt: str) -> None:
    """Send the conversation with ``prompt`` added, stream the reply, keep both."""
    from modelplug.contract.types import Message, TextBlock

    conversation = turns.conversation
    asked = Message(role="user", content=[TextBlock(text=prompt)])
    messages = [*conversation.messages, asked]
    shown: list[str] = []
    response: Response | None = None
    try:
        response = _stream(turns, messages, shown)
    except KeyboardInterrupt:
        if shown:  # what was shown of the reply stays in the conversation
            _keep(turns, [asked, _partial(shown)])
        raise
    _keep(turns, [asked, response.message])


def _partial(shown: list[str]) -> Message:
    from modelplug.contract.types import Message, TextBlock

    return Message(role="assistant", content=[TextBlock(text="".join(shown))])


def _keep(turns: Turns, added: list[Message]) -> None:
    conversation = turns.conversation
    conversation.messages = [*conversation.messages, *added]
    if turns.store is None:
        return
    try:
        turns.store.save(conversation)
    except OSError as exc:
        # The reply was shown; losing the log is worth a line, not the exit code.
        print(
            f"modelplug: warning: could not store the conversation in {turns.store.root} "
            f"({exc.strerror}); set MODELPLUG_DATA_DIR to a writable directory, or use -n",
            file=sys.stderr,
        )
        turns.store = None


def _stream(turns: Turns, messages: list[Message], shown: list[str]) -> Response:
    # The event types (pydantic) are imported by the commands that call a model only.
    from modelplug.contract.observers import RETRY_NOTICE
    from modelplug.contract.types import Done, Notice, TextDelta, ThinkingDelta, ToolCallStart

    args, conversation = turns.args, turns.conversation
    out, err = sys.stdout, sys.stderr
    dim = err.isatty() and not os.environ.get("NO_COLOR")
    thinking_open = False
    response: Response | None = None
    fields = dict(turns.fields)
    if conversation.system:
        fields["system"] = conversation.system
    events = turns.client.stream(
        conversation.model, messages, on_retry=turns.retry, on_usage=turns.spend.add, **fields
    )
    try:
        for event in events:
            if isinstance(event, TextDelta):
                if thinking_open:
                    write(err, "\n")
                    thinking_open = False
                shown.append(event.text)
                write(out, event.text)
            elif isinstance(event, ThinkingDelta):
                if not args.hide_thinking:
                    thinking_open = True
                    write(err, f"{DIM}{event.text}{RESET}" if dim else event.text)
            elif isinstance(event, ToolCallStart):
                write(err, f"[tool call: {event.name}]\n")
            elif isinstance(event, Notice):
                if event.kind != RETRY_NOTICE:  # a retry is turns.retry's to show
                    write(err, f"modelplug: {event.message}\n")
            elif isinstance(event, Done):
                response = event.response
    finally:
        # Ctrl-C mid-reply: the call is closed here, now, not when the iterator is
        # collected, so its connection is gone before the next prompt.
        close = getattr(events, "close", None)
        if close is not None:
            close()
        turns.retry.close()
        if shown and not "".join(shown).endswith("\n"):
            write(out, "\n")
    assert response is not None  # a stream ends with exactly one Done or raises
    if args.usage:
        print(usage_line(response.model or "", response.usage, response.cost), file=err)
    return response


def _structured(
    args: argparse.Namespace, client: Client, prompt: str, fields: dict[str, Any], spend: Spend
) -> int:
    """``chat --schema``: the validated answer as JSON on stdout, notices on stderr."""
    from modelplug.contract.observers import RETRY_NOTICE
    from modelplug.contract.types import Notice

    schema = _schema(args.schema)
    retry = RetryLine(sys.stderr, _live())

    def notice(event: Any) -> None:
        if isinstance(event, Notice) and event.kind != RETRY_NOTICE:
            print(f"modelplug: {event.message}", file=sys.stderr)

    if args.system:
        fields["system"] = args.system
    try:
        response = client.complete(
            args.model,
            prompt,
            output_schema=schema,
            output_retries=max(0, args.retries),
            on_event=notice,
            on_retry=retry,
            on_usage=spend.add,
            **fields,
        )
    finally:
        retry.close()
    print(json.dumps(response.parsed, indent=2, ensure_ascii=False))
    if args.usage:
        print(usage_line(response.model or "", response.usage, response.cost), file=sys.stderr)
    return 0


def _schema(given: str) -> Any:
    """``--schema``'s JSON Schema: inline JSON when the value starts with ``{`` (a schema
    is an object; no file name does), else the file of that name."""
    if given.lstrip().startswith("{"):
        try:
            return json.loads(given)
        except ValueError as exc:
            raise ConfigError(
                f"--schema: the inline schema is not JSON ({exc}); quote it whole for the "
                'shell, e.g. --schema \'{"type": "object"}\', or give a file'
            ) from None
    path = Path(given)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"--schema {given}: neither a file (cannot read it: {exc.strerror}) nor inline "
            "JSON (which starts with {); give a schema file or the schema itself"
        ) from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--schema {path}: the file is not JSON ({exc})") from None
