"""Interleaved blocks in the header's phase chip; the P90 bound in the latency pane."""

from __future__ import annotations

from qtop.analysis.early_stop import estimate
from qtop.events import Header, Iteration, PhaseChange
from qtop.live.progress import phase_eta_s
from qtop.stats.model import SessionModel
from qtop.ui.panes.header import phase_chip
from qtop.ui.panes.latency import early_stop_figure, figures_line


def _model(run: dict, count: int) -> SessionModel:
    model = SessionModel()
    model.apply(Header(t=0.0, profile={"name": "p", "run": run}))
    model.apply(PhaseChange(t=1.0, phase="measure", variant="w8a16", planned_iterations=200,
                            note="block 3/10"))  # fmt: skip
    for k in range(count):
        latency = 0.010 + (k % 10) * 0.001
        model.apply(Iteration(t=2.0 + k, seq=k, index=k, variant="w8a16", start=1.0 + k,
                              end=1.0 + k + latency, latency_s=latency))  # fmt: skip
    return model


def test_the_phase_chip_says_which_block_of_which_variant():
    model = _model({"order": "interleaved"}, 5)
    text, _ = phase_chip(model)
    assert text == "block 3/10 of w8a16 · measured 5/200"
    # A block's start gives no ETA for the variant's whole count.
    assert phase_eta_s(model) is None


def test_the_latency_figures_show_the_bound_and_the_margin_it_must_reach():
    model = _model({"stop": "early", "early_stop_margin_pct": 5.0}, 100)
    stats = model.latency_stats("measure", "w8a16")
    found = early_stop_figure(stats)
    assert found == estimate(sorted(stats.exact or []))
    text = figures_line(model, "w8a16").plain
    assert f"P90 ≤ {found.bound_s * 1e3:.3f} (99%) +{found.margin:.1%}/5%" in text
    # Below 64 iterations there is no bound yet.
    assert "P90 ≤" not in figures_line(_model({}, 63), "w8a16").plain
    plain_run = figures_line(_model({}, 100), "w8a16").plain
    assert f"P90 ≤ {found.bound_s * 1e3:.3f} (99%) +{found.margin:.1%}" in plain_run
    assert "/5%" not in plain_run
    # In a narrow pane the bound takes a line of its own.
    narrow = figures_line(_model({}, 100), "w8a16", narrow=True).plain.splitlines()
    assert narrow[-1] == f"P90 ≤ {found.bound_s * 1e3:.3f} (99%) +{found.margin:.1%}"
