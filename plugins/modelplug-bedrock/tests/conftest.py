"""Shared helpers: recorded ConverseStream bodies, cut into their frames (one network
write per frame, as Bedrock flushes them), and frames a test builds from documented
payloads."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from modelplug.testing import load_recording
from modelplug_bedrock import credentials
from modelplug_bedrock.eventstream import encode_frame

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


@pytest.fixture
def bedrock() -> Wire:
    return Wire()


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


def event(name: str, payload: dict[str, Any]) -> bytes:
    """A frame built by the test from a documented event payload (the framing is ours;
    the tests check it against botocore's parser)."""
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
