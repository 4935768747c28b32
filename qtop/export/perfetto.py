"""A recording as a Chrome/Perfetto JSON trace (the Trace Event Format).

Iterations become slices on one track per variant, phases slices on their
own track, every sensor a counter track, markers instant events. Times are
the device's monotonic clock in microseconds, the unit of the format. The
process id is chosen well away from the small ids QNN's chrometrace uses, so
the two traces can be merged into one file and viewed together.

A time that no float holds in microseconds (a damaged recording's 1e305 s)
leaves its trace event out, rather than writing ``Infinity``, which is not JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any, TextIO

from qtop.events import (
    ChannelInfo,
    Channels,
    End,
    Event,
    Header,
    Iteration,
    Link,
    Marker,
    PhaseChange,
    Sample,
)

PROCESS_ID = 4242
PHASE_THREAD = 1
LINK_THREAD = 2
FIRST_VARIANT_THREAD = 10
MICROSECONDS = 1e6


def _us(t: float) -> float:
    return round(t * MICROSECONDS, 3)


def _metadata(name: str, tid: int | None, value: str) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "M", "pid": PROCESS_ID, "name": name, "args": {"name": value}}
    if tid is not None:
        event["tid"] = tid
    return event


def _slice(name: str, tid: int, start: float, end: float, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "ph": "X",
        "name": name,
        "cat": "qtop",
        "pid": PROCESS_ID,
        "tid": tid,
        "ts": _us(start),
        "dur": max(_us(end) - _us(start), 0.0),
        "args": args,
    }


def trace_events(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The traceEvents array for a recording's events (iterated twice: a sequence, or
    something that iterates afresh each time)."""
    out: list[dict[str, Any]] = []
    channels: dict[str, ChannelInfo] = {}
    variant_threads: dict[str, int] = {}
    phase_open: PhaseChange | None = None
    last_t = max((e.t for e in events if e.t is not None), default=0.0)
    title = "qtop"
    for event in events:
        if isinstance(event, Header):
            title = f"qtop {event.session_id}".strip()
        elif isinstance(event, Channels):
            channels.update((c.id, c) for c in event.channels)
        elif isinstance(event, Sample) and event.t is not None:
            out.extend(_counters(event, channels))
        elif isinstance(event, Iteration):
            tid = variant_threads.setdefault(
                event.variant, FIRST_VARIANT_THREAD + len(variant_threads)
            )
            out.append(_iteration(event, tid))
        elif isinstance(event, PhaseChange) and event.t is not None:
            if phase_open is not None and phase_open.t is not None:
                out.append(_phase(phase_open, event.t))
            phase_open = event
        elif isinstance(event, Marker) and event.t is not None:
            out.append(
                {
                    "ph": "i",
                    "s": "p",
                    "name": event.label or event.note or "marker",
                    "pid": PROCESS_ID,
                    "tid": PHASE_THREAD,
                    "ts": _us(event.t),
                    "args": {"note": event.note, "origin": event.origin},
                }
            )
        elif isinstance(event, Link) and event.gap_from is not None and event.gap_to is not None:
            out.append(
                _slice("gap", LINK_THREAD, event.gap_from, event.gap_to, {"detail": event.detail})
            )
        elif isinstance(event, End) and event.t is not None:
            last_t = event.t
    if phase_open is not None and phase_open.t is not None:
        out.append(_phase(phase_open, last_t))
    out = [event for event in out if _timed(event)]
    meta = [
        _metadata("process_name", None, title),
        _metadata("thread_name", PHASE_THREAD, "phases and markers"),
        _metadata("thread_name", LINK_THREAD, "link gaps"),
    ]
    for variant, tid in variant_threads.items():
        meta.append(_metadata("thread_name", tid, f"iterations {variant}".strip()))
    return meta + out


def _timed(event: dict[str, Any]) -> bool:
    """Whether the event's time and duration are finite microseconds."""
    return math.isfinite(event["ts"]) and math.isfinite(event.get("dur", 0.0))


def _counters(sample: Sample, channels: dict[str, ChannelInfo]) -> Iterable[dict[str, Any]]:
    assert sample.t is not None
    ts = _us(sample.t)
    for channel_id, value in sample.values.items():
        if value is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        info = channels.get(channel_id)
        yield {
            "ph": "C",
            "name": channel_id,
            "pid": PROCESS_ID,
            "ts": ts,
            "args": {(info.unit if info and info.unit else "value"): value},
        }


def _iteration(event: Iteration, tid: int) -> dict[str, Any]:
    failed = event.exit_status != 0
    name = f"{event.phase} {event.index}" + (" (failed)" if failed else "")
    args: dict[str, Any] = {"latency_s": event.latency_s, "exit_status": event.exit_status}
    if event.error:
        args["error"] = event.error
    args.update(event.metrics)
    end = event.end if event.end >= event.start else event.start + event.latency_s
    return _slice(name, tid, event.start, end, args)


def _phase(event: PhaseChange, end: float) -> dict[str, Any]:
    assert event.t is not None
    name = f"{event.phase} {event.variant}".strip()
    return _slice(name, PHASE_THREAD, event.t, max(end, event.t), {"note": event.note})


def write_perfetto(events: Iterable[Event], out: TextIO) -> int:
    """Write the JSON trace (two passes over ``events``); returns the number of trace events."""
    trace = trace_events(events)
    document = {"traceEvents": trace, "displayTimeUnit": "ms", "otherData": {"producer": "qtop"}}
    # json.dumps uses the C encoder; json.dump streams through the pure-Python one, 10x slower.
    out.write(json.dumps(document, separators=(",", ":"), allow_nan=False))
    out.write("\n")
    return len(trace)
