"""``modelplug cooldowns`` with ``[redis] url``: the cooldowns another process set in
Redis, listed and cleared by the command run in a process of its own, as an operator of
several machines runs it. Only this deployment's keys (its prefix, even one holding a
glob's special characters) are listed or cleared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import redis as sync_redis

MARK = r"""
import asyncio, json, sys
from modelplug import Client
from modelplug_redis import cooldown_store

spec = json.loads(sys.argv[1])
client = Client(config=spec["config"], enable=["modelplug-redis", "modelplug-fallback"])
store = cooldown_store(client)

async def main():
    for key, seconds in spec["marks"].items():
        await store.mark(key, seconds)
    await client.aclose()

asyncio.run(main())
"""


class Operator:
    def __init__(self, home: Path, redis_url: str, prefix: str) -> None:
        user = home / "config.toml"
        user.write_text(f'[redis]\nurl = "{redis_url}"\nprefix = "{prefix}"\ntimeout = 5.0\n')
        os.chmod(user, 0o600)
        self.config = {"redis": {"url": redis_url, "prefix": prefix, "timeout": 5.0}}
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
        self.env["MODELPLUG_CONFIG"] = str(user)
        self.env["MODELPLUG_DATA_DIR"] = str(home / "data")
        self.home = home

    def mark(self, **marks: float) -> None:
        spec = {"config": self.config, "marks": {k.replace("__", "/"): v for k, v in marks.items()}}
        self.run("-c", MARK, json.dumps(spec))

    def cooldowns(self, *args: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.run("-m", "modelplug", "cooldowns", *args))
        return data

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.home,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def test_modelplug_cooldowns_lists_and_clears_what_another_process_set_in_redis(
    tmp_path: Path, redis_server: Any
) -> None:
    operator = Operator(tmp_path, redis_server.url, "team[1]*:")
    raw = sync_redis.Redis.from_url(redis_server.url)
    # Another deployment's cooldown on the same Redis: not this operator's to see.
    raw.set("other:{modelplug}:cooldown:x/m", b"1", px=3_600_000)
    operator.mark(a__m=600, b__m=30)

    listed = operator.cooldowns("--json")
    one = operator.cooldowns("clear", "a/m", "--json")
    after_one = operator.cooldowns("--json")
    everything = operator.cooldowns("clear", "--json")
    after_all = operator.cooldowns("--json")

    assert listed["store"] == "RedisCooldowns"
    assert redis_server.url.rsplit("/", 1)[0] in listed["where"]
    remaining = {row["route"]: row["remaining"] for row in listed["cooldowns"]}
    assert sorted(remaining) == ["a/m", "b/m"]
    assert 500 < remaining["a/m"] <= 600 and 0 < remaining["b/m"] <= 30
    assert one["cleared"] == ["a/m"]
    assert [row["route"] for row in after_one["cooldowns"]] == ["b/m"]
    assert everything["cleared"] == ["b/m"]
    assert after_all["cooldowns"] == []
    assert raw.pttl("other:{modelplug}:cooldown:x/m") > 0  # the other deployment's stays
    raw.close()
