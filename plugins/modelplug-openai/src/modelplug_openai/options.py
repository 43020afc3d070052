"""This plugin's options: the ``[openai]`` table of the settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from modelplug_kit import Timeouts

__all__ = ["SECTION", "Options"]

SECTION = "openai"


@dataclass(frozen=True)
class Options(Timeouts):
    """``[openai]`` in the settings.

    - the kit's timeouts, in seconds: ``connect_timeout``, ``first_byte_timeout`` (from
      sending the request to the answer's headers), ``read_timeout`` (the longest
      silence between two reads of a stream), ``write_timeout``; the two waits for the
      model default to 600 s.
    - ``store``: let OpenAI keep the response (``store: true``). Off by default: the
      conversation travels whole, reasoning included as encrypted items.
    - ``prompt_cache_key``: sent as ``prompt_cache_key``, so calls that share a prefix
      land on the same cache.
    - ``strict_tools``: function tools with ``strict: true`` (the schema must then be
      one OpenAI's strict mode accepts). Off by default.
    - ``reasoning_summary``: which summary to ask for when thinking is shown.
    - ``embed_concurrency``: how many batches of one embedding call are sent at once.
    """

    # Longer than the kit's: a reasoning model may think for minutes before a word.
    first_byte_timeout: float = field(default=600.0, metadata={"gt": 0})
    read_timeout: float = field(default=600.0, metadata={"gt": 0})
    store: bool = False
    prompt_cache_key: str | None = None
    strict_tools: bool = False
    reasoning_summary: Literal["auto", "concise", "detailed"] = "auto"
    embed_concurrency: int = field(default=4, metadata={"gt": 0})
