"""The live analysis over the model's series agrees with the analysis of the recording."""

from __future__ import annotations

import pytest

from qtop.analysis.session import analyze
from qtop.events import Keyframe, PhaseChange
from qtop.record.reader import open_recording
from qtop.stats.model import SessionModel
from qtop.stats.quantiles import RunningStats
from qtop.ui.derive import analyze_live, latency_histogram
from qtop.ui.panes.header import sample_rate
from qtop.ui.stream_log import StreamLog
from tests.ui.helpers import GLASSES, SUSTAINED


def fold(path) -> SessionModel:
    model = SessionModel()
    for event in open_recording(path).events():
        model.apply(event)
    return model


def test_live_thermal_and_energy_equal_the_recordings_analysis():
    expected = analyze(open_recording(SUSTAINED).events()).variants[0]
    live = analyze_live(fold(SUSTAINED), "")
    assert live.thermal.onset_t == pytest.approx(expected.thermal.onset_t, abs=1e-9)
    assert live.thermal.fit.tau_s == pytest.approx(expected.thermal.fit.tau_s, rel=1e-6)
    assert live.thermal.sustained_slowdown == pytest.approx(
        expected.thermal.sustained_slowdown, rel=1e-9
    )
    assert live.thermal.stability.ratio == pytest.approx(expected.thermal.stability.ratio)
    assert live.validity.valid and live.validity.iterations == 750
    # The meter series is thinned (811 ticks > 512 points), so energy is close, not equal.
    assert live.energy.energy_per_inference_j == pytest.approx(
        expected.energy.energy_per_inference_j, rel=0.01
    )
    assert live.energy.idle_power_w == pytest.approx(expected.energy.idle_power_w, rel=0.01)


def test_charging_is_found_live_too():
    live = analyze_live(fold(GLASSES), "w8a16")
    assert live.energy.charging and live.energy.energy_per_inference_j is None
    assert live.power_source.group == "power/battery"


def test_no_power_telemetry_is_a_note_not_a_zero():
    model = SessionModel()
    live = analyze_live(model, "")
    assert live.power_source is None and live.energy is None
    assert live.power_notes[-1].startswith("no power telemetry")


def test_histogram_counts_every_value_once():
    stats = RunningStats()
    stats.extend(v / 1000 for v in range(10, 110))
    histogram = latency_histogram(stats, 10)
    assert sum(histogram.counts) + histogram.above == 100
    assert histogram.above == 1 and histogram.exact
    # 99 evenly spread values in 10 bins: every bin holds 9 to 11 of them.
    assert all(9 <= count <= 11 for count in histogram.counts)
    assert histogram.low == 0.010 and histogram.high == stats.quantile(0.995)


def test_histogram_from_the_sketch_past_the_exact_limit():
    stats = RunningStats()
    stats.extend(0.02 + (i % 100) / 10000 for i in range(5000))
    assert not stats.is_exact
    histogram = latency_histogram(stats, 20)
    assert sum(histogram.counts) + histogram.above == 5000


def test_stream_log_counts_and_the_model_keeps_the_baseline_phase_across_keyframes():
    log = StreamLog(clock=lambda: 100.0)
    log.observe([PhaseChange(t=1.0, phase="baseline"), Keyframe(t=5.0, state={})])
    assert log.silent_for() == 0.0 and log.keyframes == 1 and log.batches == 1
    model = SessionModel()
    model.apply(PhaseChange(t=1.0, phase="baseline"))
    model.apply(PhaseChange(t=11.0, phase="measure"))
    assert model.phase_span("baseline", 11.0) == (1.0, 11.0)
    restored = SessionModel()
    restored.apply(Keyframe(t=11.0, state=model.snapshot()))
    assert restored.phase_span("baseline", 11.0) == (1.0, 11.0)


def test_sample_rate_follows_the_thinned_series():
    model = fold(SUSTAINED)
    assert sample_rate(model) == pytest.approx(5.0)
    model = fold(GLASSES)
    assert sample_rate(model) == pytest.approx(10.0)


def test_onsets_of_a_recording_and_a_clear_error_for_a_bad_file(tmp_path, capsys):
    from qtop.ui.onsets import main, recording_onsets

    expected = analyze(open_recording(SUSTAINED).events()).variants[0].thermal.onset_t
    assert recording_onsets(str(SUSTAINED)) == [("", expected)]
    assert recording_onsets(str(GLASSES)) == []
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    assert main([str(bad)]) == 2
    assert "not a qtop recording" in capsys.readouterr().err
