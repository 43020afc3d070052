"""Core's default repetition detector, as a plugin (trylast): see
:mod:`modelplug.builtin.loop_detector` and the ``[repetition]`` settings table
(:class:`modelplug.contract.repetition.RepetitionGuard`), which is this plugin's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug.contract.hookspecs import hookimpl

if TYPE_CHECKING:
    from modelplug.contract.repetition import RepetitionDetector, RepetitionGuard

__all__ = ["modelplug_repetition_detector"]


@hookimpl(trylast=True)
def modelplug_repetition_detector(guard: RepetitionGuard) -> RepetitionDetector:
    """The default detector for one stream, with the call's thresholds."""
    from modelplug.builtin.loop_detector import LoopDetector

    return LoopDetector(guard)
