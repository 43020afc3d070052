"""A 200 that is a web page is reported as that, and not retried as a broken stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from modelplug import ModelError
from modelplug_kit.testing import load_recording

RECORDINGS = Path(__file__).parent / "recordings"


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "text/event-stream"])
def test_an_html_page_is_named_and_not_retryable(compat, wire_server, content_type):
    wire_server.add(load_recording(RECORDINGS / "html_login_page.html"), content_type=content_type)
    with pytest.raises(ModelError) as caught:
        list(compat().stream("wire/m", "hi"))
    error = caught.value
    assert "the server answered text/html, not an event stream; check base_url" in str(error)
    assert not error.error_class.retryable
    assert error.error_class.kind == "other"
    assert "password" not in str(error)  # the page itself is not quoted
