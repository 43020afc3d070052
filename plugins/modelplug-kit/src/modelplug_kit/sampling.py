"""Sampling fields a provider has no place for, said rather than dropped in silence.

The penalties that fight repetition (``Request.frequency_penalty``, ``presence_penalty``
and llama.cpp's ``repeat_penalty``) are fields of some APIs only. A provider plugin
sends the ones its API takes and yields :func:`dropped_sampling`'s Notice, before the
request goes, for the ones it cannot send, so a caller who asked for a penalty learns
that it did nothing there.
"""

from __future__ import annotations

from collections.abc import Iterable

from modelplug import Notice, Request, Route

__all__ = ["PENALTIES", "dropped_sampling"]

#: The Request's penalty fields, in the order a Notice names them.
PENALTIES = ("frequency_penalty", "presence_penalty", "repeat_penalty")


def dropped_sampling(
    route: Route, request: Request, unsent: Iterable[str], why: str
) -> Notice | None:
    """The Notice for the fields of ``unsent`` that ``request`` sets, which the plugin
    does not send on ``route``; None when the request sets none of them.

    :param route: the call's route (its provider is named).
    :param request: the call's request.
    :param unsent: the Request fields this provider has no field for.
    :param why: why, in a few words (``"the Messages API has no penalties"``).
    """
    named = [name for name in unsent if getattr(request, name, None) is not None]
    if not named:
        return None
    fields = " and ".join(named) if len(named) < 3 else ", ".join(named)
    return Notice(
        kind="sampling_unsupported",
        message=(
            f"{route.name}: {fields} not sent ({why}); the call goes without "
            f"{'it' if len(named) == 1 else 'them'}. The repetition guard still cuts a "
            "loop; a higher temperature is the sampling control every provider has"
        ),
        details={"fields": named, "provider": route.provider},
    )
