"""A 200 that is a web page (a captive portal, a proxy's login page) where the NDJSON
stream should be is reported as that, naming base_url, and not retried."""

from __future__ import annotations

import pytest
from modelplug import ModelError


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "application/x-ndjson"])
def test_an_html_page_is_named_and_not_retryable(ollama, wire, content_type):
    wire.server.add(wire.recorded("login_page.html"), path="/api/chat", content_type=content_type)
    with pytest.raises(ModelError) as caught:
        ollama().complete("ollama/m", "hi")
    error = caught.value
    assert f"ollama at {wire.server.url}: the server answered text/html" in str(error)
    assert "check base_url" in str(error)
    assert (error.error_class.kind, error.error_class.retryable) == ("other", False)
    assert error.partial is None
    assert "password" not in str(error)  # the page itself is not quoted
    assert len(wire.requests) == 1
