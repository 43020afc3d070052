"""The gateway freezes its long-lived heap once, after its first answered call, so a
full garbage collection no longer walks the modules, the Client and the caches."""

from __future__ import annotations

import gc
import time

import httpx2
import pytest
from modelplug_gateway import long_lived


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch):
    """As in a fresh process: nothing frozen yet (and thawed again after the test)."""
    gc.unfreeze()
    monkeypatch.setattr(long_lived, "_frozen", False)
    yield
    gc.unfreeze()


def test_the_first_answered_call_freezes_the_heap_and_later_calls_leave_it(
    unfrozen, make_gateway, serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"model": "echo/x", "messages": [{"role": "user", "content": "hi"}]}
    with serve(make_gateway()) as url:
        refused = httpx2.post(url + "/v1/chat/completions", json={"model": "echo/x"})
        assert refused.status_code == 400
        assert gc.get_freeze_count() == 0  # an error is not yet a warmed call path
        assert httpx2.post(url + "/v1/chat/completions", json=body).status_code == 200
        # The answer leaves before the gateway's bookkeeping after it: wait for that.
        deadline = time.monotonic() + 10
        while gc.get_freeze_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        frozen = gc.get_freeze_count()
        assert frozen > 1000  # the modules, the Client, the plugins
        collections: list[int] = []
        monkeypatch.setattr(gc, "collect", lambda *a: collections.append(1) or 0)
        for _ in range(3):
            assert httpx2.post(url + "/v1/chat/completions", json=body).status_code == 200
    assert collections == []  # once per process
    assert gc.get_freeze_count() <= frozen  # none added (frozen objects freed leave it)
