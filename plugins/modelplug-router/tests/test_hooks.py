"""Each hook the plugin implements, by name: a route that is no group passes through the
stream hook untouched and has no section in ``modelplug resolve``; a group's section
lists its deployments; closing a client closes the SQLite state file it opened."""

from __future__ import annotations

import asyncio
from typing import Any

import modelplug_router
from modelplug_router import stores


def test_modelplug_stream_leaves_other_routes_alone(client_with: Any, kit: Any) -> None:
    a, b = kit.labs("a", "b")
    client = client_with(a, b, groups={"g": {"deployments": ["b/m"]}})
    seen: list[Any] = []
    response = client.complete("a/m", "hi", on_event=seen.append)
    assert response.model == "a/m" and (a.calls, b.calls) == (1, 0)
    assert not [e for e in seen if e.type == "notice"]
    client.complete("g", "hi", on_event=seen.append)
    assert [e.details["to"] for e in seen if e.type == "notice"] == ["b/m"]


def test_modelplug_describe_route_speaks_for_groups_only(
    client_with: Any, kit: Any, router: Any
) -> None:
    client = client_with(*kit.labs("a", "b"), groups={"g": {"deployments": ["a/m", "b/m"]}})
    assert router.modelplug_describe_route(client.resolve("a/m"), client) is None
    client.complete("g", "hi")
    section = asyncio.run(router.modelplug_describe_route(client.resolve("g"), client))
    assert section["section"] == "router" and section["store"] == "MemoryCounters"
    assert [d["spec"] for d in section["deployments"]] == ["a/m", "b/m"]
    assert sum(d["rpm_used"] for d in section["deployments"]) == 1
    assert section["lines"][0].startswith("group g: strategy weighted, store MemoryCounters(")


def test_modelplug_close_closes_the_state_file(make_client: Any, kit: Any) -> None:
    client = make_client(
        *kit.labs("a"),
        "modelplug-router",
        config={"groups": {"g": {"deployments": ["a/m"]}}},
    )
    client.complete("g", "hi")
    state = stores.choose_store(client, "sqlite")  # the one the call opened
    assert state.path == client.settings.data_dir() / stores.FILE_NAME
    assert state.db._writer is not None  # the call opened the file
    modelplug_router.modelplug_close(client)
    assert state.db._writer is None and state.db._reader is None
