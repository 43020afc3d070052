"""The gateway serves a group under one name to the official openai SDK: each request
goes to a deployment of the group, a deployment answering 429 hands the request to
another, ``x-modelplug-route`` names the deployment that answered (the answer's
``model`` is the name asked for, as for any model), and ``/v1/models`` lists the group. The gateway runs for real on uvicorn, the
deployments are openai-compatible servers on loopback (the test kit's WireServer)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from modelplug_kit.testing import WireServer

openai = pytest.importorskip("openai")
pytest.importorskip("modelplug_openai_compat", reason="the deployments are served through it")
pytest.importorskip("modelplug_gateway", reason="the gateway serves the group")

from modelplug_gateway.app import Gateway  # noqa: E402
from modelplug_gateway.auth import OpenGate  # noqa: E402
from modelplug_gateway.server import uvicorn_server  # noqa: E402
from modelplug_gateway.settings import GatewaySettings  # noqa: E402

RECORDING = Path(__file__).parent / "recordings" / "chat_ok.sse"
BODY = b"".join(
    line for line in RECORDING.read_bytes().splitlines(True) if not line.startswith(b"#")
)
RATE_LIMITED = {"error": {"message": "Rate limit reached", "type": "requests"}}
HELLO = [{"role": "user", "content": "hello"}]


@contextmanager
def running(app: Any) -> Iterator[str]:
    """``app`` on uvicorn on a free loopback port until the block ends."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn_server(app, GatewaySettings(port=port), log_level="warning")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the gateway did not start"
        time.sleep(0.005)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_the_gateway_serves_a_group_to_the_openai_sdk(make_client: Any, router: Any) -> None:
    east, west = WireServer().start(), WireServer().start()
    try:
        client = make_client(
            router,
            "modelplug-openai-compat",
            config={
                "providers": {
                    "east": {"type": "openai-compatible", "base_url": east.url + "/v1"},
                    "west": {"type": "openai-compatible", "base_url": west.url + "/v1"},
                },
                "groups": {"g": {"deployments": ["east/m", "west/m"]}},
            },
        )
        # Only chat requests take these (the model list asks the servers what they serve).
        chat = "/v1/chat/completions"
        east.add_json(RATE_LIMITED, status=429, path=chat)  # the first call goes east
        for _ in range(4):
            west.add(BODY, path=chat)
        east.add(BODY, path=chat)
        with running(Gateway(client, GatewaySettings(), OpenGate())) as url:
            gpt = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
            listed = [model.id for model in gpt.models.list()]
            streamed = gpt.chat.completions.with_raw_response.create(
                model="g", messages=HELLO, stream=True
            )
            chunks = list(streamed.parse())
            plain = gpt.chat.completions.with_raw_response.create(model="g", messages=HELLO)
            # east cools down (60 s by default, on the fake clock): the next goes west,
            # and once the cooldown is over the weighted turn comes back to east.
            again = gpt.chat.completions.with_raw_response.create(model="g", messages=HELLO)
            router.clock.now += 61
            later = [
                gpt.chat.completions.with_raw_response.create(model="g", messages=HELLO)
                for _ in range(2)
            ]
    finally:
        east.stop()
        west.stop()
    assert "g" in listed
    assert streamed.headers["x-modelplug-route"] == "west/m"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "ok"
    assert plain.headers["x-modelplug-route"] == "west/m"
    assert plain.parse().choices[0].message.content == "ok"
    assert again.headers["x-modelplug-route"] == "west/m"
    assert {r.headers["x-modelplug-route"] for r in later} == {"east/m", "west/m"}
    assert {r.parse().model for r in later} == {"g"}  # the name the caller asked for
    chats = [[r for r in s.requests if r.path == "/v1/chat/completions"] for s in (east, west)]
    assert [len(c) for c in chats] == [2, 4]


EMBEDDINGS = Path(__file__).parent / "recordings" / "openai_embeddings.json"


def test_the_gateway_serves_a_groups_embeddings_to_the_openai_sdk(
    make_client: Any, router: Any
) -> None:
    east, west = WireServer().start(), WireServer().start()
    try:
        client = make_client(
            router,
            "modelplug-openai-compat",
            config={
                "providers": {
                    "east": {"type": "openai-compatible", "base_url": east.url + "/v1"},
                    "west": {"type": "openai-compatible", "base_url": west.url + "/v1"},
                },
                "groups": {"vectors": {"deployments": ["east/m", "west/m"]}},
            },
        )
        path = "/v1/embeddings"
        east.add_json(RATE_LIMITED, status=429, path=path)  # the first call goes east
        west.add_file(EMBEDDINGS, path=path)
        with running(Gateway(client, GatewaySettings(), OpenGate())) as url:
            gpt = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
            raw = gpt.embeddings.with_raw_response.create(
                model="vectors", input="The food was delicious.", encoding_format="float"
            )
    finally:
        east.stop()
        west.stop()
    assert raw.headers["x-modelplug-route"] == "west/m"
    answer = raw.parse()
    assert answer.model == "vectors"
    assert answer.data[0].embedding == [0.0023064255, -0.009327292, -0.0028842222]
    assert [len(s.requests) for s in (east, west)] == [1, 1]
