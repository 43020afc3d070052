"""``[limits] store``: without Redis the counters live in this machine's SQLite file in
the data directory; "memory" keeps them to the process, "redis" insists on Redis; only
the user's own file (or code) chooses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from modelplug import Client, ConfigError, ModelplugWarning
from modelplug.testing import FakeModel, text
from modelplug_kit import MemoryCounters
from modelplug_limits import LimitsPolicy, SqliteCounters
from modelplug_limits.store import SHARED


def store_of(client: Client, **options: Any) -> Any:
    return LimitsPolicy(options).setup(client)[1]


def test_the_default_store_is_this_machine_s_file_in_the_data_dir(make_client: Any) -> None:
    client = make_client()

    store = store_of(client)

    assert isinstance(store, SqliteCounters)
    assert store.path == client.settings.data_dir() / "limits.sqlite3"
    assert store is store_of(make_client())  # one per file in the process


def test_memory_keeps_the_counters_to_this_process(make_client: Any) -> None:
    assert store_of(make_client(), store="memory") is SHARED
    assert isinstance(SHARED, MemoryCounters)


def test_redis_without_a_redis_url_says_what_to_set(make_client: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        store_of(make_client(), store="redis")

    assert '[limits] store = "redis": no Redis is set' in str(caught.value)
    assert "[redis] url" in str(caught.value) and "MODELPLUG_REDIS_URL" in str(caught.value)


def test_a_store_of_another_name_is_refused_with_the_names(make_client: Any) -> None:
    with pytest.raises(ConfigError, match="expected one of auto, sqlite, memory, redis"):
        store_of(make_client(), store="postgres")


def test_a_project_file_cannot_choose_the_store(make_client: Any, tmp_path: Path) -> None:
    project = tmp_path / "cloned"
    project.mkdir()
    (project / "modelplug.toml").write_text('[limits]\nstore = "memory"\n')

    with pytest.warns(ModelplugWarning, match="a project file cannot choose where your budgets"):
        store = store_of(make_client("modelplug-limits", project_dir=project))

    assert isinstance(store, SqliteCounters)


def test_modelplug_stream_counts_in_the_file_by_default(make_client: Any) -> None:
    # The entry point's own policy, as a user gets it: nothing chosen in code.
    client = make_client(
        "modelplug-limits",
        FakeModel([text("one")]),
        config={"limits": {"fake/m": {"rpm": 5, "window": 3600}}},
    )

    client.complete("fake/m", "hi")

    store = SqliteCounters(client.settings.data_dir() / "limits.sqlite3")
    counted = [k for k in store.live_keys() if k.startswith("rate:fake/m:requests:")]
    assert len(counted) == 1 and store.read_now(counted)[0][0] == 1  # type: ignore[index]
