"""complete() without a callback logs notices: which route answers (kind ``route``, a
model group's pick, on every call) at INFO; every other notice at WARNING."""

from __future__ import annotations

import logging

import pytest
from modelplug.client.calls import dispatch
from modelplug.contract.types import Notice


@pytest.mark.parametrize(("kind", "level"), [("route", logging.INFO), ("retry", logging.WARNING)])
def test_a_notice_without_a_callback_is_logged_at_its_level(
    caplog: pytest.LogCaptureFixture, kind: str, level: int
) -> None:
    with caplog.at_level(logging.DEBUG, logger="modelplug"):
        assert dispatch(Notice(kind=kind, message=f"a {kind} notice"), None) is None
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(level, f"a {kind} notice")]


def test_a_callback_gets_the_route_notice_instead(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Notice] = []
    with caplog.at_level(logging.DEBUG, logger="modelplug"):
        dispatch(Notice(kind="route", message="group g: a/m answers"), seen.append)
    assert [n.kind for n in seen] == ["route"] and not caplog.records
