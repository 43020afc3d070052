"""Shared helpers: a Client whose provider ``wire`` (type ``openai-responses``) points at
the loopback WireServer."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client
from modelplug.contract.types import Done, Event, Response
from modelplug.testing import calm_hypothesis
from modelplug_kit.testing import WireServer

PLUGIN = "modelplug-openai"
RECORDED = Path(__file__).parent / "recorded"
KEY = "sk-wire-test-key-0123456789"


def run(
    client: Client, spec: str = "wire/gpt-5", request: Any = "hi", **fields: Any
) -> tuple[list[Event], Response]:
    """All events of one call, checking there is exactly one Done and it is last."""
    events = list(client.stream(spec, request, **fields))
    done = [e for e in events if isinstance(e, Done)]
    assert len(done) == 1 and events[-1] is done[0]
    return events, done[0].response


def recorded_events(name: str) -> list[dict[str, Any]]:
    """The events of a recording, parsed."""
    return [
        json.loads(line[6:])
        for line in (RECORDED / name).read_text().splitlines()
        if line.startswith("data: ")
    ]


def final_output(name: str) -> list[dict[str, Any]]:
    """The ``output`` of the recording's final event, as the API sent it."""
    for event in recorded_events(name):
        if event["type"] in ("response.completed", "response.incomplete"):
            output: list[dict[str, Any]] = event["response"]["output"]
            return output
    raise AssertionError("no final event")


def _read_out(value: Any) -> Any:
    """A validated value with pydantic's lazy iterables (the SDK types its lists as
    ``Iterable``) read out, so that it compares with plain JSON."""
    if isinstance(value, dict):
        return {k: _read_out(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or hasattr(value, "__next__"):
        return [_read_out(v) for v in value]
    return value


# The SDK types an assistant message item of output_text parts as
# ResponseOutputMessageParam, whose id and status it marks required; the API takes the
# item without them (the Codex CLI sends it so, and llama.cpp's server reads it so), and
# this plugin sends neither. The check fills them in and takes them out again.
_ITEM_ID = {"id": "msg_sdk_check", "status": "completed"}


def _bare_assistant(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("type") == "message"
        and item.get("role") == "assistant"
        and not _ITEM_ID.keys() & item.keys()
    )


def sdk_checked(value: Any, kind: str = "body") -> Any:
    """``value`` as the openai SDK's request types read it: a whole body
    (``ResponseCreateParamsStreaming``) or a list of input items
    (``ResponseInputParam``). Validation drops keys the types do not declare, so the
    result equals ``value`` only when every key is one the SDK knows."""
    items = value.get("input") if kind == "body" and isinstance(value, dict) else value
    bare = [_bare_assistant(i) for i in items] if isinstance(items, list) else []
    if any(bare):
        filled = [{**_ITEM_ID, **i} if b else i for i, b in zip(items, bare, strict=True)]
        value = {**value, "input": filled} if kind == "body" else filled
    # The adapter must outlive the lazy iterables it returns: they read through it.
    checked = _read_out(_adapter(kind).validate_python(value))
    if any(bare):
        out = checked["input"] if kind == "body" else checked
        for item, b in zip(out, bare, strict=True):
            if b:
                for key in _ITEM_ID:
                    item.pop(key, None)
    return checked


@functools.cache
def _adapter(kind: str) -> Any:
    import pydantic
    from openai.types.responses import ResponseInputParam
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    shape: Any = ResponseCreateParamsStreaming if kind == "body" else ResponseInputParam
    return pydantic.TypeAdapter(shape)


@pytest.fixture
def recorded() -> Path:
    """The directory of recorded streams."""
    return RECORDED


@pytest.fixture
def wire() -> Any:
    """The helpers above, for tests (conftest is not importable by name: every plugin's
    tests have one)."""
    import types

    return types.SimpleNamespace(
        run=run,
        recorded_events=recorded_events,
        final_output=final_output,
        sdk_checked=sdk_checked,
        config_for=wire_config,
        KEY=KEY,
        RECORDED=RECORDED,
    )


def wire_config(wire: WireServer, name: str = "wire", /, **provider: Any) -> dict[str, Any]:
    entry = {
        "type": "openai-responses",
        "base_url": wire.url + "/v1",
        "api_key_env": "WIRE_KEY",
        **provider,
    }
    return {"providers": {name: entry}}


@pytest.fixture
def responses(make_client: Callable[..., Client], wire_server: WireServer) -> Callable[..., Client]:
    """``responses(extra_config=None, *plugins, name="wire", **provider)``: a Client with
    only this plugin (and core's built-ins), its provider pointing at ``wire_server``."""

    def make(
        extra: dict[str, Any] | None = None,
        *plugins: object,
        name: str = "wire",
        environ: dict[str, str] | None = None,
        **provider: Any,
    ) -> Client:
        config = wire_config(wire_server, name, **provider)
        for key, value in (extra or {}).items():
            if key == "providers":
                config["providers"].update(value)
            else:
                config[key] = value
        # Through its entry point (the allow-list keeps other installed plugins out), so
        # the plugin's settings section [openai] is recognised.
        return make_client(
            PLUGIN,
            *plugins,
            entry_points=True,
            config=config,
            environ={"WIRE_KEY": KEY} if environ is None else environ,
        )

    return make


@pytest.fixture(scope="module")
def _module_wire_server() -> Iterator[WireServer]:
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def wire_server(_module_wire_server: WireServer) -> WireServer:
    """The test kit's WireServer, shared by a module's tests (stopping one costs half a
    second), handed on idle and emptied before each test (``WireServer.hand_on``)."""
    return _module_wire_server.hand_on()


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
