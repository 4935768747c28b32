"""CSV tables of a recording: one row per sampler tick, or one per iteration.

Column names are stable: the same channels give the same header in the same
order whatever order the device discovered them in (sorted by channel id),
and every name carries its unit (``thermal/nsp-0-0-0-thermal_C``). An
unavailable reading is an empty cell, never a zero.

Text cells and headers (channel ids and units, variants, phases, errors,
metric names) come from the device: their control characters are written as
visible escapes (``qtop.textsafe.plain``: ``\x1b``, ``\n``), so the table keeps
its data and ``cat`` of the file cannot drive the terminal. Numbers are written
as the shortest text that reads back as the same float.

The writers iterate ``events`` twice (the columns first, then the rows), so a
reader may pass an object that reads the recording again each time instead of
a list of every event.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

from qtop.events import ChannelInfo, Channels, Event, Iteration, Sample
from qtop.textsafe import plain

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
    return plain(f"{channel.id}_{channel.unit}" if channel.unit else channel.id)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return plain(value)
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
    names = [column_name(declared[i]) if i in declared else plain(i) for i in ids]
    return ids, names


def write_samples_csv(events: Iterable[Event], out: TextIO) -> int:
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


def write_iterations_csv(events: Iterable[Event], out: TextIO) -> int:
    """Write one row per iteration, metrics as extra columns (sorted by name); the pacing
    columns when any iteration was paced."""
    names: set[str] = set()
    paced = False
    for event in events:
        if isinstance(event, Iteration):
            names.update(event.metrics)
            paced = paced or event.scheduled is not None
    metrics = sorted(names)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*ITERATION_COLUMNS, *(PACED_COLUMNS if paced else ()), *map(plain, metrics)])
    rows = 0
    for it in events:
        if not isinstance(it, Iteration):
            continue
        pacing = [_cell(it.scheduled), _cell(it.lateness_s), _cell(it.missed)] if paced else []
        writer.writerow(
            [
                it.index,
                _cell(it.variant),
                _cell(it.phase),
                _cell(it.start),
                _cell(it.end),
                _cell(it.latency_s),
                it.exit_status,
                _cell(it.error or ""),
                *pacing,
                *(_cell(it.metrics.get(name)) for name in metrics),
            ]
        )
        rows += 1
    return rows
