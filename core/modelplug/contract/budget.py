"""A thinking budget sized from what is left of the context window (seed 004).

The arithmetic is the window, less the prompt as the server counts it, less what the
caller keeps back for the answer. When the window or the count is unknown there is no
honest budget, and the answer is None: send no budget at all. An unbudgeted request
thinks as much as it wants, which is right when the room is unknown; a guessed budget
can only cut thinking short, or overrun the window.
"""

from __future__ import annotations

__all__ = ["DEFAULT_BUDGET_MESSAGE", "DEFAULT_REASONING_RESERVE", "reasoning_budget"]

#: What an ``"auto"`` budget keeps back for the answer when the caller names nothing:
#: room for a few pages of answer or a tool call's arguments.
DEFAULT_REASONING_RESERVE = 4096
#: What a server that can say something at the cut (llama.cpp's
#: ``reasoning_budget_message``) is asked to inject when thinking reaches its budget
#: (seed 004). Imperative and short: it lands mid-thought and competes with whatever
#: the model was in the middle of saying.
DEFAULT_BUDGET_MESSAGE = "Thinking budget reached. Stop reasoning and give your final answer now."


def reasoning_budget(
    window: int | None,
    prompt_tokens: int | None,
    reserve: int = DEFAULT_REASONING_RESERVE,
    *,
    output_cap: int | None = None,
) -> int | None:
    """The thinking budget left after the prompt and the answer's reserve, or None when
    it cannot be sized honestly.

    :param window: the model's context window in tokens, as the server loaded it or the
        user declared it (None: unknown).
    :param prompt_tokens: the prompt's size as the server counts it (None: unknown; an
        estimate is not a count).
    :param reserve: tokens kept back for the answer after thinking.
    :param output_cap: the most the answer may be, thinking included (the request's
        ``max_tokens``, or the model's output limit); None: only the window bounds it.
    :return: a positive budget, or None when the window or the count is unknown or
        nothing is left once the prompt and the reserve are taken.
    """
    if reserve < 0:
        raise ValueError(f"reserve is {reserve}; give the tokens to keep back, 0 or more")
    if window is None or prompt_tokens is None:
        return None
    room = window - prompt_tokens
    if output_cap is not None:
        room = min(room, output_cap)
    budget = room - reserve
    return budget if budget > 0 else None
