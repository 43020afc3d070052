"""Where a policy's counters live (``modelplug_kit.choose_counter_store``): each choice
gives the store it names, one SQLite file a process per policy file, a stores plugin's
store before the file, and errors that name the setting and the fix."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from modelplug import ConfigError
from modelplug_kit import (
    STORE_CHOICES,
    Charge,
    MemoryCounters,
    SqliteCounters,
    choose_counter_store,
    close_counter_file,
    offered_store,
)


def choose(client: Any, choice: str, **kw: Any) -> Any:
    return choose_counter_store(client, choice, file_name="test.sqlite3", setting="[x] store", **kw)


def test_the_choices_are_the_four_documented() -> None:
    assert STORE_CHOICES == ("auto", "sqlite", "memory", "redis")


def test_sqlite_and_auto_without_redis_are_one_file_in_the_data_dir(make_client: Any) -> None:
    client = make_client()
    store = choose(client, "sqlite")
    assert isinstance(store, SqliteCounters)
    assert store.path == client.settings.data_dir() / "test.sqlite3"
    assert choose(client, "auto") is store  # no stores plugin: the same file
    assert choose(make_client(), "sqlite") is store  # one a process, whichever client
    other = choose_counter_store(client, "sqlite", file_name="other.sqlite3", setting="[y]")
    assert other is not store and other.path.name == "other.sqlite3"


def test_memory_is_one_store_a_file_name_or_the_policys_own(make_client: Any) -> None:
    client = make_client()
    store = choose(client, "memory")
    assert isinstance(store, MemoryCounters)
    assert choose(make_client(), "memory") is store
    own = MemoryCounters()
    assert choose(client, "memory", memory=own) is own


def test_redis_without_a_stores_plugin_names_the_setting_and_the_fix(make_client: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        choose(make_client(), "redis")
    message = str(caught.value)
    assert message.startswith('[x] store = "redis": no Redis is set')
    assert "[redis] url" in message and "MODELPLUG_REDIS_URL" in message


def test_an_unknown_choice_is_refused_with_the_known_ones(make_client: Any) -> None:
    with pytest.raises(ConfigError, match=r"\[x\] store must be one of auto, sqlite, memory"):
        choose(make_client(), "postgres")


class Stores:
    """A stores plugin (as modelplug-redis is): it offers its store for every client."""

    modelplug_policy = "stores"

    def __init__(self) -> None:
        self.store = MemoryCounters()

    def counter_store(self, client: Any) -> MemoryCounters:
        return self.store


def test_a_stores_plugins_store_comes_before_the_file(make_client: Any) -> None:
    plugin = Stores()
    client = make_client(plugin)
    assert offered_store(client) is plugin.store
    assert choose(client, "auto") is plugin.store
    assert choose(client, "redis") is plugin.store
    assert isinstance(choose(client, "sqlite"), SqliteCounters)  # the file, even so
    assert offered_store(make_client()) is None


def test_closing_the_file_closes_its_connection_and_counting_opens_it_again(
    make_client: Any,
) -> None:
    client = make_client()
    store = choose(client, "sqlite")
    charge = Charge(key="k", amount=1, limit=10, ttl=60.0)
    assert asyncio.run(store.reserve([charge])).refused is None
    close_counter_file(client, "test.sqlite3")
    close_counter_file(client, "never-opened.sqlite3")  # nothing to close: no error
    outcome = asyncio.run(store.reserve([charge]))  # opens the file again
    assert outcome.refused is None and outcome.degraded is None
    (held,) = asyncio.run(store.read(["k"]))
    assert held is not None and held[0] == 2  # the file kept the first charge
