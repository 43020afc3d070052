"""A planted key, and a watch over everything a test run prints for it.

The ``planted_key`` fixture puts a distinctive random key in ``PLANTED_API_KEY`` for
one test; a provider configured with ``api_key_env = "PLANTED_API_KEY"`` then sends it
on the wire. Across the whole run, the pytest plugin scans every failure report,
captured output, log record (of every logger, at every level) and warning for that key
and fails the run if it appears anywhere. The key is random per run, so a run that
never uses the fixture can never trip the watch.
"""

from __future__ import annotations

import logging
import secrets

__all__ = ["PLANTED_KEY", "LeakWatch"]

PLANTED_KEY = "sk-planted-" + secrets.token_hex(16)


class LeakWatch(logging.Handler):
    """Collects every place the planted key showed up."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.leaks: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:
            return
        if PLANTED_KEY in message:
            self.leaks.append(f"log record from {record.name}: {message[:200]}")

    def scan(self, where: str, text: str | None) -> None:
        if text and PLANTED_KEY in text:
            self.leaks.append(f"{where}: the planted key is in it")
