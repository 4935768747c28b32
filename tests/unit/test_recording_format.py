"""Recording format version 2: packed runs, numbered texts, keyframe patches, the index."""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qtop.events import (
    ChannelInfo,
    Channels,
    End,
    Header,
    Iteration,
    Keyframe,
    Log,
    Marker,
    PhaseChange,
    Sample,
)
from qtop.live.profiler_timing import place_back_to_back
from qtop.record import writer as writer_module
from qtop.record.index import scan
from qtop.record.reader import open_recording
from qtop.record.seek import Seeker
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.stats.model import SessionModel

HEADER = Header(session_id="format", profile={"name": "format"}, device={"hostname": "b"})
CHANNELS = Channels(
    t=10.0,
    channels=(
        ChannelInfo(id="thermal/nsp", kind="temperature", unit="C"),
        ChannelInfo(id="cooling/cdsp", kind="cooling", unit="state", max_state=3),
    ),
)
OUTPUT = ("qnn-net-run build version: v2.45", "Executing Graphs", "Finished Executing Graphs")
FINISHED = "Graph g execution finished with result 0"


def processes(count: int, seed: int = 1, failing: frozenset[int] = frozenset()) -> list:
    """Events shaped like the demo's: per process, stdout lines then a burst of iterations."""
    rng = random.Random(seed)
    events: list = [CHANNELS, PhaseChange(t=10.0, phase="measure", planned_iterations=count)]
    wall = time.time()
    log_seq = iteration_seq = tick = 0
    t = 10.0
    for process in range(count):
        texts = [f"qnn-net-run pid:{1000 + process}", *OUTPUT[:2]]
        texts += [FINISHED] * 5 + [OUTPUT[2]]
        for text in texts:
            wall += rng.uniform(1e-5, 3e-3)
            events.append(Log(host_t=wall, seq=log_seq, text=text))
            log_seq += 1
        while 10.0 + tick * 0.1 <= t:
            values = {"thermal/nsp": round(40 + tick * 0.01, 1), "cooling/cdsp": 0.0}
            events.append(
                Sample(t=round(10.0 + tick * 0.1, 6), host_t=wall, seq=tick, values=values)
            )
            tick += 1
        latencies = [rng.randint(2000, 3000) / 1e6 for _ in range(5)]
        end = round(t + sum(latencies) + 0.02, 6)
        status = 1 if process in failing else 0
        for k, (span, latency) in enumerate(
            zip(place_back_to_back(latencies, t, end, 0.003), latencies, strict=True)
        ):
            events.append(
                Iteration(
                    t=span[1],
                    host_t=wall + k * 2.7e-6,
                    seq=iteration_seq,
                    index=iteration_seq,
                    start=span[0],
                    end=span[1],
                    latency_s=latency,
                    exit_status=status,
                    error="fastrpc error" if status else None,
                )
            )
            iteration_seq += 1
        t = end + 0.05
    events.append(End(t=t, reason="completed"))
    return events


@pytest.fixture
def frequent_keyframes(monkeypatch):
    """Keyframes every 700 events, chains of 3 patches, no share limit: small files get many."""
    monkeypatch.setattr(writer_module, "KEYFRAME_EVERY_EVENTS", 700)
    monkeypatch.setattr(writer_module, "KEYFRAME_CHAIN", 3)
    monkeypatch.setattr(writer_module, "KEYFRAME_SHARE", 1.0)


def write(path, events, header=HEADER) -> Session:
    """Write like a live session (keyframes and all) and return the session."""
    recorder = RecordingWriter(path, header)
    session = Session(source=None, recorder=recorder)  # type: ignore[arg-type]
    session.model.apply(header)
    for event in events[:-1]:
        session.consume(event)
    session.close_recording(events[-1])
    return session


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def test_a_demo_like_session_reads_back_event_for_event(tmp_path):
    events = processes(300)
    path = tmp_path / "r.jsonl"
    write(path, events)
    read = [e for e in open_recording(path).events() if not isinstance(e, Keyframe)]
    assert read == [HEADER, *events]


def test_runs_are_packed_and_repeated_output_is_numbered(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, processes(3))
    written = lines(path)
    kinds = [line["kind"] for line in written]
    assert kinds.count("iterations") == 3 and "iteration" not in kinds
    number = {line["text"]: line["id"] for line in written if line["kind"] == "text"}
    assert set(number) == {*OUTPUT, FINISHED}
    logs = [line["text"] for line in written if line["kind"] == "logs"]
    # A text is written whole the first time and numbered from its second sight on;
    # lines repeated in a row are [text, count]; a pid line differs each time, so it
    # stays whole.
    assert logs[0] == [
        "qnn-net-run pid:1000",
        *OUTPUT[:2],
        FINISHED,
        [number[FINISHED], 4],
        OUTPUT[2],
    ]
    assert logs[1] == [
        "qnn-net-run pid:1001",
        number[OUTPUT[0]],
        number[OUTPUT[1]],
        [number[FINISHED], 5],
        number[OUTPUT[2]],
    ]
    assert logs[2][0] == "qnn-net-run pid:1002" and logs[2][1:] == logs[1][1:]
    burst = next(line for line in written if line["kind"] == "iterations")
    assert burst["n"] == 5 and "start0" in burst and "end" not in burst
    assert set(burst["latency_s"]) == {"micro"}
    # Every line is a JSON object whose first key is the kind, and the second t when timed.
    assert all(next(iter(line)) == "kind" for line in written)
    assert all(list(line)[1] == "t" for line in written if line["kind"] == "iterations")


def test_a_failed_process_keeps_its_output_whole(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, processes(4, failing=frozenset({3})))
    logs = [line for line in lines(path) if line["kind"] == "logs"]
    assert any(isinstance(item, int | list) for item in logs[2]["text"])
    assert logs[3]["text"] == ["qnn-net-run pid:1003", *OUTPUT[:2], *[FINISHED] * 5, OUTPUT[2]]


def test_stderr_and_warnings_stay_lines_of_their_own(tmp_path):
    path = tmp_path / "r.jsonl"
    noisy = [
        Log(host_t=1.5, seq=0, stream="stderr", text="oops"),
        Log(host_t=1.6, seq=1, stream="stderr", text="oops"),
        Log(t=11.0, host_t=1.7, seq=2, stream="qtop", level="warning", text="slow sensor"),
        End(t=12.0),
    ]
    write(path, noisy)
    logs = [line for line in lines(path) if line["kind"] == "log"]
    assert [(line["stream"], line["text"]) for line in logs] == [
        ("stderr", "oops"),
        ("stderr", "oops"),
        ("qtop", "slow sensor"),
    ]


def test_samples_are_lists_in_channel_order_unless_their_keys_differ(tmp_path):
    path = tmp_path / "r.jsonl"
    odd = Sample(t=11.0, seq=1, values={"cooling/cdsp": 1.0, "thermal/nsp": 40.0})
    events = [
        CHANNELS,
        Sample(t=10.5, seq=0, values={"thermal/nsp": 40.0, "cooling/cdsp": None}),
        odd,
        End(t=12.0),
    ]
    write(path, events)
    samples = [line for line in lines(path) if line["kind"] == "sample"]
    assert samples[0]["v"] == [40.0, None] and "values" not in samples[0]
    assert samples[1]["values"] == {"cooling/cdsp": 1.0, "thermal/nsp": 40.0}
    assert [e for e in open_recording(path).events()][1:] == events


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
times = st.none() | finite
texts = st.sampled_from(["a", "b", "same line", "", "é\\u001b[31m", "x" * 3000])


@st.composite
def sequences(draw):
    """Runs of iterations and output lines mixed with other events, any numbers at all."""
    events: list = [CHANNELS]
    seq = {"log": 0, "iteration": 0, "sample": 0}
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["logs", "iterations", "sample", "marker"]))
        for _ in range(draw(st.integers(1, 6))):
            if kind == "logs":
                events.append(
                    Log(
                        host_t=draw(times),
                        seq=seq["log"],
                        text=draw(texts),
                        stream=draw(st.sampled_from(["stdout", "stdout", "stderr"])),
                    )
                )
                seq["log"] += 1
            elif kind == "iterations":
                start = draw(finite)
                end = draw(st.sampled_from([start, draw(finite)]))
                events.append(
                    Iteration(
                        t=draw(st.sampled_from([end, end, None, draw(finite)])),
                        host_t=draw(times),
                        seq=seq["iteration"],
                        index=draw(st.integers(0, 9)),
                        phase=draw(st.sampled_from(["warmup", "measure"])),
                        start=start,
                        end=end,
                        latency_s=draw(finite),
                        exit_status=draw(st.integers(0, 1)),
                        metrics=draw(st.dictionaries(st.sampled_from("xy"), finite, max_size=2)),
                        latency_uncertainty_s=draw(st.none() | finite),
                    )
                )
                seq["iteration"] += draw(st.sampled_from([1, 1, 1, 2]))
            elif kind == "sample":
                events.append(
                    Sample(
                        t=draw(times),
                        host_t=draw(times),
                        seq=seq["sample"],
                        values={
                            "thermal/nsp": draw(st.none() | finite),
                            "cooling/cdsp": draw(st.none() | finite),
                        },
                    )
                )
                seq["sample"] += 1
            else:
                events.append(Marker(t=draw(times), label=draw(texts)))
    events.append(End(t=1.0))
    return events


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequences())
def test_any_sequence_of_events_reads_back_exactly(tmp_path_factory, events):
    path = tmp_path_factory.mktemp("any") / "r.jsonl"
    with RecordingWriter(path, HEADER) as recorder:
        for event in events[:-1]:
            recorder.write(event)
        recorder.close(events[-1])
    assert list(open_recording(path).events()) == [HEADER, *events]


def test_negative_zero_keeps_its_sign_in_packed_columns(tmp_path):
    # Found by the property test: -0.0 equals 0.0, so a run or a millionths column lost the
    # sign and a keyframe's model differed from the model read back.
    iterations = [
        Iteration(t=0.0, seq=k, phase="warmup", start=start, end=0.0, latency_s=latency)
        for k, (start, latency) in enumerate([(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0)])
    ]
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path, HEADER) as recorder:
        for event in iterations:
            recorder.write(event)
        recorder.close(End(t=1.0))
    read = [e for e in open_recording(path).events() if isinstance(e, Iteration)]
    signs = [(str(e.start), str(e.latency_s)) for e in read]
    assert signs == [("0.0", "0.0"), ("-0.0", "0.0"), ("0.0", "-0.0")]


def test_time_time_host_times_are_exact_to_the_bit(tmp_path):
    path = tmp_path / "r.jsonl"
    now = time.time()
    run = [Log(host_t=now + k * 1.234567e-3, seq=k, text="x") for k in range(200)]
    write(path, [*run, End(t=1.0)])
    assert [e.host_t for e in open_recording(path).events() if isinstance(e, Log)] == [
        e.host_t for e in run
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            b'{"kind":"iterations","t":1.0,"n":99999999,"seq":0,"start0":1.0,"latency_s":[0.1]}',
            "iterations.n: 99999999 is not a run length",
        ),
        (
            b'{"kind":"iterations","t":1.0,"n":2,"seq":0,"start0":1.0,"latency_s":[0.1]}',
            "iterations.latency_s: 1 values for 2 events",
        ),
        (
            b'{"kind":"iterations","t":1.0,"n":2,"seq":0,"start0":1.0,"latency_s":{"micro":[1e400,1]}}',
            "iterations.latency_s",
        ),
        (
            b'{"kind":"iterations","t":1.0,"n":2,"seq":0,"start0":1.0,"latency_s":{"micro":[1'
            + b"0" * 400
            + b",1]}}",
            "beyond a float's range",
        ),
        (
            b'{"kind":"iterations","t":1.0,"n":2,"seq":0,"start0":1.0,"latency_s":[1,2],"phase":{"runs":[["measure",9]]}}',
            "iterations.phase: a run of 9 after 0 of 2 values",
        ),
        (
            b'{"kind":"iterations","t":1.0,"n":2,"seq":0,"start0":1.0,"latency_s":[1,2],"phase":{"runs":[[7,2]]}}',
            "Expected `str`, got `int`",
        ),
        (
            b'{"kind":"iterations","t":1.0,"n":2,"seq":0,"latency_s":[1,2]}',
            "iterations: start0 or start is needed",
        ),
        (
            b'{"kind":"logs","n":3,"host_t":1.0,"host_dt":[1],"seq":0,"text":["a",["b",2]]}',
            "logs.host_dt: 1 values for 2 events",
        ),
        (b'{"kind":"logs","n":2,"seq":0,"text":[999,"a"]}', "text 999 has no text line before it"),
        (b'{"kind":"logs","n":2,"seq":0,"text":[["a",100000000000]]}', "logs.text: a repeat of"),
        (b'{"kind":"logs","n":1,"seq":"x","text":["a"]}', "logs.seq: Expected `int`"),
        (b'{"kind":"sample","t":1.0,"seq":0,"v":[1.0]}', "sample.v: 1 values for the 2 channels"),
        (b'{"kind":"sample","t":NaN,"seq":0}', "not JSON"),
        (b'{"kind":"iteration","t":1.0,"end":1e999}', "iteration.end"),
        (b'{"kind":"text","id":"one","text":"a"}', "text.id: Expected `int`"),
    ],
)
def test_damaged_lines_are_counted_and_named_never_fatal(tmp_path, line, problem):
    path = tmp_path / "r.jsonl"
    good = tmp_path / "good.jsonl"
    write(
        good, [CHANNELS, Marker(t=10.5, label="before"), Marker(t=11.0, label="after"), End(t=12.0)]
    )
    raw = good.read_bytes().splitlines(keepends=True)
    at = next(i for i, data in enumerate(raw) if b'"after"' in data)
    path.write_bytes(b"".join([*raw[:at], line + b"\n", *raw[at:]]))
    recording = open_recording(path)
    labels = [e.label for e in recording.events() if isinstance(e, Marker)]
    assert labels == ["before", "after"]
    (warning,) = recording.warnings()
    assert f"skipped 1 undecodable line(s): line {at + 1}: " in warning
    assert problem in warning


def test_the_index_line_matches_a_scan_of_the_file(tmp_path, frequent_keyframes):
    path = tmp_path / "r.jsonl"
    events = processes(400)
    events.insert(300, Marker(t=events[299].t, label="look"))
    write(path, events)
    written = open_recording(path).index()
    assert written.from_index_line and len(written.keyframes) >= 2
    data = path.read_bytes()
    body = data[: data.rindex(b'{"kind":"index"')]
    offsets, position = [], 0
    for raw in body.splitlines(keepends=True):
        offsets.append((position, raw.rstrip(b"\n")))
        position += len(raw)
    scanned = scan(offsets)
    for field in ("keyframes", "marks", "texts", "channels", "t_start", "t_end", "lines"):
        assert getattr(scanned, field) == getattr(written, field), field
    # Without the index line (a crashed writer) the reader scans and finds the same.
    crashed = tmp_path / "crashed.jsonl"
    crashed.write_bytes(body)
    rebuilt = open_recording(crashed).index()
    assert not rebuilt.from_index_line and rebuilt.keyframes == written.keyframes


def test_every_keyframe_is_the_model_at_its_place(tmp_path, frequent_keyframes):
    path = tmp_path / "r.jsonl"
    write(path, processes(500))
    kinds = [
        ("state" in line, "base" in line) for line in lines(path) if line["kind"] == "keyframe"
    ]
    assert (True, False) in kinds and (False, True) in kinds
    model = SessionModel()
    keyframes = 0
    for event in open_recording(path).events(keyframes=True):
        if isinstance(event, Keyframe):
            assert json.dumps(event.state) == json.dumps(model.snapshot())
            keyframes += 1
        else:
            model.apply(event)
    assert keyframes == len(kinds)


def folded(path, target: float) -> SessionModel:
    model = SessionModel()
    for event in open_recording(path).events(keyframes=False):
        if event.t is not None and event.t > target:
            break
        model.apply(event)
    return model


def test_the_model_at_any_time_equals_folding_every_event_to_it(tmp_path, frequent_keyframes):
    path = tmp_path / "r.jsonl"
    events = processes(500)
    write(path, events)
    seeker = Seeker(open_recording(path))
    keyframe_times = [t for t, _ in seeker.recording.index().keyframes]
    for target in (0.0, 10.05, keyframe_times[1], keyframe_times[-1] + 0.001, 21.3, events[-1].t):
        model = seeker.model_at(target)
        assert json.dumps(model.snapshot()) == json.dumps(folded(path, target).snapshot()), target


def test_a_damaged_keyframe_costs_time_not_a_wrong_model(tmp_path, frequent_keyframes):
    path = tmp_path / "r.jsonl"
    write(path, processes(500))
    index = open_recording(path).index()
    offset = index.keyframes[2][1]
    data = bytearray(path.read_bytes())
    # Same length, so every offset in the index stays right: break the patch's tag.
    at = data.index(b'"patch":{"d"', offset) + len(b'"patch":{"')
    data[at] = ord("?")
    path.write_bytes(bytes(data))
    seeker = Seeker(open_recording(path))
    target = index.keyframes[3][0] - 0.01
    model = seeker.model_at(target)
    assert json.dumps(model.snapshot()) == json.dumps(folded(path, target).snapshot())


def test_held_events_reach_the_file_within_the_hold_time(tmp_path):
    path = tmp_path / "r.jsonl"
    recorder = RecordingWriter(path, HEADER)
    recorder.write(Iteration(t=1.0, seq=0, start=0.5, end=1.0, latency_s=0.5))
    assert b'"iteration"' not in path.read_bytes()
    recorder.flush_if_due(now=time.monotonic() + writer_module.HOLD_S)
    assert b'"iteration"' in path.read_bytes()
    recorder.close()


def test_a_version_1_recording_with_keyframes_still_seeks(fixtures_dir):
    path = fixtures_dir / "recordings" / "sustained.jsonl"
    recording = open_recording(path)
    index = recording.index()
    assert recording.header.version == 1 and not index.from_index_line
    target = index.keyframes[-1][0] + 5.0
    model = Seeker(recording).model_at(target)
    expected = folded(path, target)
    assert model.latency_stats("measure", "").count == expected.latency_stats("measure", "").count
    assert model.sample_count == expected.sample_count and model.t_last == expected.t_last


def test_the_header_names_the_format_the_file_is_written_in(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, [End(t=1.0)], header=Header(session_id="old", version=1))
    assert lines(path)[0]["version"] == 2
    assert open_recording(path).header.session_id == "old"


def test_export_jsonl_writes_one_event_per_line_as_version_1_did(tmp_path, capsys):
    from qtop.cli import main

    events = processes(5)
    path = tmp_path / "r.jsonl"
    write(path, events)
    assert main(["export", str(path), "--format", "jsonl", "-o", "-"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    header = open_recording(path).header
    assert out == [event.to_dict() for event in [header, *events]]


def test_host_times_too_far_apart_for_64_bit_steps_are_written_as_numbers(tmp_path):
    # Found by the property test: a step of 9.2e18 units of 100 ns does not fit in 64 bits.
    path = tmp_path / "r.jsonl"
    run = [
        Iteration(t=0.0, host_t=0.0, seq=0, phase="warmup"),
        Iteration(t=0.0, host_t=922337203686.0, seq=1, phase="warmup"),
    ]
    write(path, [*run, End(t=1.0)])
    packed = next(line for line in lines(path) if line["kind"] == "iterations")
    assert packed["host_t"] == [0.0, 922337203686.0] and "host_dt" not in packed
    assert [e for e in open_recording(path).events()][1:] == [*run, End(t=1.0)]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequences())
def test_keyframes_of_any_sequence_are_the_model_at_their_place(tmp_path_factory, events):
    path = tmp_path_factory.mktemp("keyframes") / "r.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer_module, "KEYFRAME_EVERY_EVENTS", 3)
        patch.setattr(writer_module, "KEYFRAME_MIN_EVENTS", 3)
        patch.setattr(writer_module, "KEYFRAME_CHAIN", 2)
        patch.setattr(writer_module, "KEYFRAME_SHARE", 1.0)
        write(path, events)
    model = SessionModel()
    for event in open_recording(path).events(keyframes=True):
        if isinstance(event, Keyframe):
            restored = SessionModel()
            restored.apply(event)
            assert json.dumps(restored.snapshot()) == json.dumps(model.snapshot())
        else:
            model.apply(event)


def test_a_host_time_with_more_decimals_than_its_steps_count_in_still_reads(tmp_path):
    # qtop writes host_t to 7 decimals when host_dt goes with it; another writer may not.
    path = tmp_path / "r.jsonl"
    good = tmp_path / "good.jsonl"
    write(good, [CHANNELS, End(t=12.0)])
    header, *rest = good.read_bytes().splitlines(keepends=True)
    line = (
        b'{"kind":"logs","n":3,"host_t":1.123456789,"host_dt":[10,25],"seq":4,"text":["a","b","c"]}'
    )
    path.write_bytes(b"".join([header, line + b"\n", *rest]))
    recording = open_recording(path)
    logs = [e for e in recording.events() if isinstance(e, Log)]
    assert [log.text for log in logs] == ["a", "b", "c"]
    assert [log.host_t for log in logs] == pytest.approx([1.123456789, 1.123457789, 1.123460289])
    assert recording.warnings() == []
