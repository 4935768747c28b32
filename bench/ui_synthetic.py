"""A synthetic live session for the UI benchmarks, at chosen event rates.

``session_events(seconds, rates)`` yields the events of a sustained run of that
many device seconds, lazily, so an hour costs no memory to produce: thermal
zones heating towards their plateau, the cdsp cooling device stepping up, an
external power meter, battery current and voltage, back-to-back inferences that
slow down after a throttling onset, lines of command output, and profiler
reports.

Two sets of rates: ``QUIET`` (10 Hz x 12 channels, 20 inferences a second, a
log line every 10 s), which the memory and seek benchmarks use so that an hour
stays small, and ``DEMO``, the rates ``qtop demo`` really produces (measured
from ``qtop demo --headless --duration 30s --record d.jsonl``: 10 samples/s of
24 channels, about 250 iterations/s, about 350 lines of command output/s and a
30 kB profiler report every 15 s).
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
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

ZONE_NAMES = (
    "nsp-0-0-0-thermal", "nsp-0-1-0-thermal", "nsp-0-2-0-thermal", "cpu-0-0-0-thermal",
    "cpu-0-1-0-thermal", "gpuss-0-thermal", "ddrss-0-thermal", "aoss-0-thermal",
    "cpu-0-2-0-thermal", "cpu-0-3-0-thermal", "cpu-1-0-0-thermal", "cpu-1-1-0-thermal",
    "cpu-1-2-0-thermal", "cpu-1-3-0-thermal", "gpuss-1-thermal", "nsp-1-0-0-thermal",
    "nsp-1-1-0-thermal",
)  # fmt: skip
CDSP = "cooling/cdsp"
EXTRA_COOLING = ("cooling/cpufreq-cpu0", "cooling/cpufreq-cpu4")
METER = "meter/ina226/power"
CURRENT = "power/battery/current"
VOLTAGE = "power/battery/voltage"
# What the simulated qnn-net-run prints per inference, cycled.
OUTPUT_LINES = (
    "qnn-net-run build version: v2.45.0.260326154327_131419",
    "Creating context from binary file: /opt/qc-ai/models/qwen2.5-7b/part_1_of_6.bin",
    "Finished Executing Graphs for input 0",
    "Execute Stat (graph qwen2_5_7b_instruct_part_1_of_6): 1384 us accelerator",
)


@dataclass(frozen=True, slots=True)
class Rates:
    """How much a session produces per second of device time."""

    tick_s: float
    zones: int
    iterations_per_s: float
    log_lines_per_s: float
    report_every_s: float

    @property
    def channels(self) -> int:
        return self.zones + 1 + (len(EXTRA_COOLING) if self.zones > 8 else 0) + 3


QUIET = Rates(tick_s=0.1, zones=8, iterations_per_s=20.0, log_lines_per_s=0.1,
              report_every_s=math.inf)  # fmt: skip
DEMO = Rates(tick_s=0.1, zones=17, iterations_per_s=250.0, log_lines_per_s=350.0,
             report_every_s=15.0)  # fmt: skip


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


def _channels(rates: Rates) -> list[ChannelInfo]:
    zones = [f"thermal/{name}" for name in ZONE_NAMES[: rates.zones]]
    infos = [
        ChannelInfo(id=z, kind="temperature", unit="C", trips=(Trip(type="passive", temp_c=95.0),))
        for z in zones
    ]
    cooling = [CDSP, *(EXTRA_COOLING if rates.zones > 8 else ())]
    infos += [ChannelInfo(id=c, kind="cooling", unit="state", max_state=12) for c in cooling]
    infos += [
        ChannelInfo(id=METER, kind="power", unit="W"),
        ChannelInfo(id=CURRENT, kind="current", unit="A"),
        ChannelInfo(id=VOLTAGE, kind="voltage", unit="V"),
    ]
    return infos


def session_events(
    seconds: float, rates: Rates = QUIET, t0: float = 10_000.0, seed: int = 1
) -> Iterator[Event]:
    """The session's events in device-time order (the header is ``header()``)."""
    rng = random.Random(seed)
    infos = _channels(rates)
    zones = [c.id for c in infos if c.kind == "temperature"]
    coolers = [c.id for c in infos if c.kind == "cooling"]
    yield Channels(t=t0, channels=tuple(infos))
    yield PhaseChange(t=t0, phase="measure", planned_duration_s=seconds)
    iteration_s = 1.0 / rates.iterations_per_s
    log_s = 1.0 / rates.log_lines_per_s
    tick = iteration = line = reports = 0
    next_sample = next_iteration = next_report = t0
    next_line = t0 + log_s
    onset = t0 + seconds * 0.2
    while True:
        t = min(next_sample, next_iteration, next_line, next_report)
        if t > t0 + seconds:
            return
        if t == next_report:
            yield _profile_report(round(t, 6))
            reports += 1
            next_report = t0 + reports * rates.report_every_s
        elif t == next_sample:
            heat = 1 - math.exp(-(t - t0) / 600)
            values: dict[str, float | None] = {
                zone: round(40 + (40 + 2 * k) * heat + rng.uniform(-0.2, 0.2), 1)
                for k, zone in enumerate(zones)
            }
            for cooler in coolers:
                values[cooler] = float(int(max(0.0, heat - 0.6) * 10)) if cooler == CDSP else 0.0
            values[METER] = round(6.0 + rng.uniform(-0.1, 0.1), 3)
            values[CURRENT] = round(-0.8 + rng.uniform(-0.02, 0.02), 3)
            values[VOLTAGE] = 3.9
            yield Sample(t=round(t, 6), seq=tick, values=values)
            tick += 1
            next_sample = t0 + tick * rates.tick_s
        elif t == next_line:
            text = f"{OUTPUT_LINES[line % len(OUTPUT_LINES)]} ({iteration} inferences done)"
            # Command output carries no device time, like a live run's stdout.
            yield Log(seq=line, stream="stdout", text=text)
            line += 1
            next_line = t0 + (line + 1) * log_s
        else:
            slow = 1 + 0.3 * (1 - math.exp(-max(0.0, t - onset) / 120))
            latency = round(iteration_s * 0.4 * slow + rng.uniform(0, iteration_s * 0.04), 6)
            start, end = round(t, 6), round(t + latency, 6)
            yield Iteration(t=end, seq=iteration, index=iteration, start=start, end=end,
                            latency_s=latency)  # fmt: skip
            iteration += 1
            next_iteration = t0 + iteration * iteration_s
