"""A 200 that is a web page (a captive portal, a proxy's login page) is reported as
that, naming base_url, and not retried as a broken stream; so is a probe's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import ModelError
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer, load_recording


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "text/event-stream"])
def test_an_html_page_is_named_and_not_retryable(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
    content_type: str,
) -> None:
    page = load_recording(recorded("html_login_page.html"))
    wire_server.add(page, content_type=content_type)
    with pytest.raises(ModelError) as caught:
        list(gemini_client().stream("gemini/gemini-2.5-flash", "hi"))
    error = caught.value
    assert str(error).startswith(
        f"gemini at {wire_server.url}: the server answered text/html, not an event stream; "
        "check base_url"
    )
    assert (error.error_class.kind, error.error_class.retryable) == ("other", False)
    assert error.partial is None
    assert "password" not in str(error)  # the page itself is not quoted
    assert len(wire_server.requests) == 1


def test_a_probe_answered_by_a_web_page_names_base_url(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    page = load_recording(recorded("html_login_page.html"))
    wire_server.add(page, content_type="text/html")
    with pytest.raises(ModelError) as caught:
        asyncio.run(gemini_client().aprobe("gemini/gemini-2.5-flash"))
    message = str(caught.value)
    assert "(GET /v1beta/models/gemini-2.5-flash)" in message
    assert "(status 200, text/html) was not JSON; base_url may point at the wrong" in message
    assert "password" not in message
