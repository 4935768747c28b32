"""How long ``analyze`` takes on a one-hour session: python bench/analysis_speed.py

The session is synthetic but shaped like a real sustained run: 36,000 sampler
ticks (10 Hz for an hour) of 12 channels (eight thermal zones, a cooling
device, battery current, voltage and status) and 20,000 measured iterations
that slow down after a throttling onset. It also times reading the session
back from a recording file, ``compare`` of the session with itself and the
two exports, and prints each figure.
"""

from __future__ import annotations

import io
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.analysis.compare import compare_sessions, parse_gate
from qtop.analysis.session import analyze
from qtop.events import (
    ChannelInfo,
    Channels,
    Event,
    Header,
    Iteration,
    PhaseChange,
    Sample,
    Trip,
)
from qtop.export.csv import write_samples_csv
from qtop.export.perfetto import write_perfetto
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter

HOUR_S = 3600.0
TICK_S = 0.1
ITERATIONS = 20_000
ZONES = [f"thermal/{name}" for name in (
    "nsp-0-0-0-thermal", "nsp-0-1-0-thermal", "nsp-0-2-0-thermal", "cpu-0-0-0-thermal",
    "cpu-0-1-0-thermal", "gpuss-0-thermal", "ddrss-0-thermal", "aoss-0-thermal",
)]  # fmt: skip


def one_hour_session(seed: int = 1) -> list[Event]:
    rng = random.Random(seed)
    infos = [
        ChannelInfo(id=z, kind="temperature", unit="C", trips=(Trip(type="passive", temp_c=105),))
        for z in ZONES
    ]
    infos += [
        ChannelInfo(id="cooling/cdsp", kind="cooling", unit="state", max_state=12),
        ChannelInfo(id="power/battery/current", kind="current", unit="A"),
        ChannelInfo(id="power/battery/voltage", kind="voltage", unit="V"),
        ChannelInfo(id="power/battery/status", kind="battery_status", unit="code"),
    ]
    events: list[Event] = [
        Header(session_id="bench", profile={"name": "bench"}),
        Channels(t=0.0, channels=tuple(infos)),
        PhaseChange(t=0.0, phase="baseline"),
        PhaseChange(t=20.0, phase="measure"),
    ]
    body: list[Event] = []
    for k in range(int(HOUR_S / TICK_S)):
        t = k * TICK_S
        heat = 40 + 55 * (1 - math.exp(-t / 600))
        values: dict[str, float | None] = {z: round(heat - i, 3) for i, z in enumerate(ZONES)}
        values["cooling/cdsp"] = float(min(12, max(0, int((heat - 80) / 2))))
        values["power/battery/current"] = -round(1.2 + 0.1 * rng.random(), 4)
        values["power/battery/voltage"] = 3.8
        values["power/battery/status"] = -1.0
        body.append(Sample(t=t, seq=k, values=values))
    spacing = (HOUR_S - 30) / ITERATIONS
    for index in range(ITERATIONS):
        start = 20 + index * spacing
        slow = 1 + 0.4 * (1 - math.exp(-max(0.0, start - 900) / 400))
        latency = 0.08 * slow * (1 + 0.02 * rng.gauss(0, 1))
        body.append(
            Iteration(
                t=start + latency,
                seq=index,
                index=index,
                start=start,
                end=start + latency,
                latency_s=latency,
            )
        )
    body.sort(key=lambda e: e.t or 0.0)
    return events + body


def best_of(runs: int, action: object) -> float:
    timings = []
    for _ in range(runs):
        began = time.perf_counter()
        action()  # type: ignore[operator]
        timings.append(time.perf_counter() - began)
    return min(timings)


def main() -> None:
    events = one_hour_session()
    samples = sum(1 for e in events if isinstance(e, Sample))
    print(f"session: {samples} samples x 12 channels, {ITERATIONS} iterations, one hour")
    analyze_s = best_of(3, lambda: analyze(events))
    print(f"analyze: {analyze_s:.3f} s (best of 3)")
    analysis = analyze(events)
    gates = [parse_gate("p95=5%"), parse_gate("energy=10%")]
    compare_s = best_of(3, lambda: compare_sessions(analysis, analysis, gates))
    print(f"compare (self, 2000 resamples, 2 gates): {compare_s:.3f} s (best of 3)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hour.jsonl"
        with RecordingWriter(path, events[0]) as writer:  # type: ignore[arg-type]
            for event in events[1:]:
                writer.write(event)
        size_mb = path.stat().st_size / 1e6
        end_to_end_s = best_of(3, lambda: analyze(open_recording(path).events(keyframes=False)))
    print(f"read the {size_mb:.1f} MB recording + analyze: {end_to_end_s:.3f} s (best of 3)")
    csv_s = best_of(1, lambda: write_samples_csv(events, io.StringIO()))
    print(f"export csv: {csv_s:.3f} s")
    perfetto_s = best_of(1, lambda: write_perfetto(events, io.StringIO()))
    print(f"export perfetto: {perfetto_s:.3f} s")
    variant = analysis.variants[0]
    thermal = variant.thermal
    assert thermal is not None
    print(
        f"check: P50 {statistics.median(variant.latencies_s) * 1e3:.2f} ms, onset "
        f"+{thermal.onset_offset_s} s, tau {thermal.fit.tau_s if thermal.fit else None} s"
    )


if __name__ == "__main__":
    main()
