"""A planted key, searched for in everything modelplug lets out, on every error path of
core, modelplug-openai-compat and modelplug-anthropic.

The key (and a header token configured as ``Authorization = "Bearer <token>"``) is sent
to a loopback server that echoes it back in every way a real server might: in a 401
body, with JSON escapes, in part (all but one character, the first or the last 12),
in response headers, in an unknown stream field, in a mid-stream error event. Then
every output is searched for any run of MIN_FRAGMENT characters of either secret: str,
repr, ``traceback.format_exception``, pickle, ``vars()`` of the error and of every
exception it chains, the partial Response's ``model_dump()``, the Route as stored
(``TypeAdapter(Route)``, ``dataclasses.asdict``), every logger at DEBUG (httpx2,
httpcore2, the anthropic SDK, asyncio), warnings, and the real ``modelplug`` command's
stdout and stderr (``--json`` outputs too).

The recorded error shapes are those of the OpenAI and Anthropic API references (error
objects with ``type`` and ``message``); the echoed keys in them are invented.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import pickle
import re
import secrets
import shutil
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from modelplug import hookimpl
from modelplug.client.client import Client
from modelplug.contract.errors import ModelplugError
from modelplug.contract.routes import Route
from modelplug.contract.secrets import MIN_FRAGMENT
from modelplug.contract.settings import Settings
from modelplug.contract.types import Done, Endpoint, Event, Notice, Request, Response, TextDelta
from modelplug.host.known_providers import KNOWN_PROVIDERS
from modelplug_kit.testing import WireServer

TOKEN = "tok" + secrets.token_hex(16)  # the header secret: Authorization = "Bearer <TOKEN>"
LIBRARY_LOGGERS = ("httpx2", "httpcore2", "httpx", "httpcore", "anthropic", "asyncio")
CLAUDE = KNOWN_PROVIDERS["anthropic"].example
CLAUDE_SPEC = f"claude/{CLAUDE}"  # the user's own [providers.claude] of type anthropic


# -- searching ----------------------------------------------------------------------------


def _decoded(text: str) -> str:
    """``text`` with JSON escapes decoded, so an escaped key is found too."""

    def one(match: re.Match[str]) -> str:
        return "/" if match.group(1) is None else chr(int(match.group(1), 16))

    return re.sub(r"\\u([0-9a-fA-F]{4})|\\/", one, text)


def runs_of(secret: str) -> list[str]:
    return [secret[i : i + MIN_FRAGMENT] for i in range(len(secret) - MIN_FRAGMENT + 1)]


class Outputs:
    """Everything captured, by where it came from."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def add(self, where: str, text: str | bytes) -> None:
        if isinstance(text, bytes):
            text = text.decode("latin-1")
        self.texts.append((where, text))

    def add_error(self, error: BaseException) -> None:
        self.add("str", str(error))
        self.add("repr", repr(error))
        self.add("traceback", "".join(traceback.format_exception(error)))
        self.add("pickle", pickle.dumps(error))
        link: BaseException | None = error
        depth = 0
        while link is not None and depth < 10:
            self.add(f"vars of chained {type(link).__name__}", repr(vars(link)))
            self.add(f"str of chained {type(link).__name__}", str(link))
            link = link.__cause__ or link.__context__
            depth += 1
        partial = getattr(error, "partial", None)
        if isinstance(partial, Response):
            self.add("partial.model_dump()", repr(partial.model_dump()))
        route = getattr(error, "route", None)
        if isinstance(route, Route):
            self.add_route(route)

    def add_route(self, route: Route) -> None:
        from pydantic import TypeAdapter

        self.add("route repr", repr(route))
        self.add("route TypeAdapter json", TypeAdapter(Route).dump_json(route))
        self.add("route asdict", repr(dataclasses.asdict(route)))
        self.add("route pickle", pickle.dumps(route))
        self.add("route public_dict", repr(route.public_dict()))

    def leaks(self, *secrets_: str) -> list[str]:
        found = []
        for where, text in self.texts:
            plain = _decoded(text)
            for secret in secrets_:
                if any(run in plain or run in text for run in runs_of(secret)):
                    found.append(f"{where}: {text[:300]!r}")
        return found


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextmanager
def everything_captured(outputs: Outputs) -> Iterator[None]:
    """Every logger at DEBUG and every warning, into ``outputs``."""
    handler = _ListHandler()
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", *LIBRARY_LOGGERS)}
    root.addHandler(handler)
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    for line in handler.lines:
        outputs.add("log", line)
    for warning in caught:
        outputs.add("warning", str(warning.message))
    assert handler.lines, "nothing was logged at DEBUG: the capture is not working"


def run_failing(client: Client, spec: str, outputs: Outputs) -> ModelplugError:
    """Call ``spec`` expecting a failure; capture everything the failure shows."""
    notices: list[Event] = []
    with everything_captured(outputs), pytest.raises(ModelplugError) as caught:
        client.complete(spec, "hi", on_event=notices.append)
    for event in notices:
        outputs.add("event", repr(event))
    outputs.add_error(caught.value)
    # An uncaught error and log.exception show the same traceback.
    try:
        raise caught.value
    except ModelplugError:
        logging.getLogger("app").exception("the call failed")
    return caught.value


# -- the servers' echoes ------------------------------------------------------------------


def echoes(key: str) -> dict[str, str]:
    """The ways a server echoes a key back."""
    return {
        "whole": key,
        "json-escaped": key.replace("-", "\\u002d"),
        "all-but-one": key[:-1],
        "first-12": key[:12],
        "last-12": key[-12:],
        "scheme-token": TOKEN,
    }


ECHOES = list(echoes("x"))


def openai_error_body(text: str) -> bytes:
    # Shape: OpenAI API reference, error object ("Incorrect API key provided: ...").
    body = json.dumps(
        {"error": {"message": "Incorrect API key provided: ECHO", "type": "invalid_request_error"}}
    )
    return body.replace("ECHO", text).encode()


def anthropic_error_body(text: str) -> bytes:
    # Shape: Anthropic API reference, errors ({"type":"error","error":{...}}).
    body = json.dumps(
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key ECHO"},
        }
    )
    return body.replace("ECHO", text).encode()


# -- clients ------------------------------------------------------------------------------


@pytest.fixture
def user_file(modelplug_config_dir: Path, wire_server: WireServer) -> Path:
    """The user's own file: providers on the loopback server, keyed by the planted key,
    one with the header token."""
    path = modelplug_config_dir / "config.toml"
    path.write_text(
        f"""
[providers.wire]
type = "openai-compatible"
base_url = "{wire_server.url}/v1"
api_key_env = "PLANTED_API_KEY"

[providers.hdr]
type = "openai-compatible"
base_url = "{wire_server.url}/v1"
headers = {{ Authorization = "Bearer {TOKEN}" }}

[providers.claude]
type = "anthropic"
base_url = "{wire_server.url}"
api_key_env = "PLANTED_API_KEY"
headers = {{ X-Team-Auth = "Bearer {TOKEN}" }}
"""
    )
    path.chmod(0o600)
    return path


@pytest.fixture
def client(make_client: Callable[..., Client], user_file: Path, planted_key: str) -> Client:
    made: Client = make_client(
        "modelplug-openai-compat",
        "modelplug-anthropic",
        entry_points=True,
        user_config=user_file,
        environ={"PLANTED_API_KEY": planted_key},
    )
    return made


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    with WireServer() as server:
        yield server


def echo_of(key: str, how: str) -> str:
    return echoes(key)[how]


def spec_for(how: str, openai: bool = True) -> str:
    if not openai:
        return CLAUDE_SPEC
    return "hdr/m" if how == "scheme-token" else "wire/m"


# -- openai-compat ------------------------------------------------------------------------


@pytest.mark.parametrize("how", ECHOES)
def test_openai_compat_401_echoing_the_key_leaks_nothing(
    client: Client, wire_server: WireServer, planted_key: str, how: str
) -> None:
    echo = echo_of(planted_key, how)
    wire_server.add(
        openai_error_body(echo),
        status=401,
        content_type="application/json",
        headers={"x-echo": f"Bearer {echo}", "x-ratelimit-key": echo},
    )
    outputs = Outputs()
    error = run_failing(client, spec_for(how), outputs)
    assert getattr(error, "kind", None) == "auth"
    sent = wire_server.requests[-1].headers.get("authorization", "")
    assert sent.endswith(TOKEN if how == "scheme-token" else planted_key)  # really sent
    assert outputs.leaks(planted_key, TOKEN) == []


def test_openai_compat_429_with_the_key_in_its_headers_leaks_nothing(
    client: Client, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add(
        b'{"error": {"message": "slow down", "type": "rate_limit_exceeded"}}',
        status=429,
        content_type="application/json",
        headers={
            "retry-after": "1",
            "x-ratelimit-key": planted_key[:-1],
            "x-request-key": planted_key,
        },
    )
    outputs = Outputs()
    error = run_failing(client, "wire/m", outputs)
    assert getattr(error, "kind", None) == "rate_limit"
    assert outputs.leaks(planted_key, TOKEN) == []


def test_openai_compat_mid_stream_error_echoing_the_key_leaks_nothing(
    client: Client, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add_sse(
        [
            {"choices": [{"delta": {"content": "half an answer"}, "finish_reason": None}]},
            {"error": {"message": f"upstream refused key {planted_key[1:]}", "code": 401}},
        ]
    )
    outputs = Outputs()
    error = run_failing(client, "wire/m", outputs)
    partial = getattr(error, "partial", None)
    assert partial is not None and partial.text == "half an answer"  # nothing lost
    assert outputs.leaks(planted_key, TOKEN) == []


def test_openai_compat_echo_in_an_unknown_field_or_header_stays_out_of_metadata(
    client: Client, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add_sse(
        [
            {"choices": [{"delta": {"content": "ok"}, "finish_reason": None}], "echo": planted_key},
            {
                "choices": [{"delta": {}, "finish_reason": "stop"}],
                "debug": {"auth": f"Bearer {planted_key[:-1]}"},
            },
        ],
        done=True,
        headers={"x-ratelimit-remaining-requests": "9", "x-ratelimit-key": planted_key},
    )
    outputs = Outputs()
    with everything_captured(outputs):
        response = client.complete("wire/m", "hi")
    assert response.text == "ok"
    assert "echo" in response.metadata  # kept, but masked
    outputs.add("model_dump", repr(response.model_dump()))
    outputs.add("model_dump_json", response.model_dump_json())
    assert outputs.leaks(planted_key, TOKEN) == []


# -- anthropic ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ECHOES)
def test_anthropic_401_echoing_the_key_leaks_nothing(
    client: Client, wire_server: WireServer, planted_key: str, how: str
) -> None:
    pytest.importorskip("anthropic")
    echo = echo_of(planted_key, how)
    wire_server.add(
        anthropic_error_body(echo),
        status=401,
        content_type="application/json",
        headers={"x-echo": f"Bearer {echo}", "request-id": "req_0123456789"},
    )
    outputs = Outputs()
    error = run_failing(client, spec_for(how, openai=False), outputs)
    assert getattr(error, "kind", None) == "auth"
    sent = wire_server.requests[-1].headers
    # Sent for real (as x-api-key, or as a bearer token by newer SDKs).
    assert planted_key in sent.get("x-api-key", "") + sent.get("authorization", "")
    assert sent.get("x-team-auth") == f"Bearer {TOKEN}"
    assert outputs.leaks(planted_key, TOKEN) == []


def test_anthropic_mid_stream_error_echoing_the_key_leaks_nothing(
    client: Client, wire_server: WireServer, planted_key: str
) -> None:
    pytest.importorskip("anthropic")
    # Shape: Anthropic streaming docs, an error event inside a 200 stream after some text.
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": CLAUDE,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    wire_server.add_sse(
        [
            {"type": "message_start", "message": message},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Once"},
            },
            {
                "type": "error",
                "error": {
                    "type": "overloaded_error",
                    "message": f"key {planted_key[-12:]} {TOKEN}",
                },
            },
        ],
        event_names=True,
    )
    outputs = Outputs()
    error = run_failing(client, CLAUDE_SPEC, outputs)
    assert getattr(error, "kind", None) == "overloaded"
    assert outputs.leaks(planted_key, TOKEN) == []


# -- core -----------------------------------------------------------------------------------


class VendorError(Exception):
    """An SDK's error: it keeps the request (with the key) and the raw response."""

    def __init__(self, message: str, *, request_headers: dict[str, str], body: Any) -> None:
        super().__init__(message)
        self.request_headers = request_headers
        self.body = body
        self.status_code = 401


class LeakyVendor:
    """An in-house adapter that does everything wrong: the key in a Notice, in the
    metadata, in a library's DEBUG log with a traceback, and in its exception chain."""

    @hookimpl
    def modelplug_resolve(
        self, spec: str, settings: Settings, provider_type: str | None
    ) -> Route | None:
        if not spec.startswith("vendor/"):
            return None
        return Route(
            provider="vendor",
            model="m",
            endpoint=Endpoint(
                type="vendor",
                api_key_env="PLANTED_API_KEY",
                headers={"Authorization": f"Bearer {TOKEN}"},
            ),
        )

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request, client: Client) -> Any:
        if route.provider != "vendor":
            return None
        key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
        assert key is not None
        return self.run(key, request)

    async def run(self, key: str, request: Request) -> Any:
        yield Notice(kind="info", message=f"using {key[:-1]}", details={"key": key})
        yield TextDelta(text="partial")
        if request.max_tokens == 1:
            yield Done(
                response=Response.partial("vendor/m", "fine", "").model_copy(
                    update={"metadata": {"k": key, "h": {"x": key[-12:]}}}
                )
            )
            return
        try:
            raise KeyError(f"no session for {key}")
        except KeyError as exc:
            logging.getLogger("vendorsdk._base_client").debug(
                "request failed: %s", key, exc_info=exc
            )
            raise VendorError(
                f"Error code: 401 - {{'message': 'bad key {key[:12]}'}}",
                request_headers={"x-api-key": key},
                body={"echo": key},
            ) from exc


def test_core_errors_from_an_adapter_that_leaks_everywhere_leak_nothing(
    make_client: Callable[..., Client], planted_key: str
) -> None:
    client: Client = make_client(LeakyVendor(), environ={"PLANTED_API_KEY": planted_key})
    outputs = Outputs()
    error = run_failing(client, "vendor/m", outputs)
    assert getattr(error, "kind", None) == "auth"
    assert isinstance(error.__cause__, VendorError)  # the cause keeps its type
    assert outputs.leaks(planted_key) == []


def test_core_metadata_holding_the_key_is_masked(
    make_client: Callable[..., Client], planted_key: str
) -> None:
    client: Client = make_client(LeakyVendor(), environ={"PLANTED_API_KEY": planted_key})
    response = client.complete("vendor/m", "hi", max_tokens=1, on_event=lambda e: None)
    outputs = Outputs()
    outputs.add("model_dump", repr(response.model_dump()))
    assert response.metadata["k"] == "***"
    assert outputs.leaks(planted_key) == []


def test_routes_hold_no_header_value_however_they_are_stored(client: Client) -> None:
    outputs = Outputs()
    for spec in ("hdr/m", CLAUDE_SPEC):
        route = client.resolve(spec)
        assert set(route.endpoint.headers.values()) == {"***"}
        outputs.add_route(route)
    assert outputs.leaks(TOKEN) == []


# -- the CLI --------------------------------------------------------------------------------


def modelplug_command() -> str:
    found = shutil.which("modelplug", path=str(Path(sys.executable).parent)) or shutil.which(
        "modelplug"
    )
    if found is None:
        pytest.skip("the modelplug command is not installed")
    return found


def run_cli(
    args: list[str], user_file: Path, planted_key: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env.update(
        MODELPLUG_CONFIG=str(user_file),
        PLANTED_API_KEY=planted_key,
        MODELPLUG_PLUGINS="openai-compat,anthropic",
    )
    return subprocess.run(
        [modelplug_command(), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


@pytest.mark.parametrize("how", ["json-escaped", "all-but-one", "scheme-token"])
def test_the_modelplug_command_prints_no_secret(
    user_file: Path, wire_server: WireServer, planted_key: str, tmp_path: Path, how: str
) -> None:
    echo = echo_of(planted_key, how)
    wire_server.add(openai_error_body(echo), status=401, content_type="application/json")
    result = run_cli(["chat", "-m", spec_for(how), "hi"], user_file, planted_key, tmp_path)
    assert result.returncode == 1
    assert "Incorrect API key provided" in result.stderr
    outputs = Outputs()
    outputs.add("stdout", result.stdout)
    outputs.add("stderr", result.stderr)
    assert outputs.leaks(planted_key, TOKEN) == []


def test_the_modelplug_commands_json_outputs_hold_no_secret(
    user_file: Path, wire_server: WireServer, planted_key: str, tmp_path: Path
) -> None:
    outputs = Outputs()
    for args in (
        ["resolve", "hdr/m", "--json"],
        ["resolve", CLAUDE_SPEC, "--json"],
        ["plugins", "--json"],
    ):
        result = run_cli(args, user_file, planted_key, tmp_path)
        assert result.returncode == 0, result.stderr
        json.loads(result.stdout)
        outputs.add(f"{args} stdout", result.stdout)
        outputs.add(f"{args} stderr", result.stderr)
    assert outputs.leaks(planted_key, TOKEN) == []


class BuggyResolver:
    """A plugin with a bug that puts the key in the exception it raises."""

    @hookimpl
    def modelplug_resolve(
        self, spec: str, settings: Settings, provider_type: str | None
    ) -> Route | None:
        key = settings.api_key("PLANTED_API_KEY", "buggy")
        raise KeyError(f"no route for key {key}")


def test_a_plugins_bug_holding_the_key_shows_no_key(
    make_client: Callable[..., Client], planted_key: str
) -> None:
    from modelplug.contract.errors import PluginError

    client: Client = make_client(BuggyResolver(), environ={"PLANTED_API_KEY": planted_key})
    with pytest.raises(PluginError) as caught:
        client.resolve("buggy/m")
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.__context__ is None or isinstance(caught.value.__context__, KeyError)
    outputs = Outputs()
    outputs.add_error(caught.value)
    assert "failed in modelplug_resolve" in str(caught.value)
    assert outputs.leaks(planted_key) == []
