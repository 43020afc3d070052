"""``state`` in modelplug_parse_text_tool_calls is the reader's own: HeldText, the one
place that drives the hook, keeps one dict per reply and never looks inside, so a
third-party reader can resume its scan where it stopped."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from modelplug import ParsedText, ToolSpec, ToolUseBlock, hookimpl

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [ToolSpec(name="ping", input_schema={"type": "object"})]


class BangReader:
    """A third-party dialect: ``!ping`` on a line of its own is a call. It scans only
    the text it has not seen, keeping its position in ``state``."""

    def __init__(self) -> None:
        self.scanned = 0  # characters read over the whole reply, to prove it resumes
        self.states: list[int] = []

    @hookimpl
    def modelplug_parse_text_tool_calls(
        self, text: str, mode: str, final: bool, state: dict[str, Any] | None
    ) -> ParsedText | None:
        if mode != "bang":
            return None
        assert state is not None
        self.states.append(id(state))
        start = state.get("scanned", 0)
        self.scanned += len(text) - start
        found = state.setdefault("at", [])
        line_start = text.rfind("\n", 0, start) + 1
        for line_end in range(start, len(text)):
            if text[line_end] == "\n":
                if text[line_start:line_end] == "!ping":
                    found.append(line_start)
                line_start = line_end + 1
        state["scanned"] = line_start  # resume at the line not yet complete
        if not final:
            pending = text[line_start:]
            # Hold from the first call: once shown, text cannot be taken back.
            hold = line_start if pending and "!ping".startswith(pending) else None
            hold = found[0] if found else hold
            return ParsedText(text=text, hold_from=hold)
        if text[line_start:] == "!ping":
            found.append(line_start)
        prose = text
        for at in reversed(found):
            prose = prose[:at] + prose[at + len("!ping") :]
        calls = [ToolUseBlock(id=f"call_{i}", name="ping", input={}) for i in range(len(found))]
        return ParsedText(text=prose.strip(), calls=calls)


def test_a_third_party_reader_resumes_through_state(make_client: Any) -> None:
    reader = BangReader()
    client = make_client(reader)
    held = client.held_text(TOOLS, "bang")
    reply = "Let me check.\n!ping\nDone" * 20
    shown = "".join(held.feed(ch) for ch in reply)

    rest, prose, calls = held.finish()

    assert len(calls) == 20
    assert "!ping" not in shown + rest
    assert len(set(reader.states)) == 1  # one dict for the whole reply
    # Resumed: only the unfinished line is read again. Re-reading the whole reply on
    # every delta would read len(reply)**2 / 2 = 115,200 characters.
    assert reader.scanned < 10 * len(reply)
    assert prose.startswith("Let me check.")


def test_held_text_is_the_one_place_that_calls_the_hook() -> None:
    callers = []
    for path in [*ROOT.glob("core/modelplug/**/*.py"), *ROOT.glob("plugins/*/src/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "modelplug_parse_text_tool_calls":
                callers.append(path.relative_to(ROOT).as_posix())
    assert callers == ["core/modelplug/contract/held_text.py"]
