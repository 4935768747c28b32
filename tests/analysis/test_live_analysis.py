"""The live analysis over the model's series agrees with the analysis of the recording."""

from __future__ import annotations

import pytest

from qtop.analysis.live import analyze_live, capture, latency_histogram
from qtop.analysis.onsets import main, recording_onsets
from qtop.analysis.session import analyze
from qtop.analysis.thermal import DecayFit, fit_problem
from qtop.events import Keyframe
from qtop.record.reader import open_recording
from qtop.stats.model import SessionModel
from qtop.stats.quantiles import RunningStats
from tests.ui.helpers import GLASSES, SIMPLE, SUSTAINED


def fold(path, until_t: float | None = None) -> SessionModel:
    model = SessionModel()
    for event in open_recording(path).events():
        if until_t is not None and event.t is not None and event.t > until_t:
            break
        model.apply(event)
    return model


def test_live_thermal_and_energy_equal_the_recordings_analysis():
    expected = analyze(open_recording(SUSTAINED).events()).variants[0]
    live = analyze_live(capture(fold(SUSTAINED), ""))
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
    # The chart's rolling P50 is one point per iteration, at its midpoint.
    assert len(live.rolling_p50) == 750


def test_the_capture_is_a_copy_the_model_can_move_on_from():
    model = fold(SUSTAINED, until_t=5100.0)
    inputs = capture(model, "")
    before = analyze_live(inputs)
    for event in open_recording(SUSTAINED).events():
        if event.t is not None and event.t > 5100.0 and not isinstance(event, Keyframe):
            model.apply(event)
    after = analyze_live(inputs)
    assert after.t_end == before.t_end and after.validity == before.validity
    assert analyze_live(capture(model, "")).t_end > before.t_end


def test_charging_is_found_live_too():
    live = analyze_live(capture(fold(GLASSES), "w8a16"))
    assert live.energy.charging and live.energy.energy_per_inference_j is None
    assert live.power_source.group == "power/battery"


def test_no_power_telemetry_is_a_note_not_a_zero():
    live = analyze_live(capture(SessionModel(), ""))
    assert live.power_source is None and live.energy is None
    assert live.power_notes[-1].startswith("no power telemetry")


def fit(r_squared: float | None, converged: bool = True, note: str = "") -> DecayFit:
    return DecayFit(tau_s=12.0, l0_s=0.02, linf_s=0.03, rmse_s=0.001, r_squared=r_squared,
                    points=100, converged=converged, note=note)  # fmt: skip


def test_tau_is_only_given_with_a_fit_that_explains_the_data():
    assert fit_problem(fit(0.93)) is None
    assert fit_problem(fit(0.02)) == "R² 0.02, below 0.5"
    assert fit_problem(fit(None)) == "latency flat after the onset"
    assert fit_problem(fit(0.9, False, "latency was still rising when the run ended: ...")) == (
        "latency still rising at the end"
    )
    assert fit_problem(fit(0.9, False, "latency stepped up and stayed")) == (
        "no gradual decay (a step)"
    )
    assert fit_problem(None) == "too few iterations after the onset"


def test_the_report_gives_tau_with_its_r_squared_or_says_the_fit_failed():
    from qtop.analysis.render import thermal_lines

    thermal = analyze(open_recording(SUSTAINED).events()).variants[0].thermal
    text = "\n".join(thermal_lines(thermal, None))
    assert f"decay fit: tau 19.6 s, R² {thermal.fit.r_squared:.3f}," in text
    from dataclasses import replace

    poor = replace(thermal, fit=replace(thermal.fit, r_squared=0.02))
    text = "\n".join(thermal_lines(poor, None))
    assert "decay fit: failed (R² 0.02, below 0.5): no tau" in text and "tau 19.6" not in text


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


def test_onsets_of_a_recording_and_a_clear_error_for_a_bad_file(tmp_path, capsys):
    expected = analyze(open_recording(SUSTAINED).events()).variants[0].thermal.onset_t
    assert recording_onsets(str(SUSTAINED)) == [("", expected)]
    assert recording_onsets(str(GLASSES)) == []
    assert recording_onsets(str(SIMPLE)) == []
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    assert main([str(bad)]) == 2
    assert "not a qtop recording" in capsys.readouterr().err
