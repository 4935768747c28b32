"""Markers saved beside a recording: written once each, read back, foreign files refused."""

from __future__ import annotations

import json
import os

from qtop.events import Marker
from qtop.record.sidecar import read_markers, save_marker, sidecar_path


def test_markers_round_trip_and_the_file_names_its_recording(tmp_path):
    recording = tmp_path / "run.jsonl"
    first = Marker(t=10.5, host_t=1.0, label="note", note="fan off")
    second = Marker(t=20.0, host_t=2.0, label="note", note="door open")
    path = save_marker(recording, "abc", first)
    save_marker(recording, "abc", second)
    assert path == sidecar_path(recording) == tmp_path / "run.jsonl.markers"
    assert os.stat(path).st_mode & 0o777 == 0o600
    head = json.loads(path.read_text().splitlines()[0])
    assert head == {"kind": "sidecar", "format": "qtop-markers", "version": 1,
                    "recording": "run.jsonl", "session_id": "abc"}  # fmt: skip
    found = read_markers(recording, "abc")
    assert found.markers == [first, second] and found.problems == []


def test_a_missing_sidecar_is_empty_and_a_foreign_one_is_refused(tmp_path):
    recording = tmp_path / "run.jsonl"
    assert read_markers(recording, "abc").markers == []
    save_marker(recording, "another session", Marker(t=1.0, note="x"))
    found = read_markers(recording, "abc")
    assert found.markers == []
    assert found.problems == [f"{sidecar_path(recording)}: written for another recording "
                              "(session id differs), not shown"]  # fmt: skip


def test_damaged_lines_are_skipped_and_named(tmp_path):
    recording = tmp_path / "run.jsonl"
    save_marker(recording, "abc", Marker(t=1.0, note="kept"))
    with open(sidecar_path(recording), "a", encoding="utf-8") as out:
        out.write("not json\n")
        out.write('{"kind": "marker", "t": "soon"}\n')
    found = read_markers(recording, "abc")
    assert [m.note for m in found.markers] == ["kept"]
    assert found.problems[0].endswith(":3: not JSON, skipped")
    assert ":4: " in found.problems[1] and found.problems[1].endswith(", skipped")


def test_a_link_in_place_of_the_sidecar_is_not_followed(tmp_path):
    recording = tmp_path / "run.jsonl"
    target = tmp_path / "elsewhere"
    target.write_text("")
    sidecar_path(recording).symlink_to(target)
    import pytest

    from qtop.errors import UsageError

    with pytest.raises(UsageError) as caught:
        save_marker(recording, "abc", Marker(t=1.0, note="x"))
    assert "cannot save the marker" in caught.value.problem
    assert target.read_text() == ""
