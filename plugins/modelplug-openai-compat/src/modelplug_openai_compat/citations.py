"""The sources a search-backed service cites beside its answer, as the text's citations.

Perplexity sends ``citations`` (URLs, in the order its ``[1]``, ``[2]`` markers count
them) and, in newer answers, ``search_results`` (title, url, date, ...) at the top
level of its chunks; xAI sends ``citations`` (URLs) with live search. The richer list
wins; each entry is kept as the service sent it (a URL alone becomes ``{"url": ...}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["citations_of"]


def citations_of(metadata: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The citations in a response's top-level fields, or None when there are none."""
    results = metadata.get("search_results")
    if isinstance(results, list):
        found = [dict(r) for r in results if isinstance(r, Mapping) and _url(r.get("url"))]
        if found:
            return found
    urls = metadata.get("citations")
    if isinstance(urls, list):
        found = [{"url": u} for u in urls if _url(u)]
        if found:
            return found
    return None


def _url(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())
