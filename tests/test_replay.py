"""Thinking and opaque blocks go back only to the model that produced them."""

from __future__ import annotations

from modelplug.contract.replay import is_replayable, replayable_messages
from modelplug.contract.types import Message, OpaqueBlock, TextBlock, ThinkingBlock, ToolUseBlock
from modelplug.host.known_providers import example_spec

CLAUDE = example_spec("anthropic")
CLAUDE_BATCH = example_spec("anthropic-batch")


def history() -> list[Message]:
    return [
        Message(role="user", content="q"),
        Message(
            role="assistant",
            model=CLAUDE,
            content=[
                ThinkingBlock(
                    text="t",
                    signature="s",
                    wire={"type": "thinking", "thinking": "t", "signature": "s"},
                ),
                OpaqueBlock(kind="server_tool_use", wire={"type": "server_tool_use"}),
                TextBlock(text="answer"),
                ToolUseBlock(id="a", name="f"),
            ],
        ),
        Message(
            role="assistant",
            model=CLAUDE,
            content=[ThinkingBlock(text="only")],
        ),
    ]


def test_same_model_gets_everything_back() -> None:
    assert replayable_messages(history(), CLAUDE) == history()


def test_other_model_gets_only_portable_blocks() -> None:
    out = replayable_messages(history(), "openrouter/qwen/qwen3-coder")
    assert [type(b).__name__ for b in out[1].content] == ["TextBlock", "ToolUseBlock"]
    assert len(out) == 2  # the thinking-only answer is left out: empty content is refused


def test_block_origin_must_match_too() -> None:
    message = Message(
        role="assistant",
        model=CLAUDE,
        content=[ThinkingBlock(text="x", origin="anthropic/claude-opus-4-1"), TextBlock(text="y")],
    )
    out = replayable_messages([message], CLAUDE)
    assert [type(b).__name__ for b in out[0].content] == ["TextBlock"]


def test_a_set_of_names_for_one_model_is_one_target() -> None:
    # A vendor's streaming and batch routes run the same model: its reasoning may go
    # to either; a model outside the set still gets only portable blocks.
    same = {CLAUDE, CLAUDE_BATCH}
    thinking = history()[1].content[0]
    assert is_replayable(thinking, history()[1], same)
    assert not is_replayable(thinking, history()[1], {CLAUDE_BATCH})
    stamped = ThinkingBlock(text="x", origin=CLAUDE_BATCH)
    assert is_replayable(stamped, history()[1], same)
    assert not is_replayable(stamped, history()[1], CLAUDE)
