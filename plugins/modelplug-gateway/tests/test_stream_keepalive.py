"""A stream that goes quiet (long thinking) gets an SSE comment at the keep-alive
interval, so proxies do not close it as idle; the SDK skips it and reads the answer."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply

HELLO = [{"role": "user", "content": "hello"}]


def test_a_quiet_stream_gets_keepalive_comments_the_sdk_skips(
    make_gateway: Any, serve: Any
) -> None:
    # 0.4 s between blocks, a keep-alive every 0.1 s of silence.
    fake = FakeModel([reply("one", "two"), reply("three", "four")], delay=0.4)
    with serve(make_gateway(fake, keepalive_interval=0.1)) as url:
        with httpx2.stream(
            "POST",
            url + "/v1/chat/completions",
            json={"model": "fake/m", "messages": HELLO, "stream": True},
        ) as answer:
            raw = b"".join(answer.iter_raw())
            headers = answer.headers
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        chunks = list(sdk.chat.completions.create(model="fake/m", messages=HELLO, stream=True))
    assert b": keep-alive\n\n" in raw
    assert raw.index(b": keep-alive") < raw.index(b'"content":"two"')
    assert headers["x-accel-buffering"] == "no" and "content-encoding" not in headers
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "threefour"
