"""A plugin's options table read into a typed record: the same errors everywhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from modelplug import ConfigError, ModelplugWarning, read_options

pytestmark = pytest.mark.filterwarnings("ignore:unknown settings section")


@dataclass(frozen=True)
class LabOptions:
    read_timeout: float = field(default=30.0, metadata={"gt": 0})
    retries: int = 2
    mode: str = "fast"


def test_defaults_fill_what_the_table_leaves_out(make_client: Any) -> None:
    client = make_client(config={"lab": {"retries": 5}})

    assert read_options(client.settings, "lab", LabOptions) == LabOptions(retries=5)


def test_an_unknown_option_is_a_warning_naming_the_known_ones(make_client: Any) -> None:
    client = make_client(config={"lab": {"read_timout": 1}})

    with pytest.warns(
        ModelplugWarning,
        match=r"\[lab\] has unknown option\(s\) read_timout; known: read_timeout, retries, mode",
    ):
        assert read_options(client.settings, "lab", LabOptions) == LabOptions()


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("Bearer sk-secret-value", "expected a number, got a string"),
        (-1, "must be greater than 0"),
        (True, "expected a number, got true"),
    ],
)
def test_a_wrong_value_names_the_key_and_never_quotes_a_string(
    make_client: Any, value: Any, problem: str
) -> None:
    client = make_client(config={"lab": {"read_timeout": value}})

    with pytest.raises(ConfigError) as caught:
        read_options(client.settings, "lab", LabOptions)

    assert str(caught.value).startswith("[lab] read_timeout: ")
    assert problem in str(caught.value)
    assert "sk-secret" not in str(caught.value)
