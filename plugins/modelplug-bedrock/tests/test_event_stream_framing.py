"""Malformed event-stream framing, through a real loopback socket: botocore's parser
checks both CRCs and the lengths, and each refusal ends the call in a classified
transient error that keeps the text of the whole frames before it (in the same network
read too), never a stray exception or a wait for bytes that will not come."""

from __future__ import annotations

import struct
import zlib

import pytest
from modelplug import ModelError
from modelplug.contract.types import TextDelta

TEXT_BEFORE = "The capital of France is Paris."


def failure(client, bedrock, wire_server, chunks):
    wire_server.add(chunks, path="/model/m/converse-stream", content_type=bedrock.content_type)
    shown = []
    with pytest.raises(ModelError) as caught:
        for event in client().stream("bedrock/m", "hi"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
    error = caught.value
    assert error.error_class.kind == "transient"
    assert error.error_class.retryable is True
    assert "malformed event stream" in str(error)
    assert error.partial is not None and error.partial.text == "".join(shown)
    return error


def with_prelude(total: int, headers: int) -> bytes:
    prelude = struct.pack(">II", total, headers)
    return prelude + struct.pack(">I", zlib.crc32(prelude))


def test_a_bad_message_crc_keeps_the_text_before_it(client, bedrock, wire_server):
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    bad = bytearray(frames[3])
    bad[20] ^= 0x01
    error = failure(client, bedrock, wire_server, [*frames[:3], bytes(bad), *frames[4:]])
    assert "Checksum mismatch" in str(error)
    assert error.partial.text == TEXT_BEFORE


def test_whole_frames_before_a_bad_one_in_the_same_read_are_kept(client, bedrock, wire_server):
    # The network may join them in one read: the text before the bad frame still counts.
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    bad = bytearray(frames[3])
    bad[-1] ^= 0xFF
    error = failure(client, bedrock, wire_server, [b"".join(frames[:3]) + bytes(bad)])
    assert "Checksum mismatch" in str(error)
    assert error.partial.text == TEXT_BEFORE


def test_a_bad_prelude_crc_is_refused_without_waiting_for_its_length(client, bedrock, wire_server):
    # A length of about 2 GB whose prelude CRC says it is corrupt: refused at once, not
    # read as a frame still arriving (the server then holds the connection open).
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    bad = bytearray(frames[3][:12])
    bad[0] = 0x7F
    error = failure(client, bedrock, wire_server, [*frames[:3], bytes(bad), (5.0, b"")])
    assert "Checksum mismatch" in str(error) and "mid-frame" not in str(error)
    assert error.partial.text == TEXT_BEFORE


def test_an_impossible_length_with_a_good_prelude_crc_is_refused(client, bedrock, wire_server):
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    huge = with_prelude(32 * 1024 * 1024, 0)
    error = failure(client, bedrock, wire_server, [*frames[:3], huge, (5.0, b"")])
    assert "exceeded the maximum" in str(error)
    assert error.partial.text == TEXT_BEFORE


@pytest.mark.parametrize(
    "headers",
    [
        b"\x01a\x0f",  # a header value type the format does not have
        b"\x05ab",  # a header name longer than the headers
        b"\x01a\x07\x00\x02\xff\xfe",  # a string value that is not UTF-8
    ],
)
def test_a_frame_whose_crcs_hold_but_whose_headers_do_not_fit_is_classified(
    client, bedrock, wire_server, headers
):
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    body = with_prelude(16 + len(headers), len(headers))[:12] + headers
    bad = body + struct.pack(">I", zlib.crc32(body))
    error = failure(client, bedrock, wire_server, [*frames[:3], bad, *frames[3:]])
    assert "do not fit together" in str(error)
    assert error.partial.text == TEXT_BEFORE
