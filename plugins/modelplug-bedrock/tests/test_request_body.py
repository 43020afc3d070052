"""Request bodies as sent, validated against botocore's service model for
bedrock-runtime (the ConverseStream input shape; the JSON wire uses its member names)."""

from __future__ import annotations

import base64
import json

import pytest
from botocore.session import get_session
from botocore.validate import ParamValidator
from modelplug import ModelplugError, RequestError, as_request
from modelplug.contract.types import (
    ImageBlock,
    Message,
    Request,
    TextBlock,
    ThinkingBlock,
    ThinkingRequest,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

CLAUDE = "us.anthropic.claude-sonnet-4-6-v1:0"
PATH = "/model/us.anthropic.claude-sonnet-4-6-v1%3A0/converse-stream"
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n tiny").decode()
SIGNED = {"reasoningText": {"text": "Let me think.", "signature": "c2lnbmF0dXJl"}}
WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def validate(body: dict, model: str = CLAUDE) -> None:
    """botocore's own check of the ConverseStream input; blobs, base64 on the JSON wire,
    are bytes to botocore."""
    params = json.loads(json.dumps(body))
    for message in params["messages"]:
        for block in message["content"]:
            for holder in (block, *[p for p in block.get("toolResult", {}).get("content", [])]):
                if "image" in holder:
                    source = holder["image"]["source"]
                    source["bytes"] = base64.b64decode(source["bytes"])
            reasoning = block.get("reasoningContent", {})
            if "redactedContent" in reasoning:
                reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])
    shape = get_session().get_service_model("bedrock-runtime").operation_model("ConverseStream")
    report = ParamValidator().validate({"modelId": model, **params}, shape.input_shape)
    assert not report.has_errors(), report.generate_report()


def sent_body(client, bedrock, wire_server, request, model=CLAUDE):
    bedrock.serve(bedrock.recorded("text.eventstream"), model=model.replace(":", "%3A"))
    client().complete(f"bedrock/{model}", request)
    return wire_server.requests[-1].json()


def conversation() -> Request:
    me = f"bedrock/{CLAUDE}"
    return Request(
        system="Be brief.",
        messages=[
            Message(
                role="user",
                content=[
                    TextBlock(text="What is this, and the weather?"),
                    ImageBlock(media_type="image/png", data=PIXEL),
                ],
            ),
            Message(
                role="assistant",
                model=me,
                content=[
                    ThinkingBlock(
                        text="Let me think.",
                        signature="c2lnbmF0dXJl",
                        wire={"reasoningContent": SIGNED},
                        origin=me,
                    ),
                    ThinkingBlock(
                        redacted=True,
                        wire={"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
                        origin=me,
                    ),
                    TextBlock(text="A pixel. Checking the weather."),
                    ToolUseBlock(id="tooluse_1", name="get_weather", input={"city": "Paris"}),
                ],
            ),
            Message(
                role="user",
                content=[
                    ToolResultBlock(
                        tool_use_id="tooluse_1",
                        content=[
                            TextBlock(text="30 C"),
                            ImageBlock(media_type="image/jpeg", data=PIXEL),
                        ],
                    )
                ],
            ),
        ],
        tools=[WEATHER],
        tool_choice="any",
        max_tokens=512,
        temperature=0.2,
        top_p=0.9,
        top_k=40,
        stop=["END"],
        cache=True,
        extra={
            "guardrailConfig": {"guardrailIdentifier": "g1", "guardrailVersion": "1"},
            "anthropic_beta": ["x"],
        },
    )


def test_a_whole_conversation_is_a_valid_converse_stream_request(client, bedrock, wire_server):
    body = sent_body(client, bedrock, wire_server, conversation())
    validate(body)
    user, assistant, result = body["messages"]
    assert user["content"][1] == {"image": {"format": "png", "source": {"bytes": PIXEL}}}
    # The model's own reasoning goes back byte for byte, signature and redaction kept.
    assert assistant["content"][:2] == [
        {"reasoningContent": SIGNED},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
    ]
    assert assistant["content"][3] == {
        "toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}
    }
    tool_result = result["content"][0]["toolResult"]
    assert tool_result["status"] == "success" and tool_result["content"][0] == {"text": "30 C"}
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert result["content"][-1] == {"cachePoint": {"type": "default"}}
    assert body["toolConfig"]["tools"][-1] == {"cachePoint": {"type": "default"}}
    assert body["toolConfig"]["toolChoice"] == {"any": {}}
    assert body["inferenceConfig"] == {
        "maxTokens": 512,
        "temperature": 0.2,
        "topP": 0.9,
        "stopSequences": ["END"],
    }
    assert body["guardrailConfig"] == {"guardrailIdentifier": "g1", "guardrailVersion": "1"}
    assert body["additionalModelRequestFields"] == {"top_k": 40, "anthropic_beta": ["x"]}


def test_reasoning_of_another_model_is_not_replayed(client, bedrock, wire_server):
    request = conversation()
    body = sent_body(client, bedrock, wire_server, request, model="meta.llama3-3-70b-instruct-v1:0")
    validate(body, "meta.llama3-3-70b-instruct-v1:0")
    assistant = body["messages"][1]["content"]
    assert not [b for b in assistant if "reasoningContent" in b]
    assert "cachePoint" not in json.dumps(body)  # Llama takes no cache points
    assert body["additionalModelRequestFields"]["topK"] == 40


def test_thinking_asks_claude_for_its_budget(client, bedrock, wire_server):
    body = sent_body(
        client,
        bedrock,
        wire_server,
        as_request("hi").model_copy(update={"thinking": ThinkingRequest(budget_tokens=2000)}),
    )
    validate(body)
    assert body["additionalModelRequestFields"]["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2000,
    }


def test_structured_output_forces_a_tool(client, bedrock, wire_server):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    bedrock.serve(bedrock.recorded("tool_use.eventstream"), model="m")
    try:
        client().complete("bedrock/m", "hi", output_schema=schema)
    except ModelplugError:
        pass  # the recorded answer calls another tool; the body is what is checked
    body = wire_server.requests[-1].json()
    validate(body, "m")
    (tool,) = body["toolConfig"]["tools"]
    assert tool["toolSpec"]["inputSchema"] == {"json": schema}
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": tool["toolSpec"]["name"]}}


def test_an_image_by_url_is_refused_before_sending(client, wire_server):
    request = Request(
        messages=[Message(role="user", content=[ImageBlock(url="https://example.com/a.png")])]
    )
    with pytest.raises(RequestError, match="not a URL"):
        client().complete("bedrock/m", request)
    assert not wire_server.requests
