"""The CLI's exit codes."""

from __future__ import annotations

from modelplug.contract.errors import (
    ConfigError,
    MissingKeyError,
    ModelplugError,
    RequestError,
    UnknownProviderError,
)

__all__ = ["exit_code"]


def exit_code(error: ModelplugError) -> int:
    """The CLI's one rule: 2 when what you gave is wrong (the command line, a settings
    file, the spec, the request, a missing key) and you must change it; 1 when the call
    itself failed (the model or provider answered with an error, or a plugin broke)."""
    wrong_input = (ConfigError, RequestError, MissingKeyError, UnknownProviderError)
    return 2 if isinstance(error, wrong_input) else 1
