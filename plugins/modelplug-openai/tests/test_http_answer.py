"""What comes back where a stream was expected: a web page is refused as that (not
retried as a broken stream), a JSON error answered with 200 is classified by its code,
a whole JSON response is read as the final one, a complete call leaves its connection
to the next, and a consumer that stops early closes it."""

from __future__ import annotations

import asyncio

import pytest
from modelplug import ModelError
from modelplug.contract.types import TextDelta
from modelplug_kit.testing import WireServer, load_recording

TEXT = "The final result is **570**."  # the answer text.sse carries


def fail(client):
    with pytest.raises(ModelError) as caught:
        list(client.stream("wire/gpt-5", "hi"))
    return caught.value


# As a page says it is, and as a proxy serves one under the stream's content type.
@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "text/event-stream"])
def test_an_html_page_answered_with_200_is_refused_naming_base_url(
    responses, wire_server, recorded, content_type
):
    page = load_recording(recorded / "html_login_page.html")
    wire_server.add(page, content_type=content_type)
    error = fail(responses())
    assert (error.error_class.kind, error.error_class.retryable) == ("other", False)
    assert error.error_class.status == 200
    assert f"wire at {wire_server.url}/v1: the server answered text/html" in str(error)
    assert "check base_url" in str(error)
    assert "password" not in str(error)  # the page itself is not quoted
    assert len(wire_server.requests) == 1


def test_a_json_error_answered_with_200_is_classified_by_its_code(responses, wire_server):
    wire_server.add_json(
        {
            "error": {
                "message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        }
    )
    error = fail(responses())
    assert error.error_class.kind == "context_overflow"
    assert error.error_class.fallback is False
    assert "wire answered with an error: Your input exceeds" in str(error)
    assert "(context_length_exceeded)" in str(error)


def test_a_whole_json_response_is_read_as_the_final_one(responses, wire_server, wire):
    # A server that ignored stream=true: the response object the final event carries.
    final = next(
        e["response"] for e in wire.recorded_events("text.sse") if e["type"] == "response.completed"
    )
    wire_server.add_json(final)
    _, response = wire.run(responses())
    assert response.text == TEXT
    assert response.metadata["response_id"] == final["id"]
    assert (response.usage.input, response.usage.output) == (299, 12)


def test_a_complete_call_leaves_its_connection_to_the_next(responses, wire_server, wire, recorded):
    client = responses()
    before = wire_server.connections
    for _ in range(3):
        wire_server.add_file(recorded / "text.sse")
        assert wire.run(client)[1].text == TEXT
    assert len(wire_server.requests) == 3
    assert wire_server.connections - before == 1


def test_a_consumer_that_stops_early_closes_the_connection(make_client, wire):
    # A server of its own: the close it sees can only be this call's.
    with WireServer() as server:
        sent = server.add_sse(wire.recorded_events("text.sse"), event_names=True)
        sent.chunks[6] = (30.0, sent.chunks[6])  # after the first text delta, a long wait
        client = make_client(
            "modelplug-openai",
            entry_points=True,
            config=wire.config_for(server),
            environ={"WIRE_KEY": wire.KEY},
        )

        async def stop_after_the_first_delta():
            stream = client.astream("wire/gpt-5", "hi")
            async for event in stream:
                if isinstance(event, TextDelta):
                    break
            await stream.aclose()  # the consumer is done: no read is waiting
            # Seen while this loop (and its pool) still runs: closed by the plugin, not
            # by the loop's end.
            return await asyncio.to_thread(server.wait_closed_by_client, 1)

        assert asyncio.run(stop_after_the_first_delta())
        assert server.connections == 1 and server.pending == 0
