"""Deadline routes that call each other without end are refused before anything is
sent, the loop named: through two tables, through an alias, and a long way round; a
chain that ends on a provider route runs."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import ConfigError

TABLES = {
    "a": {"slow": "b", "fast": "echo/x"},
    "b": {"slow": "echo/y", "fast": "a"},
}


def client_with(make_client: Any, deadlines: dict[str, Any], **config: Any) -> Any:
    return make_client("modelplug-deadline", "echo", config={"deadlines": deadlines, **config})


def test_modelplug_stream_refuses_two_deadlines_that_call_each_other(make_client: Any) -> None:
    client = client_with(make_client, TABLES)
    with pytest.raises(ConfigError) as caught:
        client.complete("a", "hi")
    message = str(caught.value)
    assert "[deadlines.a] -> [deadlines.b] -> [deadlines.a]" in message
    assert "make one of them a provider route" in message


def test_modelplug_stream_sees_a_loop_through_an_alias(make_client: Any) -> None:
    tables = {"a": {"slow": "echo/x", "fast": "later"}, "b": {"slow": "a", "fast": "echo/y"}}
    client = client_with(make_client, tables, aliases={"later": "deadline/b"})
    with pytest.raises(
        ConfigError, match=r"\[deadlines\.b\] -> \[deadlines\.a\] -> \[deadlines\.b\]"
    ):
        client.complete("b", "hi")


def test_modelplug_stream_runs_a_chain_of_deadlines_that_ends(make_client: Any) -> None:
    tables = {"a": {"slow": "b", "fast": "echo/x"}, "b": {"slow": "echo/y", "fast": "echo/z"}}
    client = client_with(make_client, tables)
    assert client.complete("a", "hi").model == "echo/y"
