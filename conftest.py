"""Session-wide checks for every test in the repository (core and plugins).

A planted key is put in the environment as PLANTED_API_KEY. Tests that configure a
provider with ``api_key_env = "PLANTED_API_KEY"`` send it on the wire; this file then
scans everything the suite produced — failure reports, captured output and logs, and
warnings — and fails the run if the key appears anywhere.

Property tests run without hypothesis' timing checks: CI's 2-core machine may be slow or
busy, and timing goals belong in bench/, not in tests that could then fail by chance.
"""

from __future__ import annotations

import logging
import os
import secrets

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("modelplug", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("modelplug")

PLANTED_KEY = "sk-planted-" + secrets.token_hex(16)
os.environ["PLANTED_API_KEY"] = PLANTED_KEY

_leaks: list[str] = []


class _LeakWatcher(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:
            return
        if PLANTED_KEY in message:
            _leaks.append(f"log record from {record.name}: {message[:200]}")


_watcher = _LeakWatcher(level=logging.DEBUG)
logging.getLogger().addHandler(_watcher)
logging.getLogger("modelplug").addHandler(_watcher)


@pytest.fixture
def planted_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The planted key, set as PLANTED_API_KEY for this test."""
    monkeypatch.setenv("PLANTED_API_KEY", PLANTED_KEY)
    return PLANTED_KEY


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    texts = {
        "failure report": report.longreprtext,
        "stdout": report.capstdout,
        "stderr": report.capstderr,
        "log": report.caplog,
    }
    for where, text in texts.items():
        if text and PLANTED_KEY in text:
            _leaks.append(f"{report.nodeid} ({report.when}): the planted key is in its {where}")


def pytest_warning_recorded(
    warning_message: object, when: str, nodeid: str, location: object
) -> None:
    if PLANTED_KEY in str(getattr(warning_message, "message", "")):
        _leaks.append(f"{nodeid}: a warning holds the planted key")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _leaks:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["a secret leaked into messages produced by the test suite:", *_leaks]
        if reporter is not None:
            reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
