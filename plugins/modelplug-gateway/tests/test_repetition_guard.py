"""A loop cut by core's repetition guard, served through the gateway: the Chat
Completions shape ends it with finish_reason ``content_filter`` (what a proxy that cuts
a loop sends) and the Messages shape with ``refusal``; the answer keeps one copy."""

from __future__ import annotations

from typing import Any

import anthropic
import openai

LINE = "the same line of text, said again and again and again.\n"
LOOP = [{"role": "user", "content": LINE * 30}]


def test_the_chat_completions_shape_says_content_filter(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway()) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        whole = client.chat.completions.create(model="echo", messages=LOOP)
        chunks = list(client.chat.completions.create(model="echo", messages=LOOP, stream=True))
    assert whole.choices[0].finish_reason == "content_filter"
    assert whole.choices[0].message.content == LINE
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "content_filter"


def test_the_messages_shape_says_refusal(make_gateway: Any, serve: Any) -> None:
    with serve(make_gateway()) as url:
        client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
        message = client.messages.create(model="echo", max_tokens=1000, messages=LOOP)
    assert message.stop_reason == "refusal"
    assert message.content[0].text == LINE
