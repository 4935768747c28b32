"""CSV tables of a recording: one row per sampler tick, or one per iteration.

Column names are stable: the same channels give the same header in the same
order whatever order the device discovered them in (sorted by channel id),
and every name carries its unit (``thermal/nsp-0-0-0-thermal_C``). An
unavailable reading is an empty cell, never a zero.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from typing import TextIO

from qtop.events import ChannelInfo, Channels, Event, Iteration, Sample

SAMPLE_TIME_COLUMNS: tuple[str, ...] = ("t_s", "seq")
ITERATION_COLUMNS: tuple[str, ...] = (
    "index",
    "variant",
    "phase",
    "start_s",
    "end_s",
    "latency_s",
    "exit_status",
    "error",
)
# Added after the error column when any iteration was paced (``run.rate``).
PACED_COLUMNS: tuple[str, ...] = ("scheduled_s", "lateness_s", "missed")


def column_name(channel: ChannelInfo) -> str:
    """``<channel id>_<unit>``; the id alone when the channel has no unit."""
    return f"{channel.id}_{channel.unit}" if channel.unit else channel.id


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def sample_columns(events: Iterable[Event]) -> tuple[list[str], list[str]]:
    """(channel ids, column names), sorted by id; undeclared channels get no unit."""
    declared: dict[str, ChannelInfo] = {}
    seen: set[str] = set()
    for event in events:
        if isinstance(event, Channels):
            for channel in event.channels:
                declared[channel.id] = channel
        elif isinstance(event, Sample):
            seen.update(event.values)
    ids = sorted(set(declared) | seen)
    names = [column_name(declared[i]) if i in declared else i for i in ids]
    return ids, names


def write_samples_csv(events: Sequence[Event], out: TextIO) -> int:
    """Write one row per sample; returns the number of rows."""
    ids, names = sample_columns(events)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*SAMPLE_TIME_COLUMNS, *names])
    rows = 0
    for event in events:
        if isinstance(event, Sample):
            values = event.values
            writer.writerow([_cell(event.t), event.seq, *(_cell(values.get(i)) for i in ids)])
            rows += 1
    return rows


def write_iterations_csv(events: Sequence[Event], out: TextIO) -> int:
    """Write one row per iteration, metrics as extra columns (sorted by name)."""
    iterations = [e for e in events if isinstance(e, Iteration)]
    metrics = sorted({name for it in iterations for name in it.metrics})
    paced = any(it.scheduled is not None for it in iterations)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*ITERATION_COLUMNS, *(PACED_COLUMNS if paced else ()), *metrics])
    for it in iterations:
        pacing = [_cell(it.scheduled), _cell(it.lateness_s), _cell(it.missed)] if paced else []
        writer.writerow(
            [
                it.index,
                it.variant,
                it.phase,
                _cell(it.start),
                _cell(it.end),
                _cell(it.latency_s),
                it.exit_status,
                it.error or "",
                *pacing,
                *(_cell(it.metrics.get(name)) for name in metrics),
            ]
        )
    return len(iterations)
