"""Damaged recordings through every command that reads one: never a crash, a hang or an escape.

The property test draws damage with hypothesis from the real fixture recordings
(``tests/fixtures/recording_fuzz.py``); ``bench/fuzz_recordings.py`` runs the
same damage for hours. Each class of crash the fuzzing found is a regression
test below, built from a real fixture with the one damage that caused it.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.recording_fuzz import (
    ENTRY_POINTS,
    RECORDINGS,
    Damaged,
    check_damaged,
    damaged_recording,
    hostile_value,
    run_entry_points,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qtop.events import Iteration
from qtop.record.reader import open_recording

# A hang guard, in CPU seconds: a busy machine slows the wall clock, not this.
CPU_LIMIT_S = 20.0


class DrawnChooser:
    """The damage's choices drawn by hypothesis (so a failure shrinks to a small one)."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))


class ScriptedChooser:
    """The damage's choices given in order."""

    def __init__(self, *choices: int) -> None:
        self.choices = list(choices)

    def integer(self, low: int, high: int) -> int:
        choice = self.choices.pop(0)
        assert low <= choice <= high
        return choice


def test_a_number_already_past_a_float_can_be_scaled_again():
    # The long run's one harness failure (seed 1, input 486,014): an earlier damage left
    # an int beyond a float's range, and scaling it by 1e300 raised in the generator.
    assert hostile_value(ScriptedChooser(7, 2), 10**400) == 10**400 * int(1e300)
    assert hostile_value(ScriptedChooser(7, 2), 3) == 3e300


def failures(outcomes):
    return [f"{o.entry}: {o.kind} {o.signature}\n{o.detail}" for o in outcomes if o.failed]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=False,
)
@given(st.data())
def test_damaged_recordings_never_crash_hang_or_print_escapes(data):
    damaged = damaged_recording(DrawnChooser(data))
    assert failures(check_damaged(damaged, cpu_limit_s=CPU_LIMIT_S)) == []


# --- the classes found, one by one -------------------------------------------------------


def fixture_lines(name: str) -> list[bytes]:
    return (RECORDINGS / name).read_bytes().splitlines(keepends=True)


def first_line(lines: list[bytes], kind: str) -> int:
    prefix = f'{{"kind":"{kind}"'.encode()
    return next(k for k, line in enumerate(lines) if line.startswith(prefix))


def edited(lines: list[bytes], at: int, change) -> list[bytes]:
    data = json.loads(lines[at])
    change(data)
    out = list(lines)
    out[at] = json.dumps(data, separators=(",", ":")).encode() + b"\n"
    return out


def clean_everywhere(path: Path) -> None:
    outcomes = run_entry_points(path, cpu_limit_s=CPU_LIMIT_S)
    assert [o.entry for o in outcomes] == list(ENTRY_POINTS)
    assert failures(outcomes) == []


def measured_count(path: Path) -> int:
    result = subprocess.run(
        [sys.executable, "-m", "qtop", "report", str(path), "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["variants"][0]["measured"]["count"]


def measured_iterations(name: str) -> int:
    recording = open_recording(RECORDINGS / name)
    with recording:
        return sum(
            1 for e in recording.events() if isinstance(e, Iteration) and e.phase == "measure"
        )


def test_an_iteration_a_trillion_seconds_later_neither_hangs_nor_loses_the_others(tmp_path):
    # Stability and timeline windows used to be counted up to the last time: 3e10 windows.
    lines = fixture_lines("simple.jsonl")
    last = max(k for k, line in enumerate(lines) if line.startswith(b'{"kind":"iteration"'))

    def far(data):
        data["t"] = data["end"] = 1e12
        data["start"] = 1e12 - data["latency_s"]

    path = tmp_path / "far.jsonl"
    path.write_bytes(b"".join(edited(lines, last, far)))
    clean_everywhere(path)
    assert measured_count(path) == measured_iterations("simple.jsonl")


@pytest.mark.parametrize("t", [1e300, 1.7976931348623157e308, -1e300])
def test_times_near_a_floats_limit_neither_hang_nor_write_infinity(tmp_path, t):
    # Windows of 30 s beyond 1e300 s were a step no float could take (an endless loop),
    # and microseconds of 1e305 s were Infinity in the Perfetto trace.
    lines = fixture_lines("sustained.jsonl")
    at = first_line(lines, "iteration")

    def far(data):
        data["t"] = data["end"] = t
        data["start"] = t - data["latency_s"]

    path = tmp_path / "limit.jsonl"
    path.write_bytes(b"".join(edited(lines, at, far)))
    clean_everywhere(path)
    trace = subprocess.run(
        [sys.executable, "-m", "qtop", "export", str(path), "--format", "perfetto", "-o", "-"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert trace.returncode == 0, trace.stderr
    json.loads(trace.stdout, parse_constant=lambda token: pytest.fail(f"{token} in the trace"))


def test_a_latency_beyond_the_range_of_milliseconds_is_null_in_the_json_report(tmp_path):
    # -1e308 s is -inf ms: json.dumps refused it and the report crashed.
    lines = fixture_lines("simple.jsonl")
    at = first_line(lines, "iteration")
    lines = edited(lines, at, lambda data: data.update(latency_s=-1e308, phase="measure"))
    path = tmp_path / "negative.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("latency_s", 10**400),
        ("latency_s", -(10**309)),
        ("latency_s", "NaN"),
        ("latency_s", "Infinity"),
        ("start", "-Infinity"),
        ("end", "1e999"),
        ("index", 2**64),
        ("exit_status", -(2**63) - 1),
    ],
    ids=["1e400", "-1e309", "NaN", "Infinity", "-Infinity", "1e999", "index-2**64", "status"],
)
def test_numbers_beyond_their_type_are_one_damaged_line(tmp_path, key, value):
    lines = fixture_lines("simple.jsonl")
    at = first_line(lines, "iteration")
    data = json.loads(lines[at])
    data[key] = "@@"
    token = str(value) if isinstance(value, int) else value
    lines[at] = json.dumps(data, separators=(",", ":")).replace('"@@"', token).encode() + b"\n"
    path = tmp_path / "number.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)
    recording = open_recording(path)
    with recording:
        list(recording.events())
        (warning,) = recording.warnings()
    assert f"skipped 1 undecodable line(s): line {at + 1}: " in warning


def test_huge_sums_of_valid_numbers_do_not_overflow_the_statistics(tmp_path):
    # fsum of 1e308 + 1e308 raised OverflowError; the codec let each value through.
    lines = fixture_lines("simple.jsonl")
    iterations = [k for k, line in enumerate(lines) if line.startswith(b'{"kind":"iteration"')]
    for at in iterations[-4:]:
        lines = edited(lines, at, lambda data: data.update(latency_s=1.7976931348623157e308))
    samples = [k for k, line in enumerate(lines) if line.startswith(b'{"kind":"sample"')]
    for at in samples[-3:]:
        lines = edited(
            lines, at, lambda data: data["values"].update({"thermal/nsp-0-0-0-thermal": 1e308})
        )
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)
    assert measured_count(path) == measured_iterations("simple.jsonl")


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}, "1.5", True])
def test_a_sample_value_of_the_wrong_type_is_one_damaged_line(tmp_path, value):
    # Untyped values used to reach the statistics (a list compared with a float).
    lines = fixture_lines("simple.jsonl")
    at = first_line(lines, "sample")
    lines = edited(lines, at, lambda data: data["values"].update({"cooling/cdsp": value}))
    path = tmp_path / "typed.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)
    recording = open_recording(path)
    with recording:
        list(recording.events())
        (warning,) = recording.warnings()
    assert f"line {at + 1}: sample.values" in warning


@pytest.mark.parametrize("where", ["header", "channels", "marker", "keyframe"])
def test_nesting_thousands_deep_is_a_damaged_line_not_a_recursion_error(tmp_path, where):
    name = "demo-v2-keyframes.jsonl"
    lines = fixture_lines(name)
    deep = "[" * 5000 + "]" * 5000
    at = first_line(lines, "header" if where == "header" else where) if where != "marker" else 2
    data = json.loads(lines[at])
    keys = {"header": "profile", "channels": "channels", "marker": "note", "keyframe": "state"}
    key = keys[where]
    if where == "keyframe" and "state" not in data:
        key = "patch"
    data[key] = "@@"
    text = json.dumps(data, separators=(",", ":")).replace('"@@"', deep)
    lines[at] = text.encode() + b"\n"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)


@pytest.mark.parametrize(
    "patch",
    [
        {"d": {"sample_count": {"v": "x"}}},
        {"l": [5, []]},
        {"d": []},
        [],
        None,
        {"v": None},
        {"x": [1]},
    ],
    ids=["typed", "list-op", "dict-op", "empty-list", "null", "null-value", "unknown-op"],
)
def test_a_malformed_keyframe_is_skipped_and_seeks_still_work(tmp_path, patch):
    # SessionModel.restore raised TypeError/KeyError on a malformed keyframe state.
    lines = fixture_lines("demo-v2-keyframes.jsonl")
    keyframes = [k for k, line in enumerate(lines) if line.startswith(b'{"kind":"keyframe"')]
    patched = next(k for k in keyframes if b'"patch"' in lines[k])
    lines = edited(lines, patched, lambda data: data.update(patch=patch))
    lines = edited(lines, keyframes[0], lambda data: data["state"].update(channels=[{"x": 1}]))
    path = tmp_path / "keyframes.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)


def test_a_cut_gzip_recording_gives_what_came_before_the_cut(tmp_path):
    # gzip raised EOFError past the cut.
    whole = (RECORDINGS / "demo-v2.jsonl").read_bytes()
    packed = gzip.compress(whole, mtime=0)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    clean_everywhere(path)
    recording = open_recording(path)
    with recording:
        read = list(recording.events())
        warnings = recording.warnings()
    assert read, "nothing read before the cut"
    assert any("damaged or cut short" in warning for warning in warnings), warnings


def test_invalid_utf8_duplicated_lines_and_flipped_bytes_are_counted_and_named(tmp_path):
    lines = fixture_lines("variants.jsonl")
    first = first_line(lines, "iteration")
    lines[first] = lines[first].replace(b'"phase":"', b'"phase":"\xff\xfe')
    lines.insert(first + 3, lines[first + 2])
    flipped = bytearray(lines[first + 6])
    flipped[len(flipped) // 2] ^= 0x5A
    lines[first + 6] = bytes(flipped)
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)
    recording = open_recording(path)
    with recording:
        list(recording.events())
        warnings = " ".join(recording.warnings())
    assert f"line {first + 1}: " in warnings


def test_terminal_escapes_in_names_never_reach_the_output(tmp_path):
    lines = fixture_lines("simple.jsonl")
    at = first_line(lines, "channels")
    hostile = "nsp\x1b]0;pwned\x07\x9b31m\u202e"

    def rename(data):
        data["channels"][0]["id"] = hostile
        data["channels"][0]["unit"] = "C\x1b[2J"

    lines = edited(lines, at, rename)
    path = tmp_path / "escapes.jsonl"
    path.write_bytes(b"".join(lines))
    # run_entry_points reports any control character in what a command printed.
    clean_everywhere(path)


def test_a_fixture_recording_goes_through_every_entry_point_cleanly(tmp_path):
    damaged = Damaged((RECORDINGS / "demo-v2.jsonl").read_bytes(), False, "demo-v2.jsonl")
    outcomes = check_damaged(damaged, cpu_limit_s=CPU_LIMIT_S)
    assert {o.kind for o in outcomes} == {"ok"}


@pytest.mark.parametrize("key", ["min_iterations", "min_duration_s", "warmup"])
def test_a_profile_setting_no_float_holds_is_no_setting(tmp_path, key):
    # float(10**400) from the header's free-form profile raised OverflowError.
    lines = fixture_lines("simple.jsonl")
    data = json.loads(lines[0])
    data["profile"].setdefault("run", {})[key] = "@@"
    lines[0] = json.dumps(data, separators=(",", ":")).replace('"@@"', "1" + "0" * 400).encode()
    lines[0] += b"\n"
    path = tmp_path / "profile.jsonl"
    path.write_bytes(b"".join(lines))
    clean_everywhere(path)
    assert measured_count(path) == measured_iterations("simple.jsonl")


def test_terminal_escapes_in_variant_names_never_reach_compare_or_report(tmp_path):
    # compare printed variant names raw (an OSC title sequence reached the terminal).
    text = (RECORDINGS / "variants.jsonl").read_text()
    hostile = json.dumps("w8a8\x1b]0;pwned\x07")[1:-1]
    path = tmp_path / "variants.jsonl"
    path.write_text(text.replace('"variant":"w8a8"', f'"variant":"{hostile}"'))
    clean_everywhere(path)


def test_a_variant_with_only_warmup_named_in_a_gate_error_is_never_raw(tmp_path):
    # compare's "cannot check the gate ... for variant NAME" error printed the name raw
    # (found by bench/fuzz_recordings.py, input 1:34216).
    lines = fixture_lines("simple.jsonl")
    at = first_line(lines, "iteration")

    def hostile(data):
        data["variant"] = "nsp\x1b]0;pwned\x07"

    path = tmp_path / "warmup-variant.jsonl"
    path.write_bytes(b"".join(edited(lines, at, hostile)))
    clean_everywhere(path)


def test_a_latency_that_makes_times_overflow_is_null_in_the_jsonl_export(tmp_path):
    # An iterations run with a latency of 1.8e308 s gives ends (and the next starts) of
    # infinity: export --format jsonl raised ValueError (bench/fuzz_recordings.py, 1:42939).
    lines = fixture_lines("demo-v2.jsonl")
    at = first_line(lines, "iterations")

    def huge(data):
        data["latency_s"] = 1.7976931348623157e308

    path = tmp_path / "huge-run.jsonl"
    path.write_bytes(b"".join(edited(lines, at, huge)))
    clean_everywhere(path)
    exported = subprocess.run(
        [sys.executable, "-m", "qtop", "export", str(path), "--format", "jsonl", "-o", "-"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    events = [
        json.loads(line, parse_constant=lambda token: pytest.fail(f"{token} in the export"))
        for line in exported.stdout.splitlines()
    ]
    overflowed = [e for e in events if e["kind"] == "iteration" and e["end"] is None]
    assert overflowed, "the damaged run's iterations are exported, their ends as null"


def test_overflowing_products_of_both_signs_give_no_drift_slope_instead_of_a_crash(tmp_path):
    # A latency of -1e308 and an end at 2**63 - 1 in one window: the drift slope's
    # products overflowed to -inf and +inf, and math.fsum raised ValueError in every
    # command that analyses (bench/fuzz_recordings.py, input 1:68819).
    lines = fixture_lines("sustained.jsonl")
    lines = edited(lines, 424, lambda data: data.update(latency_s=-1e308))
    lines = edited(lines, 438, lambda data: data.update(end=2**63 - 1))
    window = [*lines[:2], *lines[418:473], *lines[-2:]]
    path = tmp_path / "overflow.jsonl"
    path.write_bytes(b"".join(window))
    clean_everywhere(path)
