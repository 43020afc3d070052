"""Shared helpers: recorded ConverseStream bodies, cut into their frames (one network
write per frame, as Bedrock flushes them), and frames a test builds from documented
payloads (framed here, by the AWS event-stream layout; the plugin reads them with
botocore's parser, as it reads the recordings)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from modelplug_bedrock import credentials
from modelplug_kit.testing import load_recording

RECORDED = Path(__file__).parent / "recorded"
CONTENT_TYPE = "application/vnd.amazon.eventstream"


class Wire:
    """Helpers the tests reach through the ``bedrock`` fixture (with importlib imports, a
    conftest is not importable by name)."""

    content_type = CONTENT_TYPE

    @staticmethod
    def recorded(name: str) -> bytes:
        return recorded(name)

    @staticmethod
    def frames_of(data: bytes) -> list[bytes]:
        return frames_of(data)

    @staticmethod
    def event(name: str, payload: dict[str, Any]) -> bytes:
        return event(name, payload)

    @staticmethod
    def exception(name: str, message: str) -> bytes:
        return exception(name, message)

    @staticmethod
    def encode_frame(headers: dict[str, str], payload: bytes) -> bytes:
        return encode_frame(headers, payload)

    def __init__(self, server: Any = None) -> None:
        self.server = server

    def serve(self, body: bytes, model: str = "m", **kw: Any) -> None:
        serve(self.server, body, model, **kw)


@pytest.fixture
def bedrock(wire_server: Any) -> Wire:
    return Wire(wire_server)


def recorded(name: str) -> bytes:
    """A recording's bytes without its leading comment line."""
    return load_recording(RECORDED / name)


def frames_of(data: bytes) -> list[bytes]:
    """The frames of an event-stream body, by each prelude's total length."""
    frames, at = [], 0
    while at < len(data):
        (total,) = struct.unpack_from(">I", data, at)
        frames.append(data[at : at + total])
        at += total
    return frames


def encode_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """A message with string headers: prelude (total length, headers length, their
    CRC32), the headers, the payload and the CRC32 of all before it. Only tests write
    the event stream; the plugin reads it."""
    head = bytearray()
    for name, value in headers.items():
        key, text = name.encode(), value.encode()
        head += bytes([len(key)]) + key + b"\x07" + struct.pack(">H", len(text)) + text
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    frame = prelude + struct.pack(">I", zlib.crc32(prelude)) + bytes(head) + payload
    return frame + struct.pack(">I", zlib.crc32(frame))


def event(name: str, payload: dict[str, Any]) -> bytes:
    """A frame built by the test from a documented event payload."""
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_frame(headers, json.dumps(payload).encode())


def exception(name: str, message: str) -> bytes:
    """An exception event as Bedrock documents it: ``:exception-type`` and a body
    ``{"message": ...}``."""
    headers = {
        ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_frame(headers, json.dumps({"message": message}).encode())


@pytest.fixture(autouse=True)
def _fresh_credentials() -> Any:
    credentials.clear()
    yield
    credentials.clear()


KEYS = {
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
}


@pytest.fixture
def client(make_client: Any, wire_server: Any) -> Any:
    """``client(**table)``: a Client whose ``bedrock`` provider points at the loopback
    server (region us-east-1), signing with fixed AWS keys from its environment;
    ``environ=`` replaces that environment, ``options=`` fills ``[bedrock]``."""
    import modelplug_bedrock

    def make(environ: dict[str, str] | None = None, options: Any = None, **table: Any) -> Any:
        providers = {"type": "bedrock", "base_url": wire_server.url, "region": "us-east-1"}
        providers.update(table)
        providers = {k: v for k, v in providers.items() if v is not None}
        config: dict[str, Any] = {"providers": {"bedrock": providers}}
        if options:
            config["bedrock"] = options
        return make_client(
            modelplug_bedrock, config=config, environ=KEYS if environ is None else environ
        )

    return make


def serve(wire_server: Any, body: bytes, model: str = "m", **kw: Any) -> None:
    """Queue a recorded or built stream, one write per frame."""
    wire_server.add(
        frames_of(body), path=f"/model/{model}/converse-stream", content_type=CONTENT_TYPE, **kw
    )
