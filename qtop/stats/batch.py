"""Folding many packed runs and samples into a ``SessionModel`` at once.

``report`` folds a whole recording: an hour of a busy run is 45,000 runs of
iterations and 36,000 samples of 24 channels. Applied one by one, each costs a
few dozen Python operations around a little arithmetic. Here a batch of them
goes in with one call per statistic instead: the latencies of each phase and
variant are picked out of the batch's columns with ``compress`` (in C) and
given to ``RunningStats.extend`` and ``Series.extend`` in their order, and each
channel's values are one column of the batch's samples.

The result is the model ``apply`` would give, bit for bit, because each
statistic still sees its own values in the same order, and everything else is
a count, a minimum or a maximum. The caller keeps that true by batching only
runs and samples (which touch different parts of the model) and applying the
batch before any other event; a run with a failed iteration, with metrics or
paced goes the ordinary way.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import cast

from qtop.events import IterationRun, Sample
from qtop.stats.model import ChannelStats, SessionModel
from qtop.stats.quantiles import RunningStats
from qtop.stats.series import Series

_chain = itertools.chain.from_iterable


def apply_iteration_runs(model: SessionModel, runs: Sequence[IterationRun]) -> None:
    """``model.apply_run`` of each run in turn."""
    if not runs:
        return
    if not all(run.plain for run in runs):
        for run in runs:
            model.apply_run(run)
        return
    phases = list(_chain(run.phase for run in runs))
    variants = list(_chain(run.variant for run in runs))
    ends = list(_chain(run.ends for run in runs))
    latencies = list(_chain(run.latency for run in runs))
    model.event_count += len(latencies)
    first, last = min(ends), max(ends)
    if model.t_first is None or first < model.t_first:
        model.t_first = first
    if model.t_last is None or last > model.t_last:
        model.t_last = last
    # (phase, variant) in the order each first appears, as one-by-one creates them.
    one_variant = variants.count(variants[0]) == len(variants)
    if one_variant:
        keys = dict.fromkeys((phase, variants[0]) for phase in dict.fromkeys(phases))
    else:
        keys = dict.fromkeys(zip(phases, variants, strict=True))
    for phase, variant in keys:
        if len(keys) == 1:
            values, times = latencies, ends
        else:
            same_phase = map(operator.eq, phases, itertools.repeat(phase))
            if one_variant:
                flags = bytes(same_phase)
            else:
                same_variant = map(operator.eq, variants, itertools.repeat(variant))
                flags = bytes(map(operator.and_, same_phase, same_variant))
            values = list(itertools.compress(latencies, flags))
            times = list(itertools.compress(ends, flags))
        key = f"{phase}|{variant}"
        if variant not in model.variants:
            model.variants.append(variant)
        model.iterations_done[key] = model.iterations_done.get(key, 0) + len(values)
        stats = model.latency.get(key)
        if stats is None:
            stats = model.latency[key] = RunningStats()
        stats.extend(values)
        if phase == "measure" and model.charts:
            series = model.latency_series.get(variant)
            if series is None:
                series = model.latency_series[variant] = Series(model.series_capacity)
            series.extend(times, values)
    model.last_iteration_of(runs[-1])


def apply_samples(model: SessionModel, samples: Sequence[Sample]) -> None:
    """``model.apply`` of each sample in turn."""
    if not samples:
        return
    model.event_count += len(samples)
    times = [sample.t for sample in samples]
    timed = [t for t in times if t is not None]
    if timed:
        first, last = min(timed), max(timed)
        if model.t_first is None or first < model.t_first:
            model.t_first = first
        if model.t_last is None or last > model.t_last:
            model.t_last = last
    model.sample_count += len(samples)
    previous = model.last_sample_seq
    for sample in samples:
        seq = sample.seq
        if previous is not None and seq > previous + 1:
            model.missed_ticks += seq - previous - 1
        previous = seq
    model.last_sample_seq = previous
    keys = tuple(samples[0].values)
    if all(tuple(sample.values) == keys for sample in samples):
        columns = list(zip(*(sample.values.values() for sample in samples), strict=True))
        for channel_id in keys:
            model.channel_stats.setdefault(channel_id, ChannelStats())
        if model.charts:
            _create_series(model, keys, times, columns)
        for channel_id, column in zip(keys, columns, strict=True):
            _apply_column(model, channel_id, times, column)
        return
    for sample in samples:
        for channel_id, value in sample.values.items():
            _apply_column(model, channel_id, [sample.t], (value,))


def _create_series(
    model: SessionModel,
    keys: Sequence[str],
    times: Sequence[float | None],
    columns: Sequence[Sequence[float | None]],
) -> None:
    """The chart series this batch starts, in the order one sample at a time starts them
    (at each channel's first timed value, earlier samples first)."""
    starts = []
    for position, (channel_id, column) in enumerate(zip(keys, columns, strict=True)):
        if channel_id in model.channel_series:
            continue
        first = next(
            (k for k, (t, v) in enumerate(zip(times, column, strict=True))
             if t is not None and v is not None),
            None,
        )  # fmt: skip
        if first is not None:
            starts.append((first, position, channel_id))
    for _, _, channel_id in sorted(starts):
        model.channel_series[channel_id] = Series(model.series_capacity)


def _apply_column(
    model: SessionModel,
    channel_id: str,
    times: Sequence[float | None],
    column: Sequence[float | None],
) -> None:
    """One channel's values at ``times``: its statistics and its chart series."""
    stats = model.channel_stats.get(channel_id)
    if stats is None:
        stats = model.channel_stats[channel_id] = ChannelStats()
    present = list(map(operator.is_not, column, itertools.repeat(None)))
    # The Nones are left out: what remains are numbers.
    values = cast(list[float], list(itertools.compress(column, present)))
    stats.unavailable += len(column) - len(values)
    if not values:
        return
    stats.count += len(values)
    stats.last = values[-1]
    stats.last_t = times[len(present) - 1 - present[::-1].index(True)]
    # min and max keep the first of equal values, as the comparisons in apply do.
    low, high = min(values), max(values)
    stats.minimum = low if stats.minimum is None else min(stats.minimum, low)
    stats.maximum = high if stats.maximum is None else max(stats.maximum, high)
    if not model.charts:
        return
    at = list(itertools.compress(times, present))
    if None in at:
        pairs = [(t, v) for t, v in zip(at, values, strict=True) if t is not None]
        at, values = [t for t, _ in pairs], [v for _, v in pairs]
        if not at:
            return
    series = model.channel_series.get(channel_id)
    if series is None:
        series = model.channel_series[channel_id] = Series(model.series_capacity)
    series.extend(at, values)  # type: ignore[arg-type]
