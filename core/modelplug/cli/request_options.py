"""``chat -o KEY=VALUE``: one request option from the command line.

A value is read as JSON when it is JSON (``0.2``, ``42``, ``true``, ``null``,
``["END"]``), else taken as the string it is. KEY is one of :data:`REQUEST_FIELDS`,
which set the Request field of that name, or ``extra.NAME``, which passes NAME to the
provider as it is (``Request.extra``). Any other key is refused, naming the option, so a
typo never reaches a provider as an option it silently ignores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from modelplug.contract.errors import ConfigError

__all__ = ["HELP", "REQUEST_FIELDS", "parse_options"]

# The Request fields that are a plain value; the others have their own flags (--system,
# --max-tokens, --effort, --schema) or are not one value (messages, tools).
REQUEST_FIELDS = ("temperature", "top_p", "top_k", "seed", "max_tokens", "stop", "cache")
HELP = (
    f"a request option, repeatable: {', '.join(REQUEST_FIELDS)} set that Request field; "
    "extra.NAME passes NAME to the provider as is (Request.extra). VALUE is read as JSON "
    "when it is (numbers, true/false), else as a string"
)


def parse_options(given: Sequence[str]) -> dict[str, Any]:
    """Request fields from ``-o`` options, each checked against the Request's own rules."""
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for option in given:
        key, equals, raw = option.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ConfigError(f"-o {option}: write -o KEY=VALUE, e.g. -o temperature=0.2")
        value = _value(raw)
        if key.startswith("extra."):
            name = key.removeprefix("extra.")
            if not name:
                raise ConfigError(
                    f"-o {option}: name the provider option, e.g. -o extra.num_ctx=8192"
                )
            extra[name] = value
            continue
        if key not in REQUEST_FIELDS:
            raise ConfigError(
                f"-o {option}: unknown option {key!r}; the request options are "
                f"{', '.join(REQUEST_FIELDS)}, and -o extra.{key}={raw} passes it to the "
                "provider as is"
            )
        if key == "stop" and isinstance(value, str):
            value = [value]
        _check(option, key, value)
        fields[key] = value
    if extra:
        fields["extra"] = extra
    return fields


def _value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _check(option: str, key: str, value: Any) -> None:
    """The Request's own validation of one field, its message naming the option."""
    from modelplug.client.calls import coerce_request
    from modelplug.contract.errors import RequestError

    try:
        coerce_request("", {key: value})
    except RequestError as exc:
        reason = str(exc).removeprefix("invalid request: ").removeprefix(f"{key}: ")
        raise ConfigError(f"-o {option}: {reason}") from None
