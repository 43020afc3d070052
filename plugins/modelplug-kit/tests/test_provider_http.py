"""The kit's HTTP path itself (modelplug_kit.http), where the conformance suite
does not reach: errors reported inside a stream, a reader that stops at its end marker
and finishes the answer, and a JSON document where only a stream is right."""

from __future__ import annotations

import asyncio

import pytest
from modelplug import Endpoint, ModelError, Route, register_secret
from modelplug_kit import ProviderHTTP, StatusError, WireErrors

ERRORS = WireErrors("kit-test")
HTTP = ProviderHTTP("kit-test", section="kit-test", errors=ERRORS)


def route(base_url: str = "http://127.0.0.1:9") -> Route:
    return Route(provider="box", model="m", endpoint=Endpoint(type="kit", base_url=base_url))


def test_an_error_event_with_a_known_type_is_classified_like_a_status():
    error = ERRORS.in_stream(route(), {"error": {"type": "overloaded_error", "message": "busy"}})
    assert error.kind == "overloaded"
    assert "box reported an error mid-stream: busy" in str(error)


def test_an_error_event_that_says_nothing_conclusive_is_transient_with_the_partial():
    from modelplug.contract.types import Message, Response, TextBlock

    partial = Response(message=Message(role="assistant", content=[TextBlock(text="so far")]))
    error = ERRORS.in_stream(route(), {"message": "the model crashed"}, partial=partial)
    assert (error.kind, error.retryable) == ("transient", True)
    assert error.partial is partial
    assert "the model crashed" in str(error)


def test_an_error_event_is_redacted_before_it_is_kept(planted_key):
    register_secret(planted_key)  # as reading it with settings.api_key does
    error = ERRORS.in_stream(route(), {"error": {"message": f"bad key {planted_key}"}})
    assert planted_key not in str(error)


def test_a_status_error_keeps_the_status_and_redacted_headers_and_body(planted_key):
    register_secret(planted_key)

    class Errors(WireErrors):
        status_error = StatusError

    error = Errors("kit-test").status(
        429,
        {"Retry-After": "3", "X-Request-Id": "req-1", "X-Echo": planted_key},
        b'{"error": {"message": "slow down", "type": "rate_limit_error"}}',
        route(),
    )
    assert isinstance(error, StatusError)
    assert (error.status_code, error.request_id, error.kind) == (429, "req-1", "rate_limit")
    assert error.error_class.retry_after == 3
    assert planted_key not in str(error.headers)
    assert error.body == {"error": {"message": "slow down", "type": "rate_limit_error"}}


def events(count: int) -> list[bytes]:
    return [b'data: {"n": %d}\n\n' % i for i in range(count)]


def test_finish_reads_the_rest_so_a_caller_stopping_at_the_end_keeps_the_connection(
    make_client, wire_server
):
    """A reader that stops at its end marker and yields inside the block: the caller
    stops there (the generator is closed inside the block), yet the connection is the
    one the next call uses, because finish() read what was left."""
    client = make_client()

    async def reader():
        url = wire_server.url + "/s"
        async with HTTP.stream(client, route(wire_server.url), url, body=b"{}", headers={}) as a:
            async for chunk in a:
                if b'"n": 1' in chunk:  # the end marker; trailing events follow
                    await a.finish()
                    yield "done"

    async def twice():
        for _ in range(2):
            wire_server.add(events(4))
            stream = reader()
            assert await stream.__anext__() == "done"
            await stream.aclose()  # the caller stops at the end, inside the block
        await client.aclose()

    asyncio.run(twice())
    assert [r.connection for r in wire_server.requests] == [1, 1]


def test_without_finish_a_caller_stopping_inside_the_block_closes_the_connection(
    make_client, wire_server
):
    client = make_client()

    async def reader():
        url = wire_server.url + "/s"
        async with HTTP.stream(client, route(wire_server.url), url, body=b"{}", headers={}) as a:
            async for chunk in a:
                if b'"n": 1' in chunk:
                    yield "done"

    async def twice():
        for _ in range(2):
            wire_server.add(events(4))
            stream = reader()
            assert await stream.__anext__() == "done"
            await stream.aclose()
        await client.aclose()

    asyncio.run(twice())
    assert [r.connection for r in wire_server.requests] == [1, 2]


def test_a_json_document_where_only_a_stream_is_right_is_the_servers_refusal(
    make_client, wire_server
):
    client = make_client()
    wire_server.add_json({"id": "x", "message": "model acme-huge does not exist"})

    async def call():
        url = wire_server.url + "/s"
        box = route(wire_server.url)
        async with HTTP.stream(client, box, url, body=b"{}", headers={}, whole=False):
            pass  # pragma: no cover - the answer is refused on entry

    with pytest.raises(ModelError) as caught:
        asyncio.run(call())
    assert "box answered 200: model acme-huge does not exist" in str(caught.value)
    assert not caught.value.retryable
