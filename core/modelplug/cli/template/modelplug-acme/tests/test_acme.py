from pathlib import Path

import modelplug_acme
from modelplug_kit.testing import ProviderConformance, Recording

RECORDINGS = Path(__file__).parent / "recordings"


class TestAcmeConformance(ProviderConformance):
    plugin = modelplug_acme
    provider_type = "acme"
    section = "acme"
    stream_path = "/chat"
    recording = Recording(
        RECORDINGS / "acme_text.sse", text="Hello from Acme.", cut_after=2, cut_text="Hello from"
    )


def test_a_tool_call_comes_back_and_its_result_goes_out(make_client, wire_server, monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "test-key")
    wire_server.add_file(RECORDINGS / "acme_tool.sse")
    wire_server.add_file(RECORDINGS / "acme_text.sse")
    # A loopback server needs no key unless its table names one.
    table = {"type": "acme", "base_url": wire_server.url, "api_key_env": "ACME_API_KEY"}
    client = make_client(modelplug_acme, config={"providers": {"work": table}})
    tool = {"name": "weather", "input_schema": {"type": "object"}}
    asked = {"role": "user", "content": "Weather in Oslo?"}
    first = client.complete("work/acme-small", [asked], tools=[tool])
    assert (first.stop_reason, first.usage.input) == ("tool_use", 30)
    assert first.tool_calls[0].input == {"city": "Oslo"}
    result = {"type": "tool_result", "tool_use_id": "call_1", "content": "12 C"}
    client.complete(
        "work/acme-small", [asked, first.message, {"role": "user", "content": [result]}]
    )
    sent = [request.json() for request in wire_server.requests]
    assert sent[0]["tools"] == [{"name": "weather", "parameters": {"type": "object"}}]
    assert sent[1]["messages"][2:] == [
        {"role": "tool_call", "id": "call_1", "name": "weather", "input": {"city": "Oslo"}},
        {"role": "tool_result", "id": "call_1", "content": "12 C"},
    ]
    assert wire_server.requests[0].headers["authorization"] == "Bearer test-key"
