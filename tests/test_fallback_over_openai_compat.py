"""The policy around a real provider plugin on the test kit's loopback server: an
OpenAI-compatible provider of the user's own, its errors as the wire sends them."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug.contract.types import Notice
from modelplug_fallback.policy import default_policy
from modelplug_kit.testing import WireServer

compat = pytest.importorskip("modelplug_openai_compat")
pytest.importorskip("modelplug_fallback")

RECORDING = Path(__file__).parent / "recordings" / "chat_text.sse"
RATE_LIMIT_BODY = {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}
UNAVAILABLE_BODY = {"error": {"message": "upstream unavailable", "type": "server_error"}}


def providers(server: WireServer, *names: str) -> dict[str, Any]:
    url = server.url + "/v1"
    return {"providers": {n: {"type": "openai-compatible", "base_url": url} for n in names}}


def run(client: Any, spec: str) -> tuple[Any, list[Notice]]:
    seen: list[Notice] = []
    response = client.complete(
        spec, "hi", on_event=lambda e: seen.append(e) if isinstance(e, Notice) else None
    )
    return response, seen


class FakeClock:
    """A clock and a sleep that only advances it: the test never really waits."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> Any:
    clock = FakeClock()
    monkeypatch.setattr(default_policy(), "sleep", clock.sleep)
    monkeypatch.setattr(default_policy(), "clock", clock)
    return clock


def test_modelplug_stream_waits_out_a_429_from_an_openai_compatible_server(
    make_client: Any, wire_server: WireServer, fake_time: Any
) -> None:
    wire_server.add_json(RATE_LIMIT_BODY, status=429, headers={"retry-after": "2"})
    wire_server.add_file(RECORDING)
    client = make_client(
        "modelplug-fallback",
        "modelplug-openai-compat",
        entry_points=True,
        config=providers(wire_server, "local"),
        environ={},
    )

    response, seen = run(client, "local/qwen3")

    assert response.text == "Still here."
    assert response.model == "local/qwen3"
    assert fake_time.sleeps == [2.0]
    assert len(wire_server.requests) == 2
    assert [r.json()["model"] for r in wire_server.requests] == ["qwen3", "qwen3"]
    wait, recovered = seen
    assert wait.details["server_asked"] is True and wait.details["status"] == 429
    assert "local/qwen3: rate limited" in wait.message and "retry 1 of 2 in 2.0 s" in wait.message
    assert recovered.details["phase"] == "recovered"


def test_modelplug_stream_falls_back_from_a_503_to_another_openai_compatible_provider(
    make_client: Any, wire_server: WireServer, fake_time: Any
) -> None:
    wire_server.add_json(UNAVAILABLE_BODY, status=503)
    wire_server.add_file(RECORDING)
    config = providers(wire_server, "local", "backup")
    config["fallbacks"] = {"local/qwen3": ["backup/llama"]}
    config["models"] = {"backup/llama": {"price": {"input": "1", "output": "4"}}}
    config["fallback"] = {"retries": 0}
    client = make_client(
        "modelplug-fallback",
        "modelplug-openai-compat",
        entry_points=True,
        config=config,
        environ={},
    )

    response, seen = run(client, "local/qwen3")

    assert [r.json()["model"] for r in wire_server.requests] == ["qwen3", "llama"]
    (notice,) = seen
    assert notice.kind == "fallback"
    assert notice.message.startswith("local/qwen3 failed (server error 503")
    assert notice.message.endswith("falling back to backup/llama")
    assert response.model == "backup/llama"
    assert response.message.model == "backup/llama"
    assert response.usage.input == 1200 and response.usage.output == 300
    # backup/llama's own price: 1200 * 1 / 1e6 + 300 * 4 / 1e6.
    assert response.cost is not None and response.cost.amount == Decimal("0.0024")
    assert fake_time.sleeps == []
