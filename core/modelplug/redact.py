"""Keep secrets out of every message modelplug produces.

Whenever modelplug reads a key (from the environment or the credentials file) or a
header value from the user's settings, it registers the value here; every exception
message, Notice and log line passes through :func:`redact`. The set is process-wide
because a key read by one client may surface in an error raised through another.
"""

from __future__ import annotations

import logging
import threading

__all__ = ["RedactingFilter", "redact", "register_secret"]

_MIN_SECRET_LENGTH = 6
_lock = threading.Lock()
_secrets: frozenset[str] = frozenset()


def register_secret(value: str | None) -> None:
    """Remember a secret so it is masked wherever it would appear."""
    global _secrets
    if not value or len(value) < _MIN_SECRET_LENGTH:
        return
    with _lock:
        if value not in _secrets:
            _secrets = _secrets | {value}


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    secrets = _secrets
    if not secrets:
        return text
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "***")
    return text


def _install_record_factory() -> None:
    """Redact every record logged under ``modelplug`` (any child logger too).

    A filter on the ``modelplug`` logger would not see records of its children, and
    handlers belong to the application; wrapping the record factory covers both. Only
    records of modelplug's own loggers are touched.
    """
    previous = logging.getLogRecordFactory()
    if getattr(previous, "_modelplug_redacting", False):
        return

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _secrets and record.name.startswith("modelplug"):
            message = record.getMessage()
            cleaned = redact(message)
            if cleaned != message:
                record.msg = cleaned
                record.args = None
        return record

    factory._modelplug_redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in a record's rendered message."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        return True


logging.getLogger("modelplug").addFilter(RedactingFilter())
_install_record_factory()
