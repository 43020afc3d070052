"""A server that ignores a schema sent natively answers plain text: the error says so and
names the mode that would work for that model, where to set it."""

from __future__ import annotations

from pathlib import Path

import pytest
from modelplug import Client, OutputValidationError
from modelplug_kit.testing import WireServer

# Plain text, not JSON: a server that took the request but not its schema.
RECORDING = Path(__file__).parent / "recordings" / "chat_text.sse"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def client_for(make_client, wire_server: WireServer, **model: object) -> Client:
    # llama.cpp constrains decoding to a schema, so its preset asks in native mode.
    config: dict[str, object] = {
        "providers": {
            "llamacpp": {"type": "openai-compatible", "base_url": wire_server.url + "/v1"}
        }
    }
    if model:
        config["models"] = {"llamacpp/any": model}
    return make_client("modelplug-openai-compat", config=config)


def failure(client: Client, retries: int = 0) -> OutputValidationError:
    with pytest.raises(OutputValidationError) as caught:
        client.complete("llamacpp/any", "Where?", output_schema=SCHEMA, output_retries=retries)
    return caught.value


def test_plain_text_in_native_mode_names_tool_mode_for_that_model(
    make_client, wire_server: WireServer, modelplug_config_dir: Path
) -> None:
    wire_server.add_file(RECORDING)
    error = failure(client_for(make_client, wire_server))
    message = str(error)
    assert "not a JSON value" in message
    assert 'llamacpp/any ignored the schema sent in structured_output = "native" mode' in message
    assert 'set structured_output = "tool" under [models."llamacpp/any"]' in message
    assert str(modelplug_config_dir / "config.toml") in message
    assert '"prompt"' in message  # the second choice
    assert error.hint is not None and error.hint in message
    # It was native: the schema went in the request (llama.cpp's own json_schema field).
    assert wire_server.requests[-1].json()["json_schema"] == SCHEMA


def test_a_model_that_cannot_call_tools_is_pointed_at_prompt_mode(
    make_client, wire_server: WireServer
) -> None:
    wire_server.add_file(RECORDING)
    error = failure(client_for(make_client, wire_server, supports_tools=False))
    assert 'set structured_output = "prompt" under [models."llamacpp/any"]' in str(error)
    assert '"tool"' not in str(error).split("ignored the schema", 1)[1]


def test_the_hint_comes_with_the_last_answer_after_the_re_asks(
    make_client, wire_server: WireServer
) -> None:
    wire_server.add_file(RECORDING)
    wire_server.add_file(RECORDING)
    notices = []
    with pytest.raises(OutputValidationError) as caught:
        client_for(make_client, wire_server).complete(
            "llamacpp/any",
            "Where?",
            output_schema=SCHEMA,
            output_retries=1,
            on_event=notices.append,
        )
    assert caught.value.attempts == 2 and len(wire_server.requests) == 2
    assert 'structured_output = "tool"' in str(caught.value)


def test_json_that_does_not_fit_gets_no_mode_hint(make_client, wire_server: WireServer) -> None:
    # The server did answer JSON: the schema was not ignored, so no other mode is named.
    chunk = (
        'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"{\\"town\\": 1}"},'
        '"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    wire_server.add(chunk, content_type="text/event-stream")
    error = failure(client_for(make_client, wire_server))
    assert "does not fit the schema" in str(error)
    assert error.hint is None and "structured_output" not in str(error)
