"""Thermal decay of one measured run: onset, exponential fit, stability.

Every function takes the measured iterations as two parallel sequences, the
iteration times (the midpoint of each iteration, device seconds, ascending)
and their latencies, so the same code serves a live session, a replay and a
report. ``docs/analysis.md`` gives each definition with its formula.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from qtop.analysis.numeric import fsum, golden_section_minimum, median
from qtop.analysis.series import ChannelSeries
from qtop.events import ChannelInfo

FIT_MAX_POINTS = 200
FIT_GRID_POINTS = 60
# Beyond a few run lengths an exponential is indistinguishable from a straight
# line over the data, so larger time constants cannot be told apart.
FIT_MAX_TAU_SPANS = 5.0
FEW_PER_WINDOW = 5
EVIDENCE_KEPT = 20
# How many times a window's length the rolling median is evaluated (docs/analysis.md).
ROLLING_STEPS_PER_WINDOW = 64
# Ranks kept either side of the median in the rolling median's band, at the least.
BAND_MIN_MARGIN = 32
# Below this R² the exponential explains too little of the latency after the onset
# for its time constant to mean anything: identical demo runs fitted tau anywhere
# from 0.1 s to 40 s with R² down to 0.02.
MIN_FIT_R_SQUARED = 0.5


@dataclass(frozen=True, slots=True)
class DecayFit:
    """L(t) = Linf - (Linf - L0) * exp(-(t - t_onset) / tau), fitted from the onset on."""

    tau_s: float
    l0_s: float
    linf_s: float
    rmse_s: float
    r_squared: float | None
    points: int
    converged: bool
    note: str


@dataclass(frozen=True, slots=True)
class Stability:
    """3DMark-style stability: worst window throughput over best window throughput."""

    window_s: float
    windows: int
    best_per_s: float
    worst_per_s: float
    ratio: float
    pass_ratio: float
    passed: bool


@dataclass(frozen=True, slots=True)
class ThermalEvent:
    """A cooling device stepping up, or a zone crossing one of its trip points."""

    t: float
    channel: str
    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class ThermalAnalysis:
    """Throttling onset, slowdown, decay fit, stability, and what corroborates them."""

    window_s: float
    hold_s: float
    theta: float
    baseline_p50_s: float | None
    threshold_s: float | None
    onset_t: float | None
    onset_offset_s: float | None
    final_p50_s: float | None
    worst_p50_s: float | None
    sustained_slowdown: float | None
    peak_slowdown: float | None
    time_to_90pct_s: float | None
    fit: DecayFit | None
    stability: Stability | None
    evidence: tuple[ThermalEvent, ...]
    corroborated: bool | None
    corroboration: ThermalEvent | None
    hottest_channel: str | None
    peak_temperature_c: float | None
    temperature_at_onset_c: float | None
    notes: tuple[str, ...]


def rolling_median(times: Sequence[float], values: Sequence[float], window_s: float) -> list[float]:
    """The rolling median at every point (``rolling_median_points``): a point between two
    evaluated ones holds the value of the evaluated one before it."""
    evaluated, medians = rolling_median_points(times, values, window_s)
    counts = map(operator.sub, [*evaluated[1:], len(times)], evaluated)
    return list(itertools.chain.from_iterable(map(itertools.repeat, medians, counts)))


def rolling_median_points(
    times: Sequence[float], values: Sequence[float], window_s: float
) -> tuple[list[int], list[float]]:
    """(indices, medians) of the evaluated points: the median of the values whose time
    lies within window_s / 2 of the point's time, at the first point, then each
    ``max(1, size // ROLLING_STEPS_PER_WINDOW)`` points after the last evaluated one,
    whose window held ``size`` points.

    A centred window puts a step in latency at the step's own time instead of half a
    window later; near both ends the window is cut short by the data.

    Every point of an hour (800,000 iterations, 2,000 in a 10 s window) costs about a
    second in Python. Here the window is kept as a count of the values below a band of
    values around its median, the band itself (a short sorted list) and a count of those
    above; from one evaluated point to the next only the values that entered and left
    the window are sorted and counted (in C), and the band is rebuilt from the sorted
    window only when the median leaves it.
    """
    count = len(times)
    half = window_s / 2
    indices: list[int] = []
    medians: list[float] = []
    band: list[float] = []
    band_low = band_high = 0.0
    below = 0
    rebuild = True
    i = lo = hi = 0
    while i < count:
        t = times[i]
        # The point itself is always inside its window, whatever its time compares like.
        new_hi = max(bisect.bisect_right(times, t + half, hi), i + 1)
        new_lo = min(bisect.bisect_left(times, t - half, lo), i)
        if new_lo >= hi:
            rebuild = True
        if not rebuild:
            entering, leaving = sorted(values[hi:new_hi]), sorted(values[lo:new_lo])
            in_from, in_to = _band_range(entering, band_low, band_high)
            out_from, out_to = _band_range(leaving, band_low, band_high)
            below += in_from - out_from
            try:
                # pop and bisect alternate (map is lazy): each search sees the band as it is.
                _drain(map(band.pop, map(bisect.bisect_left, itertools.repeat(band),
                                         leaving[out_from:out_to])))  # fmt: skip
            except IndexError:
                # Only values that do not compare (NaN) get here: start again from the window.
                rebuild = True
            _drain(map(bisect.insort, itertools.repeat(band), entering[in_from:in_to]))
        lo, hi = new_lo, new_hi
        size = hi - lo
        middle = size // 2
        low_rank = middle if size % 2 else middle - 1
        if rebuild or not below <= low_rank <= middle < below + len(band):
            window = sorted(values[lo:hi])
            low, high = window[low_rank], window[middle]
            margin = max(BAND_MIN_MARGIN, size // ROLLING_STEPS_PER_WINDOW * 4)
            band_low = window[max(0, low_rank - margin)]
            band_high = window[min(size - 1, middle + margin)]
            first, stop = _band_range(window, band_low, band_high)
            band, below, rebuild = window[first:stop], first, False
        else:
            low, high = band[low_rank - below], band[middle - below]
        indices.append(i)
        medians.append(high if size % 2 else low + (high - low) * 0.5)
        i += max(1, size // ROLLING_STEPS_PER_WINDOW)
    return indices, medians


def _band_range(ordered: list[float], band_low: float, band_high: float) -> tuple[int, int]:
    """Where the values within [band_low, band_high] start and stop in a sorted list."""
    return bisect.bisect_left(ordered, band_low), bisect.bisect_right(ordered, band_high)


def _drain(calls: Iterable[object]) -> None:
    """Run a lazy ``map`` of calls for their effect, in C."""
    collections.deque(calls, maxlen=0)


def find_onset(
    times: Sequence[float], rolling: Sequence[float], threshold: float, hold_s: float
) -> int | None:
    """Index of the first point from which the rolling median stays above threshold for hold_s.

    The stretches above the threshold are found with ``bytes.find`` over one flag
    per point; within a stretch the times only grow, so its last point says
    whether it lasted ``hold_s``.
    """
    above = bytes(map(operator.gt, rolling, itertools.repeat(threshold)))
    position = above.find(1)
    while position >= 0:
        stop = above.find(0, position)
        last = (len(above) if stop < 0 else stop) - 1
        if times[last] - times[position] >= hold_s:
            return position
        if stop < 0:
            return None
        position = above.find(1, stop)
    return None


def _fit_points(
    times: Sequence[float], values: Sequence[float], t_onset: float, max_points: int
) -> tuple[list[float], list[float], list[float]]:
    """(x = t - t_onset, y, weight); medians of equal-time bins when there are many points.

    Each bin's points are taken as a slice of ``times`` and ``values``: an hour after an
    onset holds 700,000 iterations, which as lists of offsets and latencies were 44 MB.
    """
    start = bisect.bisect_left(times, t_onset)
    end = len(times)
    if end - start <= max_points or not times[-1] - t_onset > 0:
        after = itertools.islice(times, start, None)
        xs = list(map(operator.sub, after, itertools.repeat(t_onset)))
        return xs, list(itertools.islice(values, start, None)), [1.0] * len(xs)
    width = (times[-1] - t_onset) / max_points

    def slot(t: float) -> int:
        return min(int((t - t_onset) / width), max_points - 1)

    # The points are in time order, so each bin is a stretch of them: its end is
    # found by a binary search on the bin number, not by a pass over every point.
    bx, by, bw = [], [], []
    first = start
    while first < end:
        number = slot(times[first])
        stop = bisect.bisect_right(times, number, lo=first, key=slot)
        offsets = map(operator.sub, times[first:stop], itertools.repeat(t_onset))
        bx.append(fsum(list(offsets)) / (stop - first))
        by.append(median(values[first:stop]))
        bw.append(float(stop - first))
        first = stop
    return bx, by, bw


def _least_squares(
    xs: Sequence[float], ys: Sequence[float], ws: Sequence[float], tau: float
) -> tuple[float, float, float]:
    """Closed-form weighted fit of y = c0 + c1 * exp(-x / tau): (sse, c0, c1)."""
    sw = se = see = sy = sey = 0.0
    decays = [math.exp(-x / tau) for x in xs]
    for e, y, w in zip(decays, ys, ws, strict=True):
        sw += w
        se += w * e
        see += w * e * e
        sy += w * y
        sey += w * e * y
    determinant = sw * see - se * se
    if determinant <= 1e-12 * sw * see:
        c0, c1 = sy / sw, 0.0
    else:
        c1 = (sw * sey - se * sy) / determinant
        c0 = (sy - c1 * se) / sw
    try:
        sse = math.fsum(w * (y - c0 - c1 * e) ** 2 for e, y, w in zip(decays, ys, ws, strict=True))
    except OverflowError:
        sse = math.inf
    return sse, c0, c1


def fit_decay(
    times: Sequence[float],
    values: Sequence[float],
    t_onset: float,
    max_points: int = FIT_MAX_POINTS,
) -> DecayFit | None:
    """Fit the exponential approach to Linf from the onset on.

    For a fixed tau the model is linear in Linf and L0, solved in closed form;
    tau itself is found by a log-spaced grid search refined by golden-section
    search on the residual sum of squares. With many points the fit runs on
    the medians of equal-time bins (weighted by their counts), which keeps it
    fast and makes single outliers harmless.
    """
    xs, ys, ws = _fit_points(times, values, t_onset, max_points)
    if len(xs) < 6 or not xs[-1] > 0:
        return None
    span = xs[-1]
    positive_steps = [b - a for a, b in itertools.pairwise(xs) if b > a]
    tau_low = max(min(positive_steps) if positive_steps else span / 1000, span / 1000)
    tau_high = FIT_MAX_TAU_SPANS * span
    if not (tau_low > 0 and math.isfinite(tau_high)) or not all(map(math.isfinite, ys)):
        # Times or latencies beyond what the arithmetic of the fit can hold.
        return None
    ratio = (tau_high / tau_low) ** (1 / (FIT_GRID_POINTS - 1))
    grid = [tau_low * ratio**k for k in range(FIT_GRID_POINTS)]
    errors = [_least_squares(xs, ys, ws, tau)[0] for tau in grid]
    best = min(range(len(grid)), key=errors.__getitem__)
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    log_tau = golden_section_minimum(
        lambda u: _least_squares(xs, ys, ws, math.exp(u))[0], math.log(low), math.log(high), 50
    )
    tau = math.exp(log_tau)
    sse, c0, c1 = _least_squares(xs, ys, ws, tau)
    total_weight = fsum(ws)
    y_mean = fsum([w * y for y, w in zip(ys, ws, strict=True)]) / total_weight
    try:
        sst = math.fsum(w * (y - y_mean) ** 2 for y, w in zip(ys, ws, strict=True))
    except OverflowError:
        sst = math.inf
    converged = 0 < best < len(grid) - 1
    note = ""
    if best == len(grid) - 1:
        note = (
            f"latency was still rising when the run ended: tau is longer than "
            f"{tau_high:.0f} s can show; run longer to see the plateau"
        )
    elif best == 0:
        note = "latency stepped up and stayed: no gradual decay to fit"
    return DecayFit(
        tau_s=tau,
        l0_s=c0 + c1,
        linf_s=c0,
        rmse_s=math.sqrt(sse / total_weight),
        r_squared=1 - sse / sst if sst > 0 else None,
        points=len(xs),
        converged=converged,
        note=note,
    )


def fit_problem(fit: DecayFit | None) -> str | None:
    """Why a decay fit's tau means nothing, or None when it may be shown (always with its R²)."""
    if fit is None:
        return "too few iterations after the onset"
    if not fit.converged:
        still_rising = fit.note.startswith("latency was still rising")
        return "latency still rising at the end" if still_rising else "no gradual decay (a step)"
    if fit.r_squared is None:
        return "latency flat after the onset"
    if fit.r_squared < MIN_FIT_R_SQUARED:
        return f"R² {fit.r_squared:.2f}, below {MIN_FIT_R_SQUARED:g}"
    return None


def stability(
    times: Sequence[float],
    latencies: Sequence[float],
    t_start: float,
    t_end: float,
    window_s: float,
    pass_ratio: float,
) -> Stability | None:
    """Worst over best window throughput; None with fewer than two full windows.

    A window's throughput is its iterations divided by the time spent in them
    (n / sum of latencies), so pacing and gaps between runs do not hide a
    slowdown. Iterations belong to the window holding their midpoint.
    """
    if window_s <= 0:
        return None
    windows = (t_end - t_start) / window_s + 1e-9
    if not windows >= 0:
        return None
    # A window with no iteration adds no rate, so the loop jumps over empty ones to the
    # window of the next iteration: it runs once per window with iterations at most,
    # however far apart the device's times are (a clock that jumped, a damaged file).
    count = int(windows) if math.isfinite(windows) else 0
    rates = []
    k = 0
    size = len(times)
    # Each window visited holds an iteration or is the one step before the next that
    # does, so 2 * size + 2 visits cover every window; beyond that the device's times
    # are so large that adding a window no longer changes them (1e300 s and 30 s windows).
    for _ in range(2 * size + 2):
        if k >= count:
            break
        lo = bisect.bisect_left(times, t_start + k * window_s)
        hi = bisect.bisect_left(times, t_start + (k + 1) * window_s)
        busy = fsum(latencies[lo:hi])
        if hi > lo and busy > 0 and math.isfinite(busy):
            rates.append((hi - lo) / busy)
        if hi >= size:
            break
        k = max(k + 1, _window_of(times[hi], t_start, window_s))
    if len(rates) < 2:
        return None
    best, worst = max(rates), min(rates)
    ratio = worst / best
    return Stability(
        window_s=window_s,
        windows=len(rates),
        best_per_s=best,
        worst_per_s=worst,
        ratio=ratio,
        pass_ratio=pass_ratio,
        passed=ratio >= pass_ratio,
    )


def _window_of(t: float, t_start: float, window_s: float) -> int:
    """The k with t_start + k * window_s <= t < t_start + (k + 1) * window_s, as computed
    (a step or two from the quotient, which rounding may put one off)."""
    quotient = (t - t_start) / window_s
    if not math.isfinite(quotient):
        return 0
    k = max(0, math.floor(quotient))
    for _ in range(2):
        if k > 0 and t_start + k * window_s > t:
            k -= 1
    for _ in range(2):
        if t_start + (k + 1) * window_s <= t:
            k += 1
    return k


def cooling_steps(
    series: Mapping[str, ChannelSeries],
    channels: Mapping[str, ChannelInfo],
    t_from: float,
    t_to: float,
) -> list[ThermalEvent]:
    """Every rise of a cooling device's state between t_from and t_to."""
    events = []
    for channel in channels.values():
        data = series.get(channel.id)
        if channel.kind != "cooling" or data is None:
            continue
        lo, hi = data.index_range(t_from, t_to)
        values = data.values
        # A rise is a point above the one before it (the first point of the file has none).
        start = max(lo, 1)
        rises = map(operator.gt, values[start:hi], values[start - 1 : hi - 1])
        limit = f"/{channel.max_state}" if channel.max_state is not None else ""
        for i in itertools.compress(range(start, hi), rises):
            previous, value = values[i - 1], values[i]
            events.append(
                ThermalEvent(
                    t=data.times[i],
                    channel=channel.id,
                    kind="cooling_step",
                    detail=f"{channel.id} stepped {previous:g} -> {value:g}{limit}",
                )
            )
    return events


def trip_crossings(
    series: Mapping[str, ChannelSeries],
    channels: Mapping[str, ChannelInfo],
    t_from: float,
    t_to: float,
) -> list[ThermalEvent]:
    """The first upward crossing of each trip point between t_from and t_to."""
    events = []
    for channel in channels.values():
        data = series.get(channel.id)
        if channel.kind != "temperature" or data is None or not channel.trips:
            continue
        lo, hi = data.index_range(t_from, t_to)
        values = data.values
        start = max(lo, 1)
        # A trip above every reading in the span has no crossing: no pass over them for it.
        highest = max(values[start:hi], default=None)
        for trip in channel.trips:
            temp = trip.temp_c
            if highest is None or not highest >= temp:
                continue
            below_before = map(operator.lt, values[start - 1 : hi - 1], itertools.repeat(temp))
            at_or_above = map(operator.le, itertools.repeat(temp), values[start:hi])
            found = bytes(map(operator.and_, below_before, at_or_above)).find(1)
            if found >= 0:
                i = start + found
                events.append(
                    ThermalEvent(
                        t=data.times[i],
                        channel=channel.id,
                        kind="trip_crossing",
                        detail=f"{channel.id} crossed its {trip.type} trip "
                        f"{temp:g} C ({values[i]:g} C)",
                    )
                )
    return events


def _hottest(
    series: Mapping[str, ChannelSeries],
    channels: Mapping[str, ChannelInfo],
    t_from: float,
    t_to: float,
) -> tuple[str, float] | None:
    best: tuple[str, float] | None = None
    for channel in channels.values():
        data = series.get(channel.id)
        if channel.kind != "temperature" or data is None:
            continue
        peak = data.max_between(t_from, t_to)
        if peak is not None and (best is None or peak > best[1]):
            best = (channel.id, peak)
    return best


def analyze_thermal(
    times: Sequence[float],
    latencies: Sequence[float],
    *,
    t_start: float,
    t_end: float,
    series: Mapping[str, ChannelSeries],
    channels: Mapping[str, ChannelInfo],
    window_s: float,
    hold_s: float,
    theta: float,
    stability_window_s: float,
    stability_pass: float,
) -> ThermalAnalysis:
    """All thermal figures of one measured run (times: iteration midpoints, ascending)."""
    notes: list[str] = []
    baseline = final = worst = threshold = None
    onset_index: int | None = None
    detection_ran = False
    rolling: list[float] = []
    if times:
        early = bisect.bisect_left(times, t_start + window_s)
        baseline = median(latencies[: max(early, 1)])
        threshold = baseline * (1 + theta)
        late = bisect.bisect_left(times, t_end - window_s)
        final = median(latencies[min(late, len(latencies) - 1) :])
        rolling = rolling_median(times, latencies, window_s)
        # The points whose window lies wholly inside the run: a stretch of the sorted times.
        inner = rolling[
            bisect.bisect_left(times, t_start + window_s / 2) : bisect.bisect_right(
                times, t_end - window_s / 2
            )
        ]
        worst = max(inner or rolling)
        if t_end - t_start >= window_s + hold_s:
            onset_index = find_onset(times, rolling, threshold, hold_s)
            detection_ran = True
        else:
            notes.append(
                f"measured for {t_end - t_start:.0f} s, shorter than window + hold "
                f"({window_s:g} s + {hold_s:g} s): no onset detection"
            )
        per_window = len(times) * window_s / max(t_end - t_start, window_s)
        if per_window < FEW_PER_WINDOW:
            notes.append(
                f"the {window_s:g} s window holds only about {per_window:.1f} iterations: "
                "rolling medians are noisy; use a longer window"
            )
    onset_t = times[onset_index] if onset_index is not None else None
    fit = fit_decay(times, latencies, onset_t) if onset_t is not None else None
    if fit is not None and fit.note:
        notes.append(fit.note)
    time_to_90 = None
    if baseline is not None and final is not None and final - baseline > theta * baseline:
        target = baseline + 0.9 * (final - baseline)
        reached = bytes(map(operator.ge, rolling, itertools.repeat(target)))
        i = reached.find(1, onset_index or 0)
        if i >= 0:
            time_to_90 = times[i] - t_start
    evidence = sorted(
        cooling_steps(series, channels, t_start - window_s, t_end)
        + trip_crossings(series, channels, t_start - window_s, t_end),
        key=lambda event: event.t,
    )[:EVIDENCE_KEPT]
    corroborated = corroboration = None
    if onset_t is not None:
        corroboration = next(
            (e for e in evidence if onset_t - window_s - hold_s <= e.t <= onset_t + window_s),
            None,
        )
        corroborated = corroboration is not None
        if not corroborated:
            notes.append(
                "no cooling device stepped and no trip point was crossed near the onset: "
                "the slowdown may have another cause (a vendor thermal daemon that "
                "cur_state does not show, DVFS, other load on the device)"
            )
    elif evidence and detection_ran:
        notes.append(
            f"{evidence[0].detail} at +{evidence[0].t - t_start:.0f} s, but the rolling P50 "
            f"stayed within {theta:.0%} of the baseline"
        )
    hottest = _hottest(series, channels, t_start, t_end)
    temperature_at_onset = None
    if hottest is not None and onset_t is not None:
        temperature_at_onset = series[hottest[0]].value_at(onset_t)
    return ThermalAnalysis(
        window_s=window_s,
        hold_s=hold_s,
        theta=theta,
        baseline_p50_s=baseline,
        threshold_s=threshold,
        onset_t=onset_t,
        onset_offset_s=onset_t - t_start if onset_t is not None else None,
        final_p50_s=final,
        worst_p50_s=worst,
        sustained_slowdown=final / baseline - 1 if baseline and final is not None else None,
        peak_slowdown=worst / baseline - 1 if baseline and worst is not None else None,
        time_to_90pct_s=time_to_90,
        fit=fit,
        stability=stability(times, latencies, t_start, t_end, stability_window_s, stability_pass),
        evidence=tuple(evidence),
        corroborated=corroborated,
        corroboration=corroboration,
        hottest_channel=hottest[0] if hottest else None,
        peak_temperature_c=hottest[1] if hottest else None,
        temperature_at_onset_c=temperature_at_onset,
        notes=tuple(notes),
    )
