"""The kit's timeouts under [ollama]: first_byte_timeout bounds the wait for the answer
to begin (a model loading, a long prompt evaluated), read_timeout the silence once it
has begun."""

from __future__ import annotations

import pytest
from modelplug import ConfigError, ModelError

FINAL = b'{"message":{"role":"assistant","content":"loaded"},"done":true}\n'


def test_a_server_that_never_answers_names_first_byte_timeout(ollama, wire):
    # The answer would come 30 s later: what ends the call is the timeout the error names.
    wire.server.add(FINAL, stall=30.0, path="/api/chat")
    with pytest.raises(ModelError) as caught:
        ollama({"ollama": {"first_byte_timeout": 0.3}}).complete("ollama/m", "hi")
    error = caught.value
    assert error.error_class.kind == "transient" and error.error_class.retryable
    assert error.partial is None
    assert f"ollama at {wire.server.url} sent no answer within 0.3 s" in str(error)
    assert "(first_byte_timeout in [ollama])" in str(error)
    # The request went out once: the wait was for its answer, and it was not resent.
    assert len(wire.requests) == 1
    wire.server.stopping.set()  # release the server thread waiting out its stall


def test_a_model_loading_for_longer_than_read_timeout_is_waited_for(ollama, wire):
    # Headers come after 0.6 s, past read_timeout but within first_byte_timeout.
    wire.server.add(FINAL, stall=0.6, path="/api/chat")
    config = {"ollama": {"read_timeout": 0.2, "first_byte_timeout": 30}}
    assert ollama(config).complete("ollama/m", "hi").text == "loaded"


def test_a_wrong_first_byte_timeout_is_a_config_error_naming_it(ollama, wire):
    with pytest.raises(ConfigError, match=r"\[ollama\] first_byte_timeout"):
        ollama({"ollama": {"first_byte_timeout": 0}}).complete("ollama/m", "hi")
    assert wire.requests == []
