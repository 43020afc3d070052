"""The SQLite cooldown table (the default store without Redis): the same three methods as
any cooldown store, in an owner-only file this machine's processes share; chosen by
``[fallback] store`` in the user's own file; this process's memory, with one warning,
when the file cannot be used."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Any

import pytest
from modelplug import ConfigError, ModelplugWarning
from modelplug.testing import text
from modelplug_fallback import SHARED
from modelplug_fallback.policy import FallbackPolicy, choose_store
from modelplug_fallback.sqlite_cooldowns import SqliteCooldowns
from modelplug_kit import AsyncCooldownStore

CHAIN = {"fallbacks": {"a/m": ["b/m"]}, "fallback": {"retries": 0}}


@pytest.fixture
def cooldowns(tmp_path: Path, clock: Any) -> SqliteCooldowns:
    return SqliteCooldowns(tmp_path / "data" / "cooldowns.sqlite3", clock=clock)


def test_a_mark_cools_a_model_down_for_its_seconds(cooldowns: SqliteCooldowns, clock: Any) -> None:
    assert isinstance(cooldowns, AsyncCooldownStore)
    asyncio.run(cooldowns.mark("a/m", 60))
    clock.now += 20

    assert asyncio.run(cooldowns.remaining("a/m")) == 40
    assert asyncio.run(cooldowns.remaining("b/m")) == 0
    clock.now += 40
    assert asyncio.run(cooldowns.remaining("a/m")) == 0


def test_a_mark_never_shortens_a_longer_cooldown(cooldowns: SqliteCooldowns) -> None:
    asyncio.run(cooldowns.mark("a/m", 600))
    asyncio.run(cooldowns.mark("a/m", 60))

    assert cooldowns.remaining_now("a/m") == 600
    asyncio.run(cooldowns.mark("a/m", 900))
    assert cooldowns.remaining_now("a/m") == 900


def test_clear_frees_a_model_at_once(cooldowns: SqliteCooldowns) -> None:
    asyncio.run(cooldowns.mark("a/m", 60))

    asyncio.run(cooldowns.clear("a/m"))

    assert cooldowns.remaining_now("a/m") == 0
    assert cooldowns.cooling() == {}


def test_cooling_lists_what_cools_now_and_ended_ones_are_dropped(
    cooldowns: SqliteCooldowns, clock: Any
) -> None:
    cooldowns.mark_now("a/m", 10)
    cooldowns.mark_now("b/m", 100)
    clock.now += 50

    assert cooldowns.cooling() == {"b/m": 50}
    cooldowns.mark_now("c/m", 5)  # a write drops the ended rows
    rows = cooldowns.db.read(lambda db: db.execute("SELECT key FROM cooldowns").fetchall())
    assert sorted(r[0] for r in rows) == ["b/m", "c/m"]


def test_the_file_is_the_owner_s_alone(cooldowns: SqliteCooldowns) -> None:
    cooldowns.mark_now("a/m", 60)

    assert stat.S_IMODE(cooldowns.path.parent.stat().st_mode) == 0o700
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{cooldowns.path}{suffix}")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_reading_before_any_mark_makes_no_file(cooldowns: SqliteCooldowns) -> None:
    assert cooldowns.remaining_now("a/m") == 0
    assert not cooldowns.path.exists()


def test_a_file_that_cannot_be_used_keeps_cooldowns_in_memory_and_warns_once(
    tmp_path: Path, clock: Any
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the store's directory should be")
    store = SqliteCooldowns(blocked / "cooldowns.sqlite3", clock=clock)

    with pytest.warns(ModelplugWarning) as warned:
        asyncio.run(store.mark("a/m", 60))
        asyncio.run(store.mark("b/m", 60))

    assert len(warned) == 1
    message = str(warned[0].message)
    assert f"the cooldowns file {blocked / 'cooldowns.sqlite3'} cannot be used" in message
    assert "keeping cooldowns in this process's memory" in message
    assert asyncio.run(store.remaining("a/m")) == 60  # still skipped, in this process


# -- which store ---------------------------------------------------------------------


def test_the_default_store_is_this_machine_s_file_in_the_data_dir(make_client: Any) -> None:
    client = make_client()

    store = FallbackPolicy().store_for(client)

    assert isinstance(store, SqliteCooldowns)
    assert store.path == client.settings.data_dir() / "cooldowns.sqlite3"


def test_memory_keeps_cooldowns_to_this_process(make_client: Any) -> None:
    assert FallbackPolicy({"store": "memory"}).store_for(make_client()) is SHARED


def test_redis_without_a_redis_url_says_what_to_set(make_client: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        choose_store(make_client(), "redis")

    assert '[fallback] store = "redis": no Redis is set' in str(caught.value)
    assert "[redis] url" in str(caught.value)


def test_a_project_file_cannot_choose_the_store(make_client: Any, tmp_path: Path) -> None:
    project = tmp_path / "cloned"
    project.mkdir()
    (project / "modelplug.toml").write_text('[fallback]\nstore = "memory"\nretries = 1\n')
    client = make_client("modelplug-fallback", project_dir=project)

    policy = FallbackPolicy()
    with pytest.warns(ModelplugWarning, match="a project file cannot choose where your cooldowns"):
        options = policy.options_for(client)

    assert options.store == "auto" and options.retries == 1  # the rest of its table holds
    assert isinstance(policy.store_for(client), SqliteCooldowns)


def test_modelplug_stream_cools_down_in_the_file_by_default(make_client: Any, kit: Any) -> None:
    first, second = kit.two_models([kit.rate_limited()], [text("b")])
    client = make_client("modelplug-fallback", first, second, config=CHAIN)

    assert client.complete("a/m", "hi", on_event=lambda e: None).text == "b"

    on_disk = SqliteCooldowns(client.settings.data_dir() / "cooldowns.sqlite3")
    assert 0 < on_disk.remaining_now("a/m") <= 60  # cooldown_rate_limit
