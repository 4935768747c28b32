"""The figures of a paced run, for reports, ``compare`` and the live view.

``PacingSummary`` puts a ``PacingFold`` of the measured iterations of one
variant next to what the profile asked for (schedule, target rate, deadline),
read from the recording's header, so a recording says it all by itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from qtop.events import Header
from qtop.stats.model import SessionModel
from qtop.stats.pacing import PacingFold


@dataclass(frozen=True, slots=True)
class PacingSummary:
    """Deadline misses, start lateness, achieved rate and duty cycle of one variant."""

    schedule: str
    target_rate_hz: float | None
    deadline_s: float | None
    iterations: int
    missed: int
    miss_fraction: float | None
    lateness_p50_s: float | None
    lateness_p95_s: float | None
    lateness_max_s: float | None
    achieved_rate_hz: float | None
    duty_cycle: float | None


def schedule_of(header: Header | None) -> tuple[str, float | None, float | None]:
    """The recorded profile's schedule, rate and deadline (the period when none was set)."""
    run = header.profile.get("run", {}) if header is not None else {}
    run = run if isinstance(run, dict) else {}
    rate = _positive(run.get("rate_hz"))
    deadline = _positive(run.get("deadline_s"))
    if deadline is None and rate is not None:
        deadline = 1.0 / rate
    schedule = run.get("schedule")
    return (schedule if isinstance(schedule, str) else "fixed"), rate, deadline


def summarize_pacing(fold: PacingFold | None, header: Header | None) -> PacingSummary | None:
    """The summary of a fold (``None`` when no iteration was paced)."""
    if fold is None or fold.count == 0:
        return None
    schedule, rate, deadline = schedule_of(header)
    lateness = fold.lateness
    return PacingSummary(
        schedule=schedule,
        target_rate_hz=rate,
        deadline_s=deadline,
        iterations=fold.count,
        missed=fold.missed,
        miss_fraction=fold.miss_fraction,
        lateness_p50_s=lateness.quantile(0.5),
        lateness_p95_s=lateness.quantile(0.95),
        lateness_max_s=lateness.maximum,
        achieved_rate_hz=fold.achieved_rate_hz,
        duty_cycle=fold.duty_cycle,
    )


def live_pacing(model: SessionModel, phase: str, variant: str) -> PacingSummary | None:
    """The pacing figures of one phase of one variant so far (``None``: not paced)."""
    return summarize_pacing(model.pacing_fold(phase, variant), model.header)


def short(pacing: PacingSummary) -> str:
    """``missed 12/30 (40.0%), lateness P95 120 ms, 6.8 of 13.5/s``: for a status line."""
    share = "" if pacing.miss_fraction is None else f" ({pacing.miss_fraction:.1%})"
    achieved = f"{pacing.achieved_rate_hz:.3g}" if pacing.achieved_rate_hz else "—"
    target = f"{pacing.target_rate_hz:.3g}" if pacing.target_rate_hz else "?"
    return (
        f"missed {pacing.missed}/{pacing.iterations}{share}, lateness P95 "
        f"{_ms(pacing.lateness_p95_s)} ms, {achieved} of {target}/s"
    )


def describe(pacing: PacingSummary) -> str:
    """One line: ``paced 10/s (poisson), achieved 9.97/s · deadline 100 ms: 3 of 200 missed
    (1.5%) · lateness P50 0.21 P95 1.9 max 12 ms · duty cycle 45%``."""
    target = f"{pacing.target_rate_hz:.4g}/s" if pacing.target_rate_hz else "?"
    achieved = f"{pacing.achieved_rate_hz:.4g}/s" if pacing.achieved_rate_hz else "—"
    deadline = f"{pacing.deadline_s * 1e3:.4g} ms" if pacing.deadline_s else "—"
    share = "" if pacing.miss_fraction is None else f" ({pacing.miss_fraction:.1%})"
    late = " ".join(
        f"{name} {_ms(value)}"
        for name, value in (
            ("P50", pacing.lateness_p50_s),
            ("P95", pacing.lateness_p95_s),
            ("max", pacing.lateness_max_s),
        )
    )
    duty = "—" if pacing.duty_cycle is None else f"{pacing.duty_cycle:.0%}"
    return (
        f"paced {target} ({pacing.schedule}), achieved {achieved} · deadline {deadline}: "
        f"{pacing.missed} of {pacing.iterations} missed{share} · lateness {late} ms · "
        f"duty cycle {duty}"
    )


def _ms(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    ms = value * 1e3
    return f"{ms:.0f}" if abs(ms) >= 100 else f"{ms:.3g}"


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None
