"""This plugin's HTTP path (the kit's, one per plugin) and its options (``[bedrock]``).

httpx2 is imported by the kit on first use, never when the plugin module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from modelplug_kit import ProviderHTTP, Timeouts

from .errors import ERRORS, SECTION

__all__ = ["HTTP", "Options"]


@dataclass(frozen=True)
class Options(Timeouts):
    """``[bedrock]`` in settings: the kit's timeouts (a reasoning model may think for
    minutes between two events, so ``read_timeout`` is long), and ``region`` and
    ``profile`` for every Bedrock provider whose own table names none."""

    read_timeout: float = field(default=600.0, metadata={"gt": 0})
    region: str | None = None
    profile: str | None = None


HTTP = ProviderHTTP("modelplug-bedrock", section=SECTION, errors=ERRORS, options=Options)
