"""Regenerate ``model_index.json`` from the installed genai-prices:

    python -m modelplug_prices.build_index [--check]

The index holds what resolving a route needs from genai-prices and nothing else: each
provider's id and matching rules, and each model's id, matching rule and context
window, in genai-prices' own order and clause shapes (``starts_with``, ``equals``,
``or``, ...). :mod:`modelplug_prices.index` answers from it without importing
genai-prices (about 0.6 s of imports with pydantic). Run this after upgrading
genai-prices; until then the plugin notices the version differs and asks genai-prices
itself. ``--check`` exits 1 when the file is not what this would write.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["INDEX_PATH", "build", "clause", "render"]

INDEX_PATH = Path(__file__).with_name("model_index.json")
# The dataclass attribute of each genai-prices clause type, and its key in the index
# (the key genai-prices' own data files use).
_CLAUSE_FIELDS = {
    "starts_with": "starts_with",
    "ends_with": "ends_with",
    "contains": "contains",
    "regex": "regex",
    "equals": "equals",
    "or_": "or",
    "and_": "and",
}


def clause(logic: Any) -> dict[str, Any] | None:
    """One genai-prices match clause as plain data; raises on a clause type this
    module does not know, so a new genai-prices clause cannot be dropped silently."""
    if logic is None:
        return None
    for attribute, key in _CLAUSE_FIELDS.items():
        if hasattr(logic, attribute):
            value = getattr(logic, attribute)
            if isinstance(value, list):
                return {key: [clause(part) for part in value]}
            return {key: value}
    raise TypeError(f"unknown genai-prices match clause {type(logic).__name__}")


def build() -> dict[str, Any]:
    """The index for the installed genai-prices' bundled data (its public
    ``genai_prices.data.providers``, whatever snapshot is in use)."""
    import genai_prices
    from genai_prices.data import providers as bundled

    providers = []
    for provider in bundled:
        providers.append(
            {
                "id": provider.id,
                "provider_match": clause(provider.provider_match),
                "model_match": clause(provider.model_match),
                "fallback_model_providers": list(provider.fallback_model_providers or []),
                "models": [
                    [model.id, clause(model.match), model.context_window]
                    for model in provider.models
                ],
            }
        )
    return {"genai_prices_version": genai_prices.__version__, "providers": providers}


def render(index: dict[str, Any]) -> str:
    """The file's text: one provider per block, one model per line (readable diffs)."""
    lines = ["{", f'"genai_prices_version": {json.dumps(index["genai_prices_version"])},']
    lines.append('"providers": [')
    for p, provider in enumerate(index["providers"]):
        head = {k: v for k, v in provider.items() if k != "models"}
        lines.append(json.dumps(head)[:-1] + ', "models": [')
        models = provider["models"]
        for m, model in enumerate(models):
            lines.append("  " + json.dumps(model) + ("," if m < len(models) - 1 else ""))
        lines.append("]}" + ("," if p < len(index["providers"]) - 1 else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        same = INDEX_PATH.exists() and INDEX_PATH.read_text(encoding="utf-8") == text
        print(f"{INDEX_PATH.name}: {'up to date' if same else 'differs from genai-prices'}")
        return 0 if same else 1
    INDEX_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX_PATH} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
