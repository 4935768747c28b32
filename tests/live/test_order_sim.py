"""A sweep on a heating NPU: sequential order turns drift into a variant gap, interleaving not.

The simulated board runs two PrismML context binaries whose cool latencies are known
(w8a8 4.2 ms and w8a16 5.6 ms per inference, 3% jitter), and its NPU heats past the
passive trip during the run, which slows every inference by 8% per cdsp step. The true
gap between the variants is what their processes take at the same temperature: the
simulator's ground truth gives each process's inferences and the slowdown each ran at.
"""

from __future__ import annotations

import dataclasses
import statistics

import pytest

from qtop.analysis.session import analyze
from qtop.record.reader import open_recording
from qtop.sim import start_sim
from qtop.sim.config import LatencyConfig, ThermalConfig, default_config

from .sim_runs import custom, run_profile, truth

CONFIG = dataclasses.replace(
    default_config("evk"),
    latency=LatencyConfig(sigma=0.03, warmup_extra_us=(), init_ms=5.0, deinit_ms=1.0),
    # A governor that, once throttling, does not let go within the run: the NPU's slowdown
    # grows while it heats and then holds, a drift without the limit cycle around the trip.
    thermal=ThermalConfig(hysteresis_c=40.0),
)
COMMAND = (
    'qnn-net-run --backend libQnnHtp.so --retrieve_context "$QTOP_SIM_ROOT/$CONTEXT" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" '
    '--output_dir "$QTOP_SIM_ROOT/tmp/out" --num_inferences 40'
)
SWEEP = f"""\
  command: '{COMMAND}'
  warmup: 2
  iterations: 60
  order: {{order}}
  block: 5
  variants:
    - {{{{name: w8a8, env: {{{{CONTEXT: data/local/tmp/prismml/prismml_w8a8_seq64.bin}}}}}}}}
    - {{{{name: w8a16, env: {{{{CONTEXT: data/local/tmp/prismml/prismml_w8a16_seq64.bin}}}}}}}}
"""
# Thermal seconds per wall second: the NPU reaches its trip late in the first half of the sweep.
TIME_SCALE = 14


def _cool_seconds(record: dict) -> float:
    """A process's wall time had every inference run at the cool clock."""
    config = CONFIG.latency
    inferences = sum(
        lat / mult
        for lat, mult in zip(record["latencies_us"], record["latency_multiplier"], strict=True)
    )
    return inferences / 1e6 + (config.init_ms + config.deinit_ms) / 1e3


async def _sweep(tmp_path, order: str) -> tuple[float, float, dict[str, float]]:
    """(measured gap of the P50s, true gap, each variant's P50 change) of one sweep."""
    async with start_sim(tmp_path / f"sim-{order}", config=CONFIG, time_scale=TIME_SCALE) as sim:
        profile = custom(sim, SWEEP.format(order=order))
        path = tmp_path / f"{order}.jsonl"
        events = await run_profile(profile, path)
        records = truth(sim, "qnn-net-run")
    assert events[-1]["reason"] == "completed"
    # The NPU did heat past its trip: some inferences ran throttled.
    assert max(m for r in records for m in r["latency_multiplier"]) > 1.1
    cool = {
        name: statistics.median(
            _cool_seconds(r) for r in records if f"prismml_{name}_seq64" in " ".join(r["argv"])
        )
        for name in ("w8a8", "w8a16")
    }
    analysis = analyze(open_recording(path).events())
    p50 = {v.name: v.measured.p50_s for v in analysis.variants}
    drift = {v.name: v.drift.change for v in analysis.variants if v.drift is not None}
    return p50["w8a16"] / p50["w8a8"] - 1, cool["w8a16"] / cool["w8a8"] - 1, drift


@pytest.mark.slow
async def test_interleaving_recovers_the_true_gap_that_sequential_order_distorts(tmp_path):
    sequential, truth_gap, _ = await _sweep(tmp_path, "sequential")
    interleaved, truth_again, drift = await _sweep(tmp_path, "interleaved")
    # Each sweep's truth: its processes' cool latencies (with the simulator's 3% jitter).
    assert truth_gap == pytest.approx(230 / 174 - 1, abs=0.01)
    assert truth_again == pytest.approx(230 / 174 - 1, abs=0.01)
    print(
        f"true gap {truth_gap:+.2%}; sequential {sequential:+.2%}; interleaved {interleaved:+.2%};"
        f" drift per variant (interleaved) {drift}"
    )
    # Sequential: the later variant ran on the hotter NPU, a gap well beyond the truth.
    assert sequential - truth_gap > 0.06
    # Interleaved: within 3% of the truth (ratio of the two P50s against the true ratio).
    assert abs((1 + interleaved) / (1 + truth_again) - 1) < 0.03
    # Both variants saw the heating, alike.
    assert all(change > 0.05 for change in drift.values())
