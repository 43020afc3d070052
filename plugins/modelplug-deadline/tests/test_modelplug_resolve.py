"""modelplug_resolve: a ``[deadlines.NAME]`` name is a model spec (bare, prefixed, behind
an alias or a role); a wrong table is a ConfigError naming the key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import modelplug_deadline
import pytest
from modelplug import Client, ConfigError, UnknownProviderError

MakeClient = Callable[..., Client]

TABLE = '[deadlines.nightly]\nslow = "echo/slow"\nfast = "echo/fast"\nstep_limit = "20m"\n'


def client_with(make_client: MakeClient, config_dir: Path, toml: str) -> Client:
    (config_dir / "config.toml").write_text(toml)
    return make_client(modelplug_deadline)


@pytest.mark.parametrize("spec", ["nightly", "deadline/nightly"])
def test_modelplug_resolve_names_a_deadline_route(
    make_client: MakeClient, modelplug_config_dir: Path, spec: str
) -> None:
    route = client_with(make_client, modelplug_config_dir, TABLE).resolve(spec)
    assert (route.provider, route.model, route.endpoint.type) == ("deadline", "nightly", "deadline")
    assert route.name == "deadline/nightly"


def test_modelplug_resolve_through_an_alias_and_a_role(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    toml = TABLE + '[aliases]\ncheap = "nightly"\n[roles]\nworker = "nightly"\n'
    client = client_with(make_client, modelplug_config_dir, toml)
    assert client.resolve("cheap").name == "deadline/nightly"
    assert client.resolve("worker").name == "deadline/nightly"


def test_modelplug_resolve_leaves_other_specs_alone(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    client = client_with(make_client, modelplug_config_dir, TABLE)
    assert client.resolve("echo/x").provider == "echo"
    with pytest.raises(UnknownProviderError):
        client.resolve("deadline/daily")  # no such table


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ('fast = "echo/f"\n', "slow must be a model spec"),
        ('slow = "echo/s"\nfast = "echo/f"\nstep_limit = "20 minutes"\n', "step_limit must be"),
        ('slow = "echo/s"\nfast = "echo/f"\nswitch_after = "0s"\n', "switch_after must be longer"),
        (
            'slow = "echo/s"\nfast = "echo/f"\nswitch_after = "1h"\nswitch_at = "2026-12-08T06:00Z"\n',
            "set one of them",
        ),
        ('slow = "echo/s"\nfast = "echo/f"\nswitch_at = "2026-12-08T06:00"\n', "has no zone"),
        ('slow = "echo/s"\nfast = "echo/f"\nstep_limt = "1m"\n', "unknown key(s) step_limt"),
        ('slow = "nightly"\nfast = "echo/f"\n', "other routes than 'nightly'"),
        ('slow = "echo/s"\nfast = "echo/f"\nstore = "disk"\n', "store must be one of client"),
    ],
)
def test_modelplug_resolve_a_wrong_table_is_a_config_error(
    make_client: MakeClient, modelplug_config_dir: Path, keys: str, said: str
) -> None:
    client = client_with(make_client, modelplug_config_dir, f"[deadlines.nightly]\n{keys}")
    with pytest.raises(ConfigError) as caught:
        client.resolve("nightly")
    assert "[deadlines.nightly]" in str(caught.value)
    assert said in str(caught.value)


def test_modelplug_resolve_takes_a_toml_date_time_for_switch_at(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    toml = (
        '[deadlines.nightly]\nslow = "echo/s"\nfast = "echo/f"\nswitch_at = 2026-12-08T06:00:00Z\n'
    )
    client = client_with(make_client, modelplug_config_dir, toml)
    assert client.resolve("nightly").model == "nightly"
