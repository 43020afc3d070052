"""The ``[anthropic]`` options table, read once per client and event loop.

    [anthropic]
    cache = true                 # prompt-caching breakpoints (a request's own `cache` wins)
    read_timeout = 1200          # s: the longest silence between two bytes of an answer
    first_byte_timeout = 600     # s: the longest wait until the answer starts (its headers)
    connect_timeout = 10         # s: to open a connection

Long thinking can keep a stream silent for minutes, hence the long defaults. A wrong
value is a ConfigError naming the key; an unknown key is a one-line warning (the kit's
:func:`~modelplug.plugin.read_options`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Settings

__all__ = ["SECTION", "Options", "http_timeout", "read"]

SECTION = "anthropic"
_POSITIVE = {"gt": 0}


@dataclass(frozen=True)
class Options:
    """The plugin's options; the defaults are the defaults."""

    cache: bool = True
    read_timeout: float = field(default=1200.0, metadata=_POSITIVE)
    first_byte_timeout: float = field(default=600.0, metadata=_POSITIVE)
    connect_timeout: float = field(default=10.0, metadata=_POSITIVE)
    # Sending a long prompt over a slow link: not worth a setting of its own.
    write_timeout: float = field(default=600.0, init=False)


def read(settings: Settings) -> Options:
    """``[anthropic]`` of ``settings`` as :class:`Options`."""
    from modelplug.plugin import read_options

    return read_options(settings, SECTION, Options)


def http_timeout(options: Options) -> httpx2.Timeout:
    """httpx2's timeouts for one request. The wait for a pooled connection counts toward
    the first byte, which the caller also enforces as a whole."""
    import httpx2

    return httpx2.Timeout(
        connect=options.connect_timeout,
        read=options.read_timeout,
        write=options.write_timeout,
        pool=options.first_byte_timeout,
    )
