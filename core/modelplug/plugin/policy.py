"""The kit for policy plugins (``wrapper=True`` implementations of ``modelplug_stream``
and ``modelplug_embed``).

:func:`find_policies` (the policies of one kind registered on a client, so a policy can
step aside for a user's own or skip them all when it re-opens a stream); :class:`Offer`,
:class:`Splice` and :class:`SpliceReader` (:mod:`modelplug.splice`: a wrapper that has
made its decisions hands the rest of the stream to its consumer and is sent the Done
back, instead of passing every event on itself); :func:`describe_error` (one line for a
failure, the way core words it), :func:`classify_generic` (core's classifier as a
function) and :func:`retry_after_of` (the wait an exception asks for);
:class:`NoProviderError`, :class:`UnknownProviderError` and :class:`PluginLoadError`
(the failures of resolving and loading a policy may meet); :class:`LocalDB`
(:mod:`modelplug.local_db`: an SQLite file the processes of one machine share, for state
a policy keeps between runs in ``client.settings.data_dir()``).

What a policy sees of an embedding call (``modelplug_embed``, a ``wrapper=True``
implementation beside its ``modelplug_stream``): the resolved ``route``, the
:class:`~modelplug.types.EmbedRequest` (``inputs`` checked by core: a non-empty list of
non-empty strings; ``dimensions``; ``extra``) and the client. ``yield`` gives the
provider's *awaitable* of :class:`~modelplug.types.Embeddings` (None: no plugin embeds
that route type; an exception: opening it failed), and the policy returns an awaitable
in its place: a coroutine that reserves, awaits the inner one, then settles. There is
no stream, so no Offer or Splice, no output before the answer (a retryable failure may
always be retried), and no Notice: a policy that has something to say puts it in the
answer's ``metadata`` (modelplug-fallback: ``metadata["notices"]``). ``usage.input`` is
the only count (no output tokens; ``reported`` False when estimated), ``cost`` is None
until core prices it. An awaitable the policy never awaits (a refused call) is to be
closed. A re-call goes through ``client.open_embed(route, request, exclude=[...])``,
with the policies of the re-caller's kind excluded, as ``open_stream`` does for chat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug._lazy import lazy_exports

#: The names of this part of the kit and the module of core each lives in: the one list
#: (``__all__``, ``dir()`` and the type checkers' view below are checked against it).
KIT = {
    "classify_generic": "builtin.classify",
    "retry_after_of": "builtin.classify",
    "NoProviderError": "errors",
    "PluginLoadError": "errors",
    "UnknownProviderError": "errors",
    "describe_error": "errors",
    "LocalDB": "local_db",
    "find_policies": "plugins",
    "Offer": "splice",
    "Splice": "splice",
    "SpliceReader": "splice",
}
__all__ = sorted(KIT)

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, KIT)

if TYPE_CHECKING:
    from ..builtin.classify import (
        classify_generic as classify_generic,
    )
    from ..builtin.classify import (
        retry_after_of as retry_after_of,
    )
    from ..errors import (
        NoProviderError as NoProviderError,
    )
    from ..errors import (
        PluginLoadError as PluginLoadError,
    )
    from ..errors import (
        UnknownProviderError as UnknownProviderError,
    )
    from ..errors import (
        describe_error as describe_error,
    )
    from ..local_db import LocalDB as LocalDB
    from ..plugins import find_policies as find_policies
    from ..splice import (
        Offer as Offer,
    )
    from ..splice import (
        Splice as Splice,
    )
    from ..splice import (
        SpliceReader as SpliceReader,
    )
