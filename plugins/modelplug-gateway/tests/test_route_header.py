"""``x-modelplug-route`` names the provider/model on every answer, streamed ones too, in
every shape: the route that answered (plain), or the one answering when the stream
began, after a fallback that came before it."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
from modelplug import Client, ErrorClass, ModelError
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.settings import GatewaySettings

HELLO = [{"role": "user", "content": "hello"}]


def test_streamed_and_plain_answers_name_the_route_in_both_shapes(
    make_gateway: Any, serve: Any
) -> None:
    fake = FakeModel([reply("one"), reply("two"), reply("three"), reply("four")])
    with serve(make_gateway(fake)) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = gpt.chat.completions.with_raw_response.create(model="fake/m", messages=HELLO)
        streamed = gpt.chat.completions.with_raw_response.create(
            model="fake/m", messages=HELLO, stream=True
        )
        chunks = list(streamed.parse())
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        message = claude.messages.with_raw_response.create(
            model="fake/m", max_tokens=16, messages=HELLO
        )
        with claude.messages.stream(model="fake/m", max_tokens=16, messages=HELLO) as stream:
            final = stream.get_final_message()
            stream_headers = stream.response.headers
    assert plain.headers["x-modelplug-route"] == "fake/m"
    assert streamed.headers["x-modelplug-route"] == "fake/m"
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "two"
    assert message.headers["x-modelplug-route"] == "fake/m"
    assert stream_headers["x-modelplug-route"] == "fake/m"
    assert final.content[0].text == "four"  # type: ignore[union-attr]


def test_an_alias_is_named_by_the_route_it_resolves_to(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway()) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = gpt.chat.completions.with_raw_response.create(model="echo", messages=HELLO)
        streamed = gpt.chat.completions.with_raw_response.create(
            model="echo", messages=HELLO, stream=True
        )
        list(streamed.parse())
    assert plain.headers["x-modelplug-route"] == "echo/echo"
    assert streamed.headers["x-modelplug-route"] == "echo/echo"


def test_a_stream_that_fell_back_before_it_began_names_the_fallback(
    make_client: Any, serve: Any
) -> None:
    refused = ModelError(
        "authentication failed", error_class=ErrorClass(kind="auth", fallback=True, status=401)
    )
    main = FakeModel([refused], provider="main")
    spare = FakeModel([reply("from the spare")], provider="spare")
    client: Client = make_client(
        "modelplug-fallback",
        main,
        spare,
        config={
            "fallbacks": {"main/m": ["spare/m"]},
            "fallback": {"retries": 0, "store": "memory"},
        },
    )
    with serve(Gateway(client, GatewaySettings(), OpenGate())) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        streamed = gpt.chat.completions.with_raw_response.create(
            model="main/m", messages=HELLO, stream=True
        )
        chunks = list(streamed.parse())
    assert streamed.headers["x-modelplug-route"] == "spare/m"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "from the spare"
    )
    assert len(main.requests) == 1 and len(spare.requests) == 1
