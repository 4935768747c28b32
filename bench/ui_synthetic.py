"""A synthetic live session for the UI benchmarks: 10 Hz sampling, 12 channels, 20 it/s.

``session_events(seconds)`` yields the events of a sustained run of that many
device seconds, lazily, so an hour costs no memory to produce: eight thermal
zones heating towards their plateau, the cdsp cooling device stepping up, an
external power meter, battery current and voltage, 20 back-to-back
inferences a second that slow down after a throttling onset, a log line every
10 s, and a profiler report at the start.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.events import (
    ChannelInfo,
    Channels,
    Event,
    Header,
    Iteration,
    Log,
    PhaseChange,
    ProfileReport,
    Sample,
    Trip,
)

TICK_S = 0.1
ITERATION_S = 0.05
ZONES = tuple(f"thermal/{name}" for name in (
    "nsp-0-0-0-thermal", "nsp-0-1-0-thermal", "nsp-0-2-0-thermal", "cpu-0-0-0-thermal",
    "cpu-0-1-0-thermal", "gpuss-0-thermal", "ddrss-0-thermal", "aoss-0-thermal",
))  # fmt: skip
CDSP = "cooling/cdsp"
METER = "meter/ina226/power"
CURRENT = "power/battery/current"
VOLTAGE = "power/battery/voltage"


def header() -> Header:
    return Header(
        qtop_version="bench",
        session_id="bench",
        source="synthetic",
        profile={"name": "bench-sustained"},
        device={"hostname": "bench-board", "soc": "QCS9075"},
    )


def _profile_report(t: float) -> ProfileReport:
    from qtop.parsers import parse_auto

    lines = []
    for index in range(3):
        lines.append(f"Execute Stat {index + 1} (graph bench_graph)")
        for op in range(40):
            lines.append(f"/op{op}/Conv:OpId_{op + 10} : {1000 * (op + 1)} cycles "
                         f"Wait(Scheduler) {37 * op} Resources: HVX")  # fmt: skip
        lines.append("Accelerator (execute) time : 1384 us")
        lines.append("Accelerator (execute excluding wait) : 459 us")
    profile = parse_auto("\n".join(lines) + "\n", "bench.txt")
    return ProfileReport(t=t, source_kind=profile.kind, path="bench.txt", report=profile.to_dict())


def session_events(seconds: float, t0: float = 10_000.0, seed: int = 1) -> Iterator[Event]:
    """The session's events in device-time order (the header is ``header()``)."""
    rng = random.Random(seed)
    infos = [
        ChannelInfo(id=z, kind="temperature", unit="C", trips=(Trip(type="passive", temp_c=95.0),))
        for z in ZONES
    ]
    infos += [
        ChannelInfo(id=CDSP, kind="cooling", unit="state", max_state=12),
        ChannelInfo(id=METER, kind="power", unit="W"),
        ChannelInfo(id=CURRENT, kind="current", unit="A"),
        ChannelInfo(id=VOLTAGE, kind="voltage", unit="V"),
    ]
    yield Channels(t=t0, channels=tuple(infos))
    yield PhaseChange(t=t0, phase="measure", planned_duration_s=seconds)
    yield _profile_report(t0)
    tick = iteration = 0
    next_sample = t0
    next_iteration = t0
    onset = t0 + seconds * 0.2
    while True:
        t = min(next_sample, next_iteration)
        if t > t0 + seconds:
            return
        if next_sample <= next_iteration:
            heat = 1 - math.exp(-(t - t0) / 600)
            values: dict[str, float | None] = {
                zone: round(40 + (40 + 2 * k) * heat + rng.uniform(-0.2, 0.2), 1)
                for k, zone in enumerate(ZONES)
            }
            values[CDSP] = float(int(max(0.0, heat - 0.6) * 10))
            values[METER] = round(6.0 + rng.uniform(-0.1, 0.1), 3)
            values[CURRENT] = round(-0.8 + rng.uniform(-0.02, 0.02), 3)
            values[VOLTAGE] = 3.9
            yield Sample(t=round(t, 6), seq=tick, values=values)
            tick += 1
            next_sample = t0 + tick * TICK_S
            if tick % 100 == 0:
                yield Log(t=round(t, 6), seq=tick, text=f"{iteration} inferences done")
        else:
            slow = 1 + 0.3 * (1 - math.exp(-max(0.0, t - onset) / 120))
            latency = round(0.02 * slow + rng.uniform(0, 0.002), 6)
            start, end = round(t, 6), round(t + latency, 6)
            yield Iteration(t=end, seq=iteration, index=iteration, start=start, end=end,
                            latency_s=latency)  # fmt: skip
            iteration += 1
            next_iteration = t + ITERATION_S
