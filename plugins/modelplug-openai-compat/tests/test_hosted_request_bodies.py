"""What each hosted service's own rules put on the wire: fields renamed, fields left out
with a Notice that names them, and ``Request.extra`` sent as given."""

from __future__ import annotations

import pytest
from modelplug.contract.types import (
    Message,
    Notice,
    Request,
    TextBlock,
    ThinkingRequest,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

DONE = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]
HI = [Message(role="user", content="hi")]
TOOL = ToolSpec(
    name="weather",
    description="Weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def sent(compat, wire_server, service, model, request, **provider):
    """The body sent to ``service``'s preset (pointed at the wire server) and the
    notices of the call."""
    wire_server.add_sse(DONE, done=True)
    events = list(compat(name=service, **provider).stream(f"{service}/{model}", request))
    assert events[-1].response.text == "ok"
    return wire_server.requests[-1].json(), [e for e in events if isinstance(e, Notice)]


def test_mistral_names_a_required_tool_call_any_and_the_seed_random_seed(compat, wire_server):
    request = Request(messages=HI, tools=[TOOL], tool_choice="any", seed=7, top_k=40)
    body, notices = sent(compat, wire_server, "mistral", "mistral-small-latest", request)
    assert body["tool_choice"] == "any"
    assert body["random_seed"] == 7
    assert "seed" not in body and "stream_options" not in body and "top_k" not in body
    (notice,) = notices
    assert notice.kind == "unsupported_fields"
    assert notice.details["fields"] == {
        "top_k": "Mistral's API has no top_k (it refuses unknown fields with a 422)"
    }
    assert notice.message.startswith("mistral/mistral-small-latest takes no top_k;")


def test_extra_goes_as_given_past_the_services_rules(compat, wire_server):
    request = Request(messages=HI, extra={"top_k": 5, "safe_prompt": True})
    body, notices = sent(compat, wire_server, "mistral", "mistral-small-latest", request)
    assert (body["top_k"], body["safe_prompt"]) == (5, True)
    assert notices == []


def test_deepseek_switches_thinking_by_its_own_field(compat, wire_server):
    request = Request(messages=HI, thinking=ThinkingRequest(enabled=True), temperature=0.3)
    body, notices = sent(compat, wire_server, "deepseek", "deepseek-chat", request)
    assert body["thinking"] == {"type": "enabled"}
    assert "reasoning_effort" not in body
    # In thinking mode DeepSeek ignores temperature and top_p: said, and left out.
    assert "temperature" not in body
    assert list(notices[0].details["fields"]) == ["temperature"]


def test_deepseek_chat_without_thinking_keeps_its_sampling(compat, wire_server):
    request = Request(
        messages=HI, thinking=ThinkingRequest(enabled=False), temperature=0.3, top_p=0.9
    )
    body, notices = sent(compat, wire_server, "deepseek", "deepseek-chat", request)
    assert body["thinking"] == {"type": "disabled"}
    assert (body["temperature"], body["top_p"]) == (0.3, 0.9)
    assert notices == []


def test_deepseek_reasoner_takes_no_sampling_or_top_k(compat, wire_server):
    request = Request(messages=HI, temperature=0.3, top_p=0.9, top_k=20)
    body, notices = sent(compat, wire_server, "deepseek", "deepseek-reasoner", request)
    assert not {"temperature", "top_p", "top_k"} & body.keys()
    assert sorted(notices[0].details["fields"]) == ["temperature", "top_k", "top_p"]


def test_xai_grok_4_takes_no_stop_and_no_reasoning_effort(compat, wire_server):
    request = Request(messages=HI, stop=["END"], thinking=ThinkingRequest(effort="high"))
    body, notices = sent(compat, wire_server, "xai", "grok-4", request)
    assert "stop" not in body and "reasoning_effort" not in body
    fields = notices[0].details["fields"]
    assert sorted(fields) == ["reasoning_effort", "stop"]
    assert "takes no reasoning_effort (models that do: grok-3-mini" in fields["reasoning_effort"]


def test_xai_grok_3_mini_gets_the_nearest_effort_it_takes(compat, wire_server):
    request = Request(messages=HI, thinking=ThinkingRequest(effort="medium"))
    body, notices = sent(compat, wire_server, "xai", "grok-3-mini", request)
    assert body["reasoning_effort"] == "low"  # grok-3-mini takes low | high
    assert notices == []


def test_xai_grok_3_keeps_its_stop_sequences(compat, wire_server):
    body, notices = sent(compat, wire_server, "xai", "grok-3", Request(messages=HI, stop=["END"]))
    assert body["stop"] == ["END"]
    assert notices == []


def test_a_reasoning_dialect_in_settings_keeps_the_effort(compat, wire_server):
    settings = {"models": {"xai/grok-4.20-reasoning": {"reasoning_dialect": "openai"}}}
    wire_server.add_sse(DONE, done=True)
    request = Request(messages=HI, thinking=ThinkingRequest(effort="high"))
    compat(settings, name="xai").complete("xai/grok-4.20-reasoning", request)
    assert wire_server.requests[-1].json()["reasoning_effort"] == "high"


def test_groq_qwen3_gets_its_own_effort_and_parsed_reasoning(compat, wire_server):
    request = Request(messages=HI, thinking=ThinkingRequest(enabled=True))
    body, _ = sent(compat, wire_server, "groq", "qwen/qwen3-32b", request)
    assert (body["reasoning_effort"], body["reasoning_format"]) == ("default", "parsed")


@pytest.mark.parametrize(
    ("model", "thinking", "why"),
    [
        ("llama-3.3-70b-versatile", ThinkingRequest(effort="low"), "takes no reasoning_effort"),
        ("openai/gpt-oss-120b", ThinkingRequest(enabled=False), "always reasons"),
    ],
)
def test_groq_leaves_out_an_effort_the_model_does_not_take(
    compat, wire_server, model, thinking, why
):
    body, notices = sent(
        compat, wire_server, "groq", model, Request(messages=HI, thinking=thinking)
    )
    assert "reasoning_effort" not in body
    assert why in notices[0].details["fields"]["reasoning_effort"]


def test_perplexity_takes_no_tools(compat, wire_server):
    request = Request(messages=HI, tools=[TOOL], tool_choice="auto")
    body, notices = sent(compat, wire_server, "perplexity", "sonar", request)
    assert "tools" not in body and "tool_choice" not in body
    assert notices[0].details["fields"] == {
        "tools": "Perplexity's Sonar API has no function calling",
        "tool_choice": "Perplexity's Sonar API has no function calling",
    }


@pytest.mark.parametrize("service", ["together", "fireworks", "cerebras", "deepinfra"])
def test_services_without_body_rules_get_the_plain_body(compat, wire_server, service):
    request = Request(messages=HI, seed=7, top_k=40, stop=["END"])
    body, notices = sent(compat, wire_server, service, "m", request)
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "stop": ["END"],
        "top_k": 40,
        "seed": 7,
    }
    assert notices == []


def test_deepseek_v4_thinks_by_default_so_its_sampling_is_left_out(compat, wire_server):
    request = Request(messages=HI, temperature=0.2, top_p=0.4)
    body, notices = sent(compat, wire_server, "deepseek", "deepseek-v4-flash", request)
    assert "temperature" not in body and "top_p" not in body
    assert sorted(notices[0].details["fields"]) == ["temperature", "top_p"]


def test_deepseek_v4_told_not_to_think_keeps_its_sampling(compat, wire_server):
    request = Request(
        messages=HI, thinking=ThinkingRequest(enabled=False), temperature=0.2, top_p=0.4
    )
    body, notices = sent(compat, wire_server, "deepseek", "deepseek-v4-flash", request)
    assert (body["thinking"], body["temperature"], body["top_p"]) == (
        {"type": "disabled"},
        0.2,
        0.4,
    )
    assert notices == []


def test_mistral_gets_tool_call_ids_it_takes_paired_with_their_results(compat, wire_server):
    # A conversation whose calls another provider made (Anthropic's toolu_ ids): Mistral
    # takes 9 letters and digits, so the ids are renamed alike in call and result.
    calls = [
        ToolUseBlock(id="toolu_01A09q90qw90lq917835lq9", name="weather", input={"city": "Oslo"}),
        ToolUseBlock(id="gSIMJiOkT", name="weather", input={"city": "Rome"}),
    ]
    results = [ToolResultBlock(tool_use_id=c.id, content="sunny") for c in calls]
    request = Request(
        messages=[
            *HI,
            Message(role="assistant", content=[TextBlock(text="Checking."), *calls]),
            Message(role="user", content=results),
        ],
        tools=[TOOL],
    )
    body, _ = sent(compat, wire_server, "mistral", "mistral-small-latest", request)
    sent_calls = [c["id"] for c in body["messages"][1]["tool_calls"]]
    sent_results = [m["tool_call_id"] for m in body["messages"][2:]]
    assert sent_calls == sent_results
    renamed, kept = sent_calls
    assert kept == "gSIMJiOkT"
    assert len(renamed) == 9 and renamed.isalnum() and renamed != calls[0].id


@pytest.mark.parametrize(
    ("service", "field"),
    [
        ("together", "repetition_penalty"),
        ("fireworks", "repetition_penalty"),
        ("deepinfra", "repetition_penalty"),
        ("mistral", None),
        ("groq", None),
        ("xai", None),
        ("deepseek", None),
        ("cerebras", None),
        ("perplexity", None),
    ],
)
def test_repeat_penalty_goes_by_the_services_name_or_is_named_as_left_out(
    compat, wire_server, service, field
):
    request = Request(messages=HI, repeat_penalty=1.1, frequency_penalty=0.2)
    body, notices = sent(compat, wire_server, service, "m", request)
    assert "repeat_penalty" not in body
    if field is not None:
        assert body[field] == 1.1
        assert not [n for n in notices if n.kind == "sampling_unsupported"]
    else:
        assert "repetition_penalty" not in body
        (notice,) = [n for n in notices if n.kind == "sampling_unsupported"]
        assert "repeat_penalty" in notice.message
