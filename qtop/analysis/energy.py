"""Power and energy: which sensor, how often it really updates, joules per inference.

Power comes from a ``power`` channel (``power_now`` or a meter's
``power*_input``) or from |I| * V of one supply's current and voltage; the
direction is never taken from the sign (drivers disagree) but from the battery
status channel. Energy is the trapezoid integral of power over device time. A
sensor that refreshes more slowly than qtop samples is integrated over its
real updates only, so a held value is not mistaken for a flat power curve.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from qtop.analysis.numeric import median, trapezoid
from qtop.analysis.series import ChannelSeries
from qtop.errors import UsageError
from qtop.events import ChannelInfo

STATUS_CHARGING = 1
STATUS_DISCHARGING = -1
STATUS_IDLE = 0
UNIT_SCALE: dict[str, float] = {
    "W": 1.0,
    "mW": 1e-3,
    "uW": 1e-6,
    "A": 1.0,
    "mA": 1e-3,
    "uA": 1e-6,
    "V": 1.0,
    "mV": 1e-3,
    "uV": 1e-6,
}
POWER_KINDS = ("power", "current", "voltage", "battery_status")
GAP_FACTOR = 3.0
DECIMATE_FACTOR = 1.5
FEW_READINGS = 10
MAX_BLOCKS = 10
NO_POWER = (
    "no power telemetry: no battery and no external meter channel; on a board without a "
    "battery (IQ-9075 EVK) add a power_meter (hwmon power*_input, or curr*_input with "
    "in*_input) to the device profile"
)


@dataclass(frozen=True, slots=True)
class PowerSource:
    """The channels power is computed from."""

    group: str
    method: str
    channels: tuple[str, ...]
    status_channel: str | None

    @property
    def is_meter(self) -> bool:
        return self.group.startswith("meter/")

    def describe(self) -> str:
        what = "external meter" if self.is_meter else "supply"
        how = "power" if self.method == "power" else "|I| x V"
        return f"{what} {self.group} ({how}: {', '.join(self.channels)})"


@dataclass(slots=True)
class PowerTrace:
    """Contiguous runs of (time, watts) points; a gap in the data splits runs."""

    source: PowerSource
    segments: list[tuple[list[float], list[float]]]
    sample_interval_s: float | None
    refresh_period_s: float | None
    decimated: bool

    def points_between(self, t_from: float, t_to: float) -> int:
        total = 0
        for times, _ in self.segments:
            total += bisect.bisect_right(times, t_to) - bisect.bisect_left(times, t_from)
        return total

    def integrate(self, t_from: float, t_to: float) -> tuple[float, float]:
        """(joules, seconds covered) of the trace within [t_from, t_to]."""
        energy = covered = 0.0
        for times, watts in self.segments:
            start, end = max(t_from, times[0]), min(t_to, times[-1])
            if end <= start:
                continue
            lo, hi = bisect.bisect_right(times, start), bisect.bisect_left(times, end)
            clipped_t = [start, *times[lo:hi], end]
            clipped_w = [_interpolate(times, watts, start), *watts[lo:hi]]
            clipped_w.append(_interpolate(times, watts, end))
            energy += trapezoid(clipped_t, clipped_w)
            covered += end - start
        return energy, covered


def _interpolate(times: Sequence[float], values: Sequence[float], t: float) -> float:
    k = bisect.bisect_right(times, t) - 1
    if k < 0:
        return values[0]
    if k >= len(times) - 1 or times[k] == t:
        return values[k]
    fraction = (t - times[k]) / (times[k + 1] - times[k])
    return values[k] + (values[k + 1] - values[k]) * fraction


def _groups(channels: Mapping[str, ChannelInfo]) -> dict[str, dict[str, ChannelInfo]]:
    groups: dict[str, dict[str, ChannelInfo]] = {}
    for channel in channels.values():
        if channel.kind in POWER_KINDS and "/" in channel.id:
            group = channel.id.rsplit("/", 1)[0]
            groups.setdefault(group, {}).setdefault(channel.kind, channel)
    return groups


def select_power_source(
    channels: Mapping[str, ChannelInfo],
    series: Mapping[str, ChannelSeries],
    prefer: str | None = None,
) -> tuple[PowerSource | None, list[str]]:
    """The best power source and notes on the ones passed over.

    Order: external meters first (they measure the board, not a fuel gauge),
    then supplies; within one, a power channel before |I| x V. ``prefer``
    names a group (``meter/ina226``, ``power/battery``) to use instead.
    """
    groups = _groups(channels)
    if prefer is not None and prefer not in groups:
        available = ", ".join(sorted(groups)) or "none"
        raise UsageError(
            f"power source {prefer!r} is not among the recording's channels",
            f"use one of: {available}",
        )
    order = [prefer] if prefer else sorted(groups, key=lambda g: (not g.startswith("meter/"), g))
    notes: list[str] = []

    def usable(kind: str, members: dict[str, ChannelInfo]) -> bool:
        info = members.get(kind)
        if info is None or info.unit not in UNIT_SCALE:
            if info is not None:
                notes.append(f"{info.id}: unit {info.unit!r} is not one qtop converts; ignored")
            return False
        return len(series.get(info.id, ())) > 0

    for group in order:
        members = groups[group]
        status = members.get("battery_status")
        status_id = status.id if status else None
        if usable("power", members):
            return PowerSource(group, "power", (members["power"].id,), status_id), notes
        if usable("current", members) and usable("voltage", members):
            ids = (members["current"].id, members["voltage"].id)
            return PowerSource(group, "current x voltage", ids, status_id), notes
        if "current" in members and "voltage" not in members:
            notes.append(f"{group} reports current but no voltage: power unknown")
    return None, notes


def build_power_trace(
    source: PowerSource,
    channels: Mapping[str, ChannelInfo],
    series: Mapping[str, ChannelSeries],
) -> PowerTrace:
    """Watts over device time, split at gaps, on the sensor's real updates."""
    if source.method == "power":
        data = series[source.channels[0]]
        scale = UNIT_SCALE[channels[source.channels[0]].unit]
        times = list(data.times)
        watts = [abs(v) * scale for v in data.values]
    else:
        current, voltage = (series[c] for c in source.channels)
        i_scale, v_scale = (UNIT_SCALE[channels[c].unit] for c in source.channels)
        volts_at = dict(zip(voltage.times, voltage.values, strict=True))
        times, watts = [], []
        for t, amps in zip(current.times, current.values, strict=True):
            volts = volts_at.get(t)
            if volts is not None:
                times.append(t)
                watts.append(abs(amps) * i_scale * abs(volts) * v_scale)
    raw = ChannelSeries(times, watts)
    interval = raw.median_interval()
    segments = _split_at_gaps(times, watts, interval)
    refresh = _refresh_period(segments)
    decimate = refresh is not None and interval is not None and refresh > DECIMATE_FACTOR * interval
    if decimate:
        segments = [_readings(ts, ws) for ts, ws in segments]
    return PowerTrace(source, segments, interval, refresh, decimate)


def _split_at_gaps(
    times: list[float], watts: list[float], interval: float | None
) -> list[tuple[list[float], list[float]]]:
    if not times:
        return []
    if interval is None:
        return [(times, watts)]
    limit = GAP_FACTOR * interval
    segments = []
    start = 0
    for i in range(1, len(times)):
        if times[i] - times[i - 1] > limit:
            segments.append((times[start:i], watts[start:i]))
            start = i
    segments.append((times[start:], watts[start:]))
    return [segment for segment in segments if len(segment[0]) >= 2]


def _refresh_period(segments: Sequence[tuple[list[float], list[float]]]) -> float | None:
    """Median time between changes of the reading: how often the sensor really updates."""
    intervals = []
    for times, watts in segments:
        last_change: float | None = None
        for i in range(1, len(times)):
            if watts[i] != watts[i - 1]:
                if last_change is not None:
                    intervals.append(times[i] - last_change)
                last_change = times[i]
    return median(intervals) if len(intervals) >= 2 else None


def _readings(times: list[float], watts: list[float]) -> tuple[list[float], list[float]]:
    """First point of every run of equal values, and the segment's last point."""
    keep = [0] + [i for i in range(1, len(times)) if watts[i] != watts[i - 1]]
    if keep[-1] != len(times) - 1:
        keep.append(len(times) - 1)
    return [times[i] for i in keep], [watts[i] for i in keep]


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
    """Power and energy over one measured span; None where not meaningful, with why."""

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
    net_energy_j: float | None
    net_energy_per_inference_j: float | None
    net_inferences_per_j: float | None
    charging: bool
    charging_spans: tuple[tuple[float, float], ...]
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
        net_energy_j=None,
        net_energy_per_inference_j=None,
        net_inferences_per_j=None,
        charging=False,
        charging_spans=(),
        warnings=(),
    )


def _mean_power(trace: PowerTrace, t_from: float, t_to: float) -> tuple[float | None, float]:
    energy, covered = trace.integrate(t_from, t_to)
    return (energy / covered if covered > 0 else None), covered


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


def analyze_energy(
    trace: PowerTrace,
    status: ChannelSeries | None,
    t_from: float,
    t_to: float,
    inference_times: Sequence[float],
    baseline: tuple[float, float] | None,
) -> EnergyAnalysis:
    """Energy of the span [t_from, t_to] holding the successful inferences (midpoints, sorted)."""
    warnings: list[str] = []
    span = t_to - t_from
    inferences = len(inference_times)
    readings = trace.points_between(t_from, t_to)
    mean_power, covered = _mean_power(trace, t_from, t_to) if span > 0 else (None, 0.0)
    if trace.decimated:
        warnings.append(
            f"the power sensor updates every {trace.refresh_period_s:.3g} s while qtop samples "
            f"every {trace.sample_interval_s:.3g} s: integrated over its {readings} real "
            "updates in the measurement"
        )
    if readings < FEW_READINGS:
        warnings.append(
            f"only {readings} power readings during the measurement: energy figures are rough; "
            "measure longer"
        )
    coverage = covered / span if span > 0 else None
    if coverage is not None and coverage < 0.9:
        warnings.append(
            f"power readings cover {coverage:.0%} of the measurement (gaps): energy is the mean "
            "power of the covered part times the whole span"
        )
    is_battery = not trace.source.is_meter
    charging = status_spans(status, t_from, t_to, STATUS_CHARGING)
    baseline_charging = (
        status_spans(status, baseline[0], baseline[1], STATUS_CHARGING) if baseline else []
    )
    if is_battery and status is None:
        warnings.append("no battery status channel: charging cannot be ruled out")
    if is_battery and status_spans(status, t_from, t_to, STATUS_IDLE):
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
        energy = mean_power = None
    idle_power = idle_span = None
    if baseline is not None:
        idle_span = baseline[1] - baseline[0]
        idle_power, _ = _mean_power(trace, baseline[0], baseline[1])
        if baseline_charging:
            warnings.append("the battery was charging during the idle baseline: no net figures")
            idle_power = None
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
    blocks = _blocks(trace, t_from, t_to, inference_times, readings) if energy is not None else ()
    return EnergyAnalysis(
        available=True,
        source=trace.source.describe(),
        note="",
        sample_interval_s=trace.sample_interval_s,
        refresh_period_s=trace.refresh_period_s,
        integrated_on="sensor updates" if trace.decimated else "every sample",
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
        net_energy_j=net,
        net_energy_per_inference_j=net / inferences if net is not None and inferences else None,
        net_inferences_per_j=inferences / net if net and net > 0 else None,
        charging=bool(charging),
        charging_spans=tuple(charging),
        warnings=tuple(warnings),
        blocks=blocks,
    )
