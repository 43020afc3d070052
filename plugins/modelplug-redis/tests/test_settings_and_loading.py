"""The Redis URL comes from the user's file or the environment only, never a project
file; with none the stores are None (the policies keep their memory); and nothing heavy
(redis, the policies) is imported when the plugin is found."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from modelplug import Client
from modelplug_redis import cooldown_store, counter_store


def test_without_a_url_the_stores_are_none(tmp_path: Path) -> None:
    client = Client(user_config=tmp_path / "none.toml", enable=["modelplug-redis"])

    assert cooldown_store(client) is None and counter_store(client) is None


def test_the_environment_may_name_redis(tmp_path: Path) -> None:
    client = Client(
        user_config=tmp_path / "none.toml",
        enable=["modelplug-redis"],
        environ={"MODELPLUG_REDIS_URL": "redis://:s3cret-pw@127.0.0.1:1/0"},
    )

    store = counter_store(client)
    assert store is not None
    assert repr(store) == "RedisCounters(redis://127.0.0.1:1/0)"  # no password shown


def test_a_project_file_cannot_name_redis(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.modelplug.redis]\nurl = "redis://attacker.example:6379/0"\n'
    )
    with pytest.warns(Warning, match="ignored 'redis.url'"):  # core's rule for URLs
        client = Client(
            user_config=tmp_path / "none.toml", project_dir=project, enable=["modelplug-redis"]
        )

    assert counter_store(client) is None and cooldown_store(client) is None


def test_finding_the_plugin_imports_neither_redis_nor_the_stores() -> None:
    code = (
        "import sys, modelplug_redis, modelplug_limits, modelplug_fallback;"
        "print(sorted(m for m in ('redis', 'modelplug_limits.policy', "
        "'modelplug_redis.counters', 'modelplug_fallback.policy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    assert done.stdout.strip() == "[]", done.stderr
