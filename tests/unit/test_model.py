import json

import pytest
from fixtures.sessions import CDSP, NSP

from qtop.events import Keyframe, Link
from qtop.stats.model import SessionModel


def fold(events):
    model = SessionModel()
    for event in events:
        model.apply(event)
    return model


def test_model_counts_and_percentiles_of_the_simple_session(simple_events):
    model = fold(simple_events)
    measured = model.latency_stats("measure", "")
    assert measured.count == 100
    assert measured.quantile(0.5) == pytest.approx(0.0595)
    assert measured.quantile(0.95) == pytest.approx(0.10405)
    assert model.latency_stats("warmup", "").count == 5
    assert model.done("measure", "") == 100
    assert model.phase.phase == "done"
    assert model.end.reason == "completed"


def test_channel_last_min_max(simple_events):
    model = fold(simple_events)
    nsp = model.channel_stats[NSP]
    assert nsp.minimum == 40.0
    assert nsp.maximum == pytest.approx(40.0 + 0.1 * (model.sample_count - 1))
    assert model.channel_stats[CDSP].maximum == 1.0
    assert model.hottest_zone("nsp")[0] == NSP
    assert model.missed_ticks == 0


def test_snapshot_restore_is_exact_at_every_point(simple_events):
    live = SessionModel()
    for index, event in enumerate(simple_events):
        live.apply(event)
        if index % 37 == 0:
            restored = SessionModel()
            restored.apply(Keyframe(state=json.loads(json.dumps(live.snapshot()))))
            assert restored.snapshot() == live.snapshot()
    # Continuing from a restored state gives the same model as never stopping.
    middle = len(simple_events) // 2
    first_half = fold(simple_events[:middle])
    resumed = SessionModel()
    resumed.restore(json.loads(json.dumps(first_half.snapshot())))
    for event in simple_events[middle:]:
        resumed.apply(event)
    assert resumed.snapshot() == fold(simple_events).snapshot()


def test_empty_keyframe_resets_the_model(simple_events):
    model = fold(simple_events)
    model.apply(Keyframe(state={}))
    assert model.snapshot() == SessionModel().snapshot()


def test_link_gaps_and_missed_ticks_are_counted():
    from qtop.events import Sample

    model = fold(
        [
            Sample(t=1.0, seq=0, values={}),
            Link(t=1.1, state="disconnected"),
            Link(t=3.0, state="reconnected"),
            Link(t=3.0, state="gap", gap_from=1.2, gap_to=2.7),
            Sample(t=3.1, seq=5, values={}),
        ]
    )
    assert (model.link.disconnects, model.link.reconnects) == (1, 1)
    assert model.link.gap_seconds == pytest.approx(1.5)
    assert model.missed_ticks == 4


def test_failed_iterations_do_not_enter_latency():
    from qtop.events import Iteration

    model = fold(
        [
            Iteration(t=1.0, latency_s=0.5, exit_status=0),
            Iteration(t=2.0, latency_s=0.001, exit_status=1, error="fastrpc memory map failed"),
        ]
    )
    assert model.latency_stats("measure", "").count == 1
    assert model.failed("measure", "") == 1
    assert model.recent_failures[-1].error == "fastrpc memory map failed"


def _runs():
    from qtop.events import IterationRun, LogRun

    iterations = IterationRun(
        hosts=[1.0, None, 3.0, 4.0],
        seq=7,
        index=[0, 1, 0, 1],
        phase=["warmup", "warmup", "measure", "measure"],
        variant=["a", "a", "a", "b"],
        starts=[0.0, 1.0, 2.0, 3.0],
        ends=[1.0, 2.0, 3.0, 2.5],
        latency=[1.0, 1.0, 1.0, 0.5],
        status=[0, 3, 0, 0],
        error=[None, "boom", None, None],
        metrics=[None, None, {"ttft_s": 0.2}, None],
    )
    successful = IterationRun(
        hosts=lambda: [5.0, 5.1, 5.2, 5.3, 5.4],
        seq=11,
        index=[0, 1, 0, 1, 0],
        phase=["warmup", "warmup", "measure", "measure", "measure"],
        variant=["a", "a", "a", "a", "c"],
        starts=[4.0, 4.1, 4.2, 4.3, 4.4],
        ends=[4.1, 4.2, 4.3, 4.4, 4.5],
        latency=[0.1, 0.1, 0.1, 0.1, 0.1],
        status=[0] * 5,
        error=[None] * 5,
        metrics=[None] * 5,
    )
    logs = LogRun(
        hosts=[float(k) for k in range(1500)], seq=3, texts=[f"l{k}" for k in range(1500)]
    )
    return iterations, successful, logs


def test_a_packed_run_folds_to_the_same_state_as_its_events():
    from qtop.events import Sample

    before = [Sample(t=0.5, seq=0, values={NSP: 40.0})]
    for run in _runs():
        one_by_one = fold(before)
        for event in run.events():
            one_by_one.apply(event)
        whole = fold(before)
        whole.apply_run(run)
        assert json.dumps(whole.snapshot()) == json.dumps(one_by_one.snapshot())
    iterations, _, _ = _runs()
    assert fold(iterations.events()).recent_failures[-1].error == "boom"


def test_runs_of_output_lines_applied_at_once_keep_what_one_at_a_time_keeps():
    from qtop.events import Log, LogRun
    from qtop.stats.model import LOG_LINES_KEPT

    lengths = [3, 700, 1, 250, 40, 1200, 9, 300, 2]
    runs, seq = [], 0
    for length in lengths:
        texts = [f"r{seq}.{k}" for k in range(length)]
        runs.append(LogRun(hosts=[float(seq + k) for k in range(length)], seq=seq, texts=texts))
        seq += length
    before = [Log(host_t=0.0, seq=0, text="first")]
    for cut in range(len(runs) + 1):
        one_at_a_time, at_once = fold(before), fold(before)
        for run in runs:
            one_at_a_time.apply_run(run)
        at_once.apply_log_runs(runs[:cut])
        at_once.apply_log_runs(runs[cut:])
        assert at_once.log_count == one_at_a_time.log_count == sum(lengths) + 1
        assert at_once.event_count == one_at_a_time.event_count
        kept = [log.text for log in at_once.logs]
        assert kept == [log.text for log in one_at_a_time.logs]
        assert len(kept) == LOG_LINES_KEPT and kept[-1] == runs[-1].texts[-1]
        assert json.dumps(at_once.snapshot()) == json.dumps(one_at_a_time.snapshot())
