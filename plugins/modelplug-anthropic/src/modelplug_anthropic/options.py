"""The ``[anthropic]`` options table, read once per client and event loop.

    [anthropic]
    cache = true                 # prompt-caching breakpoints (a request's own `cache` wins)
    read_timeout = 1200          # s: the longest silence between two reads of an answer
    first_byte_timeout = 600     # s: from sending the request to the answer's headers
    connect_timeout = 10         # s: to open a connection (and to wait for a free one)
    write_timeout = 600          # s: to send the request

The timeouts are the kit's (:class:`~modelplug_kit.Timeouts`, the same names in every
provider plugin). Long thinking can keep a stream silent for minutes, hence the long
defaults. A wrong value is a ConfigError naming the key; an unknown key is a one-line
warning (the kit's :func:`~modelplug.read_options`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modelplug_kit import Timeouts

if TYPE_CHECKING:
    from modelplug import Request

__all__ = ["SECTION", "Options", "cache_enabled"]

SECTION = "anthropic"
_POSITIVE = {"gt": 0}


@dataclass(frozen=True)
class Options(Timeouts):
    """The plugin's options; the defaults are the defaults."""

    cache: bool = True
    read_timeout: float = field(default=1200.0, metadata=_POSITIVE)
    first_byte_timeout: float = field(default=600.0, metadata=_POSITIVE)
    # A long prompt (images, a whole repository) over a slow link.
    write_timeout: float = field(default=600.0, metadata=_POSITIVE)


def cache_enabled(request: Request, options: Options) -> bool:
    """Prompt caching: the request's ``cache`` wins, then ``[anthropic] cache``."""
    if request.cache is not None:
        return request.cache
    return options.cache
