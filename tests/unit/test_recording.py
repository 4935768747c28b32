import asyncio
import json
import os
import stat
from collections import Counter

import pytest

from qtop.errors import UsageError
from qtop.events import End, Header, Sample
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter, encode_line


def write_recording(path, events):
    header, rest = events[0], events[1:]
    with RecordingWriter(path, header) as writer:
        for event in rest[:-1]:
            writer.write(event)
        writer.close(rest[-1])


def test_write_then_read_gives_the_same_events(tmp_path, simple_events):
    path = tmp_path / "r.jsonl"
    write_recording(path, simple_events)
    recording = open_recording(path)
    assert list(recording.events()) == simple_events
    assert recording.warnings() == []


def test_recording_is_created_0600_and_never_overwritten(tmp_path, simple_events):
    path = tmp_path / "r.jsonl"
    old_umask = os.umask(0)
    try:
        write_recording(path, simple_events)
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(UsageError, match="already exists"):
        RecordingWriter(path, simple_events[0])


def test_a_recording_cut_at_every_byte_offset_reads_as_a_prefix(tmp_path, simple_events):
    events = [*simple_events[:14], simple_events[-1]]
    path = tmp_path / "full.jsonl"
    write_recording(path, events)
    data = path.read_bytes()
    # Lines (start, end after the newline) and how many events each one holds.
    held = Counter(offset for offset, _ in open_recording(path).events_with_offsets())
    starts = [0, *(i + 1 for i, byte in enumerate(data) if byte == 0x0A)][:-1]
    lines = [(start, data.index(b"\n", start) + 1) for start in starts]
    index_start = lines[-1][0]
    assert data[index_start:].startswith(b'{"kind":"index"')
    header_length = lines[0][1]
    cut = tmp_path / "cut.jsonl"
    for length in range(len(data) + 1):
        cut.write_bytes(data[:length])
        if length < header_length:
            with pytest.raises(UsageError):
                open_recording(cut)
            continue
        recording = open_recording(cut)
        read = list(recording.events())
        assert read == events[: len(read)], f"cut at {length}"
        whole = sum(held[start] for start, end in lines if end <= length)
        inside = next(((s, e) for s, e in lines if s < length < e), None)
        # A line cut just before its newline is complete JSON and still counts.
        complete_json = inside is not None and length == inside[1] - 1
        assert len(read) in ((whole, whole + held[inside[0]]) if complete_json else (whole,))
        if inside is not None and not complete_json and inside[0] != index_start:
            assert "cut off mid-write" in recording.warnings()[0], f"cut at {length}"
        else:
            assert recording.warnings() == [], f"cut at {length}"


def test_unknown_future_version_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"kind": "header", "format": "qtop-recording", "version": 9}) + "\n")
    with pytest.raises(UsageError) as caught:
        open_recording(path)
    assert "format version 9" in caught.value.problem
    assert "upgrade qtop" in caught.value.fix


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b'{"kind":"header","format":"qtop-rec', "header line is incomplete"),
        (b"hello\n", "not a qtop recording"),
        (b'{"kind":"header","format":"other"}\n', "not a qtop recording"),
        (b"\x00\x01\x02\n", "not a qtop recording"),
    ],
)
def test_unusable_files_are_refused_clearly(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(UsageError, match=message):
        open_recording(path)


def test_missing_recording(tmp_path):
    with pytest.raises(UsageError, match="no such recording"):
        open_recording(tmp_path / "nope.jsonl")


def test_corrupt_middle_lines_and_unknown_kinds_are_skipped_and_counted(tmp_path):
    path = tmp_path / "r.jsonl"
    lines = [
        encode_line(Header(session_id="x")),
        encode_line(Sample(t=1.0, seq=0, values={})),
        b"\x00\x00\x00garbage\n",
        b'{"kind":"hologram","t":2.0}\n',
        encode_line(Sample(t=3.0, seq=1, values={})),
    ]
    path.write_bytes(b"".join(lines))
    recording = open_recording(path)
    assert [e.t for e in recording.events()] == [None, 1.0, 3.0]
    warnings = recording.warnings()
    assert any("skipped 1 undecodable line(s): line 3: not JSON" in w for w in warnings)
    assert any("unknown kind 'hologram'" in w for w in warnings)


def test_following_a_recording_that_is_still_being_written(tmp_path):
    path = tmp_path / "live.jsonl"
    writer = RecordingWriter(path, Header(session_id="follow"))

    async def scenario():
        recording = open_recording(path)
        seen = []

        async def follow():
            async for _, event in recording.follow(poll_s=0.01):
                seen.append(event)

        task = asyncio.create_task(follow())
        for seq in range(5):
            writer.write(Sample(t=float(seq), seq=seq, values={}))
            await asyncio.sleep(0.02)
        # A torn tail must be held back until its writer finishes the line.
        line = encode_line(Sample(t=5.0, seq=5, values={}))
        with open(path, "ab") as raw:
            raw.write(line[:10])
        await asyncio.sleep(0.05)
        assert len(seen) == 6
        with open(path, "ab") as raw:
            raw.write(line[10:])
        writer.close(End(t=6.0))
        await asyncio.wait_for(task, 2)
        return seen

    seen = asyncio.run(scenario())
    assert [type(e).__name__ for e in seen] == ["Header"] + ["Sample"] * 6 + ["End"]
    assert [e.seq for e in seen if isinstance(e, Sample)] == list(range(6))


def test_following_a_truncated_file_stops_with_a_clear_error(tmp_path):
    path = tmp_path / "live.jsonl"
    writer = RecordingWriter(path, Header(session_id="trunc"))
    for seq in range(3):
        writer.write(Sample(t=float(seq), seq=seq, values={}))

    async def scenario():
        recording = open_recording(path)
        agen = recording.follow(poll_s=0.01)
        for _ in range(4):
            await agen.__anext__()
        os.truncate(path, 10)
        await agen.__anext__()

    with pytest.raises(UsageError, match="truncated"):
        asyncio.run(scenario())
    writer.close()
