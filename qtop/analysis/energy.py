"""Energy per inference: gross, net of the idle baseline, and whether it can be trusted.

The power source and its trace (``qtop.analysis.power_trace``) give joules
over any window: a reading held as a step until the sensor's next update, or
an on-device counter's difference. Here those joules become the figures of
one measured span, with the battery's charging state and a validity verdict:
a figure built on too few real sensor updates is marked invalid, not only
warned about, because a slow fuel gauge (about one update a second) read over
a few seconds says little.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from qtop.analysis.numeric import median
from qtop.analysis.power_source import (
    COUNTER_KINDS,
    POWER_KINDS,
    STEP_KINDS,
    UNIT_SCALE,
    PowerSource,
    refresh_period,
    select_power_source,
)
from qtop.analysis.power_trace import PowerTrace, build_power_trace
from qtop.analysis.series import ChannelSeries

__all__ = [
    "COUNTER_KINDS",
    "MIN_BASELINE_READINGS",
    "MIN_READINGS",
    "NO_POWER",
    "POWER_KINDS",
    "STATUS_CHARGING",
    "STEP_KINDS",
    "UNIT_SCALE",
    "EnergyAnalysis",
    "PowerSource",
    "PowerTrace",
    "analyze_energy",
    "build_power_trace",
    "no_power",
    "refresh_period",
    "select_power_source",
    "status_spans",
]

STATUS_CHARGING = 1
STATUS_DISCHARGING = -1
STATUS_IDLE = 0
# Real sensor updates needed for a figure to be valid. A held reading lags a
# step in power by up to one refresh period, so N updates bound that error by
# about 1/N of the step's energy; the idle baseline is flat and needs fewer.
MIN_READINGS = 20
MIN_BASELINE_READINGS = 10
MAX_BLOCKS = 10
# Blocks shorter than this many sensor updates get a warning: a held or averaged reading
# that straddles a block boundary carries up to one period of the other variant's power.
BLEED_BLOCK_PERIODS = 10
NO_POWER = (
    "no power telemetry: no battery, no ODPM energy rails and no external meter channel; on "
    "a board without a battery (IQ-9075 EVK) add a power_meter (hwmon power*_input, or "
    "curr*_input with in*_input) to the device profile"
)


def status_spans(
    status: ChannelSeries | None, t_from: float, t_to: float, code: int
) -> list[tuple[float, float]]:
    """Intervals within [t_from, t_to] during which the battery status was ``code``."""
    if status is None:
        return []
    lo, hi = status.index_range(t_from, t_to)
    points = list(zip(status.times[lo:hi], status.values[lo:hi], strict=True))
    held = status.value_at(t_from)
    if held is not None and (not points or points[0][0] > t_from):
        points.insert(0, (t_from, held))
    spans: list[tuple[float, float]] = []
    start: float | None = None
    for i, (t, value) in enumerate(points):
        if round(value) == code and start is None:
            start = t
        if round(value) != code and start is not None:
            spans.append((start, t))
            start = None
        if i == len(points) - 1 and start is not None:
            spans.append((start, t_to))
    return spans


@dataclass(frozen=True, slots=True)
class EnergyAnalysis:
    """Power and energy over one measured span; None where not meaningful, with why.

    ``valid`` covers the gross figures (energy, mean power, per inference);
    ``net_valid`` the figures net of the idle baseline. ``invalid_reasons``
    says what is wrong with either and how to fix it.
    """

    available: bool
    source: str | None
    note: str
    sample_interval_s: float | None
    refresh_period_s: float | None
    integrated_on: str | None
    readings: int
    span_s: float
    coverage: float | None
    mean_power_w: float | None
    energy_j: float | None
    inferences: int
    energy_per_inference_j: float | None
    inferences_per_j: float | None
    idle_power_w: float | None
    idle_span_s: float | None
    idle_readings: int
    net_energy_j: float | None
    net_energy_per_inference_j: float | None
    net_inferences_per_j: float | None
    charging: bool
    charging_spans: tuple[tuple[float, float], ...]
    valid: bool
    net_valid: bool
    invalid_reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    blocks: tuple[tuple[float, int], ...] = field(default=(), metadata={"export": False})


def no_power(span_s: float, inferences: int, note: str = NO_POWER) -> EnergyAnalysis:
    return EnergyAnalysis(
        available=False,
        source=None,
        note=note,
        sample_interval_s=None,
        refresh_period_s=None,
        integrated_on=None,
        readings=0,
        span_s=span_s,
        coverage=None,
        mean_power_w=None,
        energy_j=None,
        inferences=inferences,
        energy_per_inference_j=None,
        inferences_per_j=None,
        idle_power_w=None,
        idle_span_s=None,
        idle_readings=0,
        net_energy_j=None,
        net_energy_per_inference_j=None,
        net_inferences_per_j=None,
        charging=False,
        charging_spans=(),
        valid=False,
        net_valid=False,
        invalid_reasons=(),
        warnings=(),
    )


def _mean_power(trace: PowerTrace, t_from: float, t_to: float) -> tuple[float | None, float]:
    energy, covered = trace.integrate(t_from, t_to)
    return (energy / covered if covered > 0 else None), covered


def _mean_power_within(
    trace: PowerTrace, spans: Sequence[tuple[float, float]]
) -> tuple[float | None, float]:
    energy = covered = 0.0
    for a, b in spans:
        joules, seconds = trace.integrate(a, b)
        energy += joules
        covered += seconds
    return (energy / covered if covered > 0 else None), covered


def _span_blocks(
    trace: PowerTrace, spans: Sequence[tuple[float, float]], inference_times: Sequence[float]
) -> tuple[tuple[float, int], ...]:
    """(joules, inferences) per block of an interleaved variant, for ``compare``'s noise."""
    found = []
    for a, b in spans:
        power, covered = _mean_power(trace, a, b)
        inferences = bisect.bisect_right(inference_times, b) - bisect.bisect_left(
            inference_times, a
        )
        if power is not None and covered > 0 and inferences:
            found.append((power * (b - a), inferences))
    return tuple(found) if len(found) >= 3 else ()


def _bleed_warning(trace: PowerTrace, spans: Sequence[tuple[float, float]]) -> list[str]:
    """A sensor that updates slowly against the blocks smears each block's power into the
    next one's, which belongs to another variant."""
    period = _period(trace)
    typical = median([b - a for a, b in spans])
    if period is None or typical >= BLEED_BLOCK_PERIODS * period:
        return []
    return [
        f"the power source updates about every {period:.2g} s and a block lasts about "
        f"{typical:.2g} s: each reading spans parts of the neighbouring blocks, which are "
        f"other variants'; make blocks at least {BLEED_BLOCK_PERIODS * period:.0f} s long "
        "(run.block) or give run.block_cooldown"
    ]


def _blocks(
    trace: PowerTrace, t_from: float, t_to: float, inference_times: Sequence[float], readings: int
) -> tuple[tuple[float, int], ...]:
    """(joules, inferences) per equal-time block, for the noise estimate of ``compare``."""
    count = min(MAX_BLOCKS, readings // 2)
    if count < 3:
        return ()
    width = (t_to - t_from) / count
    blocks = []
    for k in range(count):
        start, end = t_from + k * width, t_from + (k + 1) * width
        power, covered = _mean_power(trace, start, end)
        if power is None or covered <= 0:
            continue
        inferences = bisect.bisect_left(inference_times, end) - bisect.bisect_left(
            inference_times, start
        )
        blocks.append((power * width, inferences))
    return tuple(blocks)


def _how(trace: PowerTrace) -> str:
    if trace.cumulative:
        return "counter updates"
    return "held readings"


def _period(trace: PowerTrace) -> float | None:
    """The time one real update stands for (at least the sampling interval)."""
    values = [v for v in (trace.refresh_period_s, trace.sample_interval_s) if v]
    return max(values) if values else None


def _too_few(
    what: str, readings: int, needed: int, span: float, trace: PowerTrace, fix: str
) -> str:
    period = _period(trace)
    every = f"the source updates about every {period:.2g} s; " if period else ""
    longer = f"at least {needed * period:.0f} s" if period else "longer"
    return (
        f"only {readings} power readings in the {what} ({span:.1f} s; {every}at least "
        f"{needed} are needed): {fix} {longer}"
    )


def analyze_energy(
    trace: PowerTrace,
    status: ChannelSeries | None,
    t_from: float,
    t_to: float,
    inference_times: Sequence[float],
    baseline: tuple[float, float] | None,
    spans: Sequence[tuple[float, float]] = (),
) -> EnergyAnalysis:
    """Energy of the span [t_from, t_to] holding the successful inferences (midpoints, sorted).

    ``spans``: the variant's blocks within it, when its blocks alternate with other
    variants' (an interleaved run): energy is then the blocks' own, over their summed time.
    """
    warnings: list[str] = []
    invalid: list[str] = []
    parts = [(a, b) for a, b in spans if b > a] if len(spans) > 1 else [(t_from, t_to)]
    span = math.fsum(b - a for a, b in parts)
    inferences = len(inference_times)
    readings = trace.readings_within(parts)
    mean_power, covered = _mean_power_within(trace, parts) if span > 0 else (None, 0.0)
    if len(parts) > 1:
        warnings.extend(_bleed_warning(trace, parts))
    if not trace.cumulative and trace.refresh_period_s is None and trace.sample_interval_s:
        warnings.append(
            "the power reading changed too rarely to estimate how often the sensor updates: "
            "each sample is counted as a reading"
        )
    elif (
        not trace.cumulative
        and trace.refresh_period_s is not None
        and trace.sample_interval_s is not None
        and trace.refresh_period_s > 1.5 * trace.sample_interval_s
    ):
        warnings.append(
            f"the power sensor updates about every {trace.refresh_period_s:.3g} s while qtop "
            f"samples every {trace.sample_interval_s:.3g} s: each reading is held until the next"
        )
    if readings < MIN_READINGS:
        invalid.append(_too_few("measurement", readings, MIN_READINGS, span, trace, "measure for"))
    coverage = covered / span if span > 0 else None
    if coverage is not None and coverage < 0.9:
        warnings.append(
            f"power readings cover {coverage:.0%} of the measurement (gaps): energy is the mean "
            "power of the covered part times the whole span"
        )
    # Rail counters sit after the charger, so only a battery sees the charge current.
    is_battery = trace.source.is_battery
    charging = (
        [found for a, b in parts for found in status_spans(status, a, b, STATUS_CHARGING)]
        if is_battery
        else []
    )
    baseline_charging = (
        status_spans(status, baseline[0], baseline[1], STATUS_CHARGING)
        if baseline and is_battery
        else []
    )
    if is_battery and status is None:
        warnings.append("no battery status channel: charging cannot be ruled out")
    if is_battery and any(status_spans(status, a, b, STATUS_IDLE) for a, b in parts):
        warnings.append(
            "the battery reported full, not charging or unknown during the measurement: the "
            "board may be running from external power, which battery figures do not see"
        )
    energy = mean_power * span if mean_power is not None else None
    if charging:
        warnings.append(
            "the battery was charging during the measurement: its current includes the charge "
            "current, so energy figures are meaningless and are not shown; unplug and rerun"
        )
        invalid.append("the battery was charging during the measurement")
        energy = mean_power = None
    if energy is None and not charging and span > 0:
        invalid.append("no power readings during the measurement")
    idle_power = idle_span = None
    idle_readings = 0
    if baseline is not None:
        idle_span = baseline[1] - baseline[0]
        idle_readings = trace.readings(baseline[0], baseline[1])
        idle_power, _ = _mean_power(trace, baseline[0], baseline[1])
        if baseline_charging:
            warnings.append("the battery was charging during the idle baseline: no net figures")
            idle_power = None
        elif idle_readings < MIN_BASELINE_READINGS:
            invalid.append(
                _too_few(
                    "idle baseline",
                    idle_readings,
                    MIN_BASELINE_READINGS,
                    idle_span,
                    trace,
                    "set run.idle_baseline to",
                )
            )
    else:
        warnings.append(
            "no idle baseline before the run (set run.idle_baseline in the profile): no net figures"
        )
    net = None
    if energy is not None and idle_power is not None:
        net = energy - idle_power * span
        if net < 0:
            warnings.append(
                "net energy is negative: the idle baseline drew more than the run; the "
                "baseline was too short or conditions changed"
            )
    valid = energy is not None and readings >= MIN_READINGS
    net_valid = valid and net is not None and idle_readings >= MIN_BASELINE_READINGS
    blocks: tuple[tuple[float, int], ...] = ()
    if energy is not None:
        blocks = (
            _blocks(trace, t_from, t_to, inference_times, readings)
            if len(parts) == 1
            else _span_blocks(trace, parts, inference_times)
        )
    return EnergyAnalysis(
        available=True,
        source=trace.source.describe(),
        note="",
        sample_interval_s=trace.sample_interval_s,
        refresh_period_s=trace.refresh_period_s,
        integrated_on=_how(trace),
        readings=readings,
        span_s=span,
        coverage=coverage,
        mean_power_w=mean_power,
        energy_j=energy,
        inferences=inferences,
        energy_per_inference_j=energy / inferences if energy is not None and inferences else None,
        inferences_per_j=inferences / energy if energy else None,
        idle_power_w=idle_power,
        idle_span_s=idle_span,
        idle_readings=idle_readings,
        net_energy_j=net,
        net_energy_per_inference_j=net / inferences if net is not None and inferences else None,
        net_inferences_per_j=inferences / net if net and net > 0 else None,
        charging=bool(charging),
        charging_spans=tuple(charging),
        valid=valid,
        net_valid=net_valid,
        invalid_reasons=tuple(invalid),
        warnings=tuple(warnings),
        blocks=blocks,
    )
