"""The kit for wire readers that need more than :mod:`modelplug.plugin`.

:class:`HeldText` (tool calls a model writes as text, read by the text-tool-call
plugins; a reader that meets an unreadable one raises :class:`TextCallError`),
:func:`repair_loose_json` (the one loose-JSON repair; it never closes a truncation),
:func:`estimate_tokens` and :data:`CHARS_PER_TOKEN` (the one estimate),
:func:`replayable_blocks` and :func:`replayable_messages` (which thinking and vendor
blocks of a whole conversation may go back to which model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug._lazy import lazy_exports

#: The names of this part of the kit and the module of core each lives in: the one list
#: (``__all__``, ``dir()`` and the type checkers' view below are checked against it).
KIT = {
    "TextCallError": "errors",
    "CHARS_PER_TOKEN": "estimate",
    "estimate_tokens": "estimate",
    "HeldText": "held_text",
    "repair_loose_json": "loose_json",
    "replayable_blocks": "replay",
    "replayable_messages": "replay",
}
__all__ = sorted(KIT)

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, KIT)

if TYPE_CHECKING:
    from ..errors import TextCallError as TextCallError
    from ..estimate import (
        CHARS_PER_TOKEN as CHARS_PER_TOKEN,
    )
    from ..estimate import (
        estimate_tokens as estimate_tokens,
    )
    from ..held_text import HeldText as HeldText
    from ..loose_json import repair_loose_json as repair_loose_json
    from ..replay import (
        replayable_blocks as replayable_blocks,
    )
    from ..replay import (
        replayable_messages as replayable_messages,
    )
