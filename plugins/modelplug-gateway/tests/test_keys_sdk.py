"""Virtual keys through the gateway on uvicorn, with the official openai and anthropic
SDKs as clients: each refusal arrives as the SDK's own exception class."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from modelplug.contract.routes import Price
from modelplug.contract.types import Usage
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply
from modelplug_gateway.key_gate import VirtualKeyGate
from modelplug_gateway.keys import Hasher, KeyRecord, new_key
from modelplug_gateway.keys.sqlite_store import SqliteKeys
from modelplug_kit import MemoryCounters

HELLO = [{"role": "user", "content": "hello"}]
# $1 per million input tokens: 10,000 input tokens cost exactly $0.01.
PRICE = Price(input=Decimal("1"), output=Decimal("1"))
CENT = Usage(input=10_000, output=0)


@pytest.fixture
def keys(tmp_path: Path) -> Any:
    hasher = Hasher(b"a test secret of sixteen bytes or more")
    store = SqliteKeys(tmp_path / "keys.sqlite3")
    gate = VirtualKeyGate(store, hasher, MemoryCounters())

    def make(name: str, **fields: Any) -> str:
        key = new_key(hasher)
        asyncio.run(store.add(KeyRecord(name=name, hash=hasher.digest(key), **fields)))
        return key

    return gate, make


def test_openai_sdk_sees_each_refusal_as_its_own_exception(
    keys: Any, make_gateway: Any, serve: Any
) -> None:
    gate, make = keys
    key = make("alice", models=("echo",))
    with serve(make_gateway(gate=gate)) as url:
        good = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
        answer = good.chat.completions.create(model="echo", messages=HELLO)
        assert answer.choices[0].message.content == "hello"
        wrong = openai.OpenAI(base_url=url + "/v1", api_key=new_key(gate.hasher), max_retries=0)
        with pytest.raises(openai.AuthenticationError) as caught:
            wrong.chat.completions.create(model="echo", messages=HELLO)
        assert "mpk-" not in str(caught.value)
        with pytest.raises(openai.PermissionDeniedError):
            good.chat.completions.create(model="fake/m", messages=HELLO)
        in_url = httpx2.post(
            f"{url}/v1/chat/completions?api_key={key}",
            json={"model": "echo", "messages": HELLO},
        )
        assert in_url.status_code == 401 and key not in in_url.text


def test_a_budget_lets_exactly_ten_cent_calls_through(
    keys: Any, make_gateway: Any, serve: Any
) -> None:
    gate, make = keys
    key = make("budgeted", budget=Decimal("0.10"), period="day")
    fake = FakeModel([reply("ok", usage=CENT) for _ in range(12)], price=PRICE)
    with serve(make_gateway(fake, gate=gate)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
        ok = 0
        for _ in range(12):
            try:
                client.chat.completions.create(model="fake/m", messages=HELLO)
            except openai.RateLimitError as exc:
                refused = exc
                break
            ok += 1
    assert ok == 10
    assert "budget of 0.10 USD per day" in str(refused) and "resets at" in str(refused)
    assert float(refused.response.headers["retry-after"]) > 0


def test_anthropic_sdk_over_rpm_gets_rate_limit_error_with_retry_after(
    keys: Any, make_gateway: Any, serve: Any
) -> None:
    gate, make = keys
    key = make("claude-user", rpm=2)
    with serve(make_gateway(gate=gate)) as url:
        client = anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)
        for _ in range(2):
            message = client.messages.create(model="echo", max_tokens=16, messages=HELLO)
            assert message.content[0].text == "hello"  # type: ignore[union-attr]
        with pytest.raises(anthropic.RateLimitError) as caught:
            client.messages.create(model="echo", max_tokens=16, messages=HELLO)
        assert int(caught.value.response.headers["retry-after"]) >= 1
        stranger = anthropic.Anthropic(base_url=url, api_key=new_key(gate.hasher), max_retries=0)
        with pytest.raises(anthropic.AuthenticationError):
            stranger.messages.create(model="echo", max_tokens=16, messages=HELLO)


def test_metrics_and_the_request_log_name_the_key_never_show_it(
    keys: Any, make_gateway: Any, serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import json
    import logging

    gate, make = keys
    key = make("metered", budget=Decimal("1.00"))
    fake = FakeModel([reply("ok", usage=CENT)], price=PRICE)
    caplog.set_level(logging.INFO, logger="modelplug.gateway.requests")
    with serve(make_gateway(fake, gate=gate)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
        client.chat.completions.create(model="fake/m", messages=HELLO)
        metrics = httpx2.get(url + "/metrics").text
    assert 'modelplug_gateway_key_spend_usd_total{key="metered"} 0.01' in metrics
    assert 'modelplug_gateway_key_requests_total{key="metered",outcome="admitted"} 1' in metrics
    assert key not in metrics
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name.endswith("requests")]
    (line,) = [entry for entry in lines if entry["path"] == "/v1/chat/completions"]
    assert (line["key"], line["status"], line["cost_usd"]) == ("metered", 200, "0.01")
    assert line["input_tokens"] == 10_000 and line["overhead_ms"] is not None
    assert key not in caplog.text and "hello" not in caplog.text
