"""modelplug_classify_error answers for this plugin's errors, and only for them."""

from __future__ import annotations

import pytest
from modelplug import ModelError
from modelplug.testing import refused_url


def test_modelplug_classify_error_answers_for_its_own_errors(ollama, wire):
    client = ollama(base_url=refused_url())
    with pytest.raises(ModelError) as caught:
        client.complete("ollama/m", "hi")
    route = client.resolve("ollama/m")
    answer = client.hook.modelplug_classify_error(error=caught.value, route=route)
    assert answer is not None
    assert answer.kind == "unreachable"


def test_modelplug_classify_error_leaves_other_errors_to_others(ollama):
    from modelplug_ollama import modelplug_classify_error

    client = ollama()
    route = client.resolve("ollama/m")
    assert modelplug_classify_error(error=ValueError("x"), route=route) is None
    assert modelplug_classify_error(error=ValueError("x"), route=None) is None
