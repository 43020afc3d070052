"""The event-stream decoder against botocore's own parser (botocore.eventstream) on the
same bytes: every recording, in every way the network may cut it; bad CRCs and
impossible lengths are refused, and the buffer never grows past what is pending."""

from __future__ import annotations

import random
import zlib

import pytest
from botocore.eventstream import EventStreamBuffer
from modelplug_bedrock.eventstream import FrameDecoder, FramingError

RECORDINGS = ["text", "tool_use", "reasoning", "redacted"]


def botocore_frames(data: bytes) -> list[tuple[dict, bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(m.headers, m.payload) for m in buffer]


def ours(chunks: list[bytes]) -> list[tuple[dict, bytes]]:
    decoder = FrameDecoder()
    frames = [f for chunk in chunks for f in decoder.feed(chunk)]
    assert decoder.pending == 0
    return [(f.headers, f.payload) for f in frames]


@pytest.mark.parametrize("name", RECORDINGS)
def test_each_recording_decodes_as_botocore_decodes_it_however_it_is_cut(bedrock, name):
    data = bedrock.recorded(f"{name}.eventstream")
    expected = botocore_frames(data)
    assert len(expected) > 10
    assert ours([data]) == expected
    assert ours([data[i : i + 1] for i in range(len(data))]) == expected
    rng = random.Random(name)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(data)), 12))
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert ours(pieces) == expected


def test_frames_the_tests_build_read_the_same_in_botocore(bedrock):
    built = bedrock.event("contentBlockDelta", {"delta": {"text": "é"}}) + bedrock.exception(
        "throttlingException", "slow down"
    )
    assert ours([built]) == botocore_frames(built)
    (_, (headers, payload)) = ours([built])
    assert headers[":exception-type"] == "throttlingException"
    assert payload == b'{"message": "slow down"}'


def test_a_bad_message_crc_is_refused(bedrock):
    frame = bytearray(bedrock.frames_of(bedrock.recorded("text.eventstream"))[1])
    frame[20] ^= 0x01
    with pytest.raises(FramingError, match="message's CRC"):
        FrameDecoder().feed(bytes(frame))


def test_whole_frames_before_a_bad_one_in_the_same_chunk_are_returned(bedrock):
    # The network may join them in one read: what came before the bad frame is kept,
    # and the error is raised by the next feed (and held in ``broken`` for the reader).
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    bad = bytearray(frames[1])
    bad[-1] ^= 0xFF
    decoder = FrameDecoder()
    got = decoder.feed(frames[0] + frames[1] + bytes(bad))
    assert len(got) == 2
    assert decoder.broken is not None and "message's CRC" in str(decoder.broken)
    with pytest.raises(FramingError, match="message's CRC"):
        decoder.feed(frames[2])


def test_a_bad_prelude_crc_is_refused_before_waiting_for_its_length(bedrock):
    frame = bytearray(bedrock.frames_of(bedrock.recorded("text.eventstream"))[1])
    frame[0] = 0x7F  # a length of ~2 GB: the prelude CRC says it is corrupt
    with pytest.raises(FramingError, match="prelude's CRC"):
        FrameDecoder().feed(bytes(frame[:12]))


def test_an_impossible_length_with_a_good_prelude_crc_is_refused():
    prelude = (32 * 1024 * 1024).to_bytes(4, "big") + (0).to_bytes(4, "big")
    with pytest.raises(FramingError, match="impossible lengths"):
        FrameDecoder().feed(prelude + zlib.crc32(prelude).to_bytes(4, "big"))


def test_the_buffer_holds_at_most_twice_what_is_pending(bedrock):
    # Linear time: consumed bytes are dropped once they are half the buffer, so a long
    # stream fed byte by byte never re-scans or keeps what it has read.
    data = bedrock.recorded("text.eventstream") * 50
    decoder = FrameDecoder()
    largest = max(len(f) for f in bedrock.frames_of(data))
    seen = 0
    for i in range(len(data)):
        seen += len(decoder.feed(data[i : i + 1]))
        assert len(decoder._buf) <= 2 * largest + 1
    assert seen == len(botocore_frames(data))
