"""Energy per variant of an interleaved run: each variant's own blocks, not the span between."""

from __future__ import annotations

import pytest
from synthetic_streams import (
    BATTERY_POWER,
    BATTERY_STATUS,
    METER_INFO,
    METER_POWER,
    POWER_INFO,
    STATUS_INFO,
    back_to_back,
    phase,
    stream,
    ticks,
)

from qtop.analysis.session import analyze

BLOCK_S = 5.0
COOLDOWN_S = 1.0
IDLE_W = 1.0
DRAW_W = {"small": 4.0, "large": 7.0}
# small, large, small, large, small, large: 50 iterations of 0.1 s each, 1 s idle between.
ORDER = ["small", "large"] * 3


def _block_start(k: int) -> float:
    return 2.0 + k * (BLOCK_S + COOLDOWN_S)


def _draw(t: float) -> float:
    """The draw at t, with ±10 mW of alternating noise (a real sensor's readings change at
    every update, which is how qtop finds its refresh period); it sums to 0 over a block."""
    noise = 0.01 if round(t * 10) % 2 else -0.01
    for k, variant in enumerate(ORDER):
        if _block_start(k) <= t + 1e-9 < _block_start(k) + BLOCK_S:
            return DRAW_W[variant] + noise
    return IDLE_W + noise


def _interleaved(infos, power_of, dt: float = 0.1) -> list:
    parts = []
    for k, variant in enumerate(ORDER):
        start = _block_start(k)
        parts.append([phase(start, "measure", variant)])
        parts.append(back_to_back(start, [0.1] * 50, variant=variant, first_index=50 * k))
    end = _block_start(len(ORDER))
    return stream(infos, *parts, ticks(0.0, end, dt, power_of))


def test_each_variant_gets_the_energy_of_its_own_blocks():
    events = _interleaved([METER_INFO], lambda t: {METER_POWER: _draw(t)})
    variants = {v.name: v for v in analyze(events).variants}
    for name, watts in DRAW_W.items():
        energy = variants[name].energy
        assert energy.available and energy.valid
        # Three 5 s blocks each; the other variant's blocks and the idle gaps left out.
        assert energy.span_s == pytest.approx(3 * BLOCK_S)
        assert energy.energy_j == pytest.approx(watts * 3 * BLOCK_S, rel=1e-9)
        assert energy.energy_per_inference_j == pytest.approx(watts * 0.1, rel=1e-9)
        assert energy.readings == 150
        # compare's noise estimate: one (joules, inferences) pair per block.
        assert [inferences for _, inferences in energy.blocks] == [50, 50, 50]
        assert [joules for joules, _ in energy.blocks] == pytest.approx([watts * BLOCK_S] * 3)
        assert not any("neighbouring blocks" in w for w in energy.warnings)


def test_a_sensor_slow_against_the_blocks_is_warned_about():
    # A fuel gauge updating once a second: a 5 s block holds five readings, each of which
    # may straddle a block boundary.
    def gauge(t: float) -> dict[str, float]:
        held = int(t + 1e-9)
        return {BATTERY_POWER: _draw(held + 0.1 * (held % 2)), BATTERY_STATUS: -1.0}

    events = _interleaved([POWER_INFO, STATUS_INFO], gauge)
    energy = analyze(events).variants[0].energy
    assert energy.refresh_period_s == pytest.approx(1.0, rel=0.05)
    warning = next(w for w in energy.warnings if "neighbouring blocks" in w)
    assert "every 1 s and a block lasts about 5 s" in warning
    assert "at least 10 s long (run.block) or give run.block_cooldown" in warning
    # 15 s of blocks at one update a second: too few updates for a valid figure.
    assert energy.readings == 15
    assert not energy.valid
