"""An hour of ``qtop demo``, synthesised at the demo's measured rates: python bench/demo_hour.py

The recording benches (size, decode, report, open and seek) run on this hour.
Its shapes come from a real demo recording (``bench/data/demo_capture.jsonl``:
the header, the 24 channels, the phases, the agent and warning lines, one
qnn-net-run process's 28 stdout lines and 20 iterations, one profiler report);
its rates are the ones measured on a 60 s ``qtop demo --headless`` run on the
standard machine (``DEMO_RATES``; ``--measure`` runs the demo again and prints
them). Events go through ``Session`` and ``RecordingWriter`` exactly as a live
session's do, so the file has the keyframes a live session writes.

Per process, as in the demo: 28 stdout lines (the same 8 header lines, a
``pid`` line, 20 ``Graph ... finished`` lines and ``Finished Executing
Graphs``), then 20 inferences placed back to back (2 warm-up, 18 measured)
with microsecond latencies that slow down as the NSP heats and throttles.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.events import (
    RECORDING_VERSION,
    End,
    Event,
    Header,
    Iteration,
    Log,
    PhaseChange,
    ProfileReport,
    Sample,
    event_from_dict,
)
from qtop.live.profiler_timing import place_back_to_back
from qtop.record.writer import RecordingWriter
from qtop.session import Session

try:
    from qtop.events import replace
except ImportError:  # qtop before the msgspec events: run the same hour on it for a baseline
    from dataclasses import replace  # type: ignore[assignment]

CAPTURE = Path(__file__).resolve().parent / "data" / "demo_capture.jsonl"

# Measured on `qtop demo --headless --duration 60s` (748 processes in 60.2 s of device time).
DEMO_RATES = {
    "processes_per_s": 748 / 60.2,
    "stdout_lines_per_process": 28,
    "inferences_per_process": 20,
    "warmup_per_process": 2,
    "sample_hz": 10.0,
    "profile_report_every_s": 30.0,
}
PROCESS_OVERHEAD_US = 26_000  # start, context load and de-init around the executes
HOUR_S = 3600.0


def _load_capture() -> dict[str, Any]:
    lines = [json.loads(line) for line in CAPTURE.read_text().splitlines()]
    by_kind: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for data in lines:
        by_kind[data["kind"]].append(data)
    stdout = [d["text"] for d in by_kind["log"] if d["stream"] == "stdout"]
    return {
        "header": event_from_dict(by_kind["header"][0]),
        "channels": event_from_dict(by_kind["channels"][0]),
        "agent": [event_from_dict(d) for d in by_kind["log"] if d["stream"] == "agent"],
        "warnings": [event_from_dict(d) for d in by_kind["log"] if d["stream"] == "qtop"],
        "stdout": stdout,
        "report": by_kind["profile_report"][0],
    }


def _scaled_report(template: dict[str, Any], factor: float) -> dict[str, Any]:
    """The captured report with every microsecond figure scaled (later reports differ)."""
    report = copy.deepcopy(template)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("unit") == "us" and isinstance(node.get("value"), int):
                node["value"] = round(node["value"] * factor)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(report)
    return report


class _Board:
    """Temperatures, throttling and latency of the demo board, as plain functions of time."""

    def __init__(self, channels: list[str], seed: int) -> None:
        self.channels = channels
        self.rng = random.Random(seed)

    def heat(self, elapsed: float) -> float:
        return 1 - math.exp(-elapsed / 600)

    def cdsp(self, elapsed: float) -> int:
        nsp = 42 + 66 * self.heat(elapsed)
        return 0 if nsp < 100 else min(3, int((nsp - 100) / 2) + 1)

    def latency_us(self, elapsed: float) -> int:
        slow = 1 + 0.05 * self.cdsp(elapsed) + 0.08 * self.heat(elapsed)
        return max(1500, round(2290 * slow * (1 + 0.04 * self.rng.gauss(0, 1))))

    def sample(self, elapsed: float, process_running: bool) -> dict[str, float | None]:
        heat = self.heat(elapsed)
        state = self.cdsp(elapsed)
        values: dict[str, float | None] = {}
        for position, channel in enumerate(self.channels):
            jitter = self.rng.uniform(-0.3, 0.3)
            if channel.startswith("thermal/nsp-0"):
                values[channel] = round(42 + 66 * heat - 1.5 * state + jitter, 1)
            elif channel.startswith("thermal/"):
                values[channel] = round(41 + 16 * heat + position * 0.1 + jitter, 1)
            elif channel == "cooling/cdsp":
                values[channel] = float(state)
            elif channel.startswith("cooling/"):
                values[channel] = 0.0
            elif channel.startswith("cpufreq/"):
                values[channel] = 2361.6 if self.rng.random() < 0.93 else 1171.2
            elif process_running:
                values[channel] = self.rng.choice((2875, 2988, 3068, 3164)) / 1024
            else:
                values[channel] = None
        return values


def demo_hour_events(seconds: float = HOUR_S, seed: int = 1) -> tuple[Header, Iterator[Event]]:
    """The header and, lazily, every later event of ``seconds`` of the demo."""
    capture = _load_capture()
    header: Header = capture["header"]
    run = dict(header.profile.get("run", {}))
    run["duration_s"] = seconds
    header = replace(header, version=RECORDING_VERSION, profile={**header.profile, "run": run})

    def events() -> Iterator[Event]:
        channels = capture["channels"]
        ids = [c.id for c in channels.channels]
        board = _Board(ids, seed)
        rng = board.rng
        t0_us = 342_730_056
        wall0 = 1796121717.7819898

        def host(t_us: int, delay_us: float) -> float:
            return wall0 + (t_us - t0_us + delay_us) / 1e6

        yield replace(channels, host_t=host(t0_us, -12_000))
        log_seq = 0
        sample_seq = 0
        next_sample_us = t0_us

        def samples_until(t_us: int, running: bool) -> Iterator[Event]:
            nonlocal sample_seq, next_sample_us
            while next_sample_us <= t_us:
                at = next_sample_us + rng.randint(0, 400)
                values = board.sample((at - t0_us) / 1e6, running)
                yield Sample(t=at / 1e6, host_t=host(at, 1_500), seq=sample_seq, values=values)
                sample_seq += 1
                next_sample_us += 100_000

        yield from samples_until(t0_us, False)
        for agent in capture["agent"]:
            yield replace(agent, t=(t0_us + 50_396) / 1e6, host_t=host(t0_us, 51_000), seq=0)
            log_seq = 1
        yield PhaseChange(t=(t0_us + 50_789) / 1e6, host_t=host(t0_us, 51_800), phase="cooldown",
                          note="until nsp* below 60 C")  # fmt: skip
        yield PhaseChange(t=(t0_us + 50_973) / 1e6, host_t=host(t0_us, 53_900), phase="measure",
                          planned_duration_s=seconds)  # fmt: skip
        period_us = 1e6 / DEMO_RATES["processes_per_s"]
        per_process = DEMO_RATES["inferences_per_process"]
        warmup = DEMO_RATES["warmup_per_process"]
        stdout = capture["stdout"]
        fixed = stdout[1:7]
        finished_text = stdout[7]
        closing = stdout[-1]
        iteration_seq = 0
        index = {"warmup": 0, "measure": 0}
        next_report_s = 0.0
        warned = False
        process = 0
        pid = 16669
        start_us = t0_us + 57_000
        end_us_limit = t0_us + int(seconds * 1e6)
        while start_us < end_us_limit:
            elapsed = (start_us - t0_us) / 1e6
            latencies_us = [board.latency_us(elapsed) for _ in range(per_process)]
            end_us = start_us + sum(latencies_us) + PROCESS_OVERHEAD_US
            # Stdout lines arrive while the process runs; samples interleave by time.
            texts = [f"qnn-net-run pid:{pid}", *fixed]
            times = [start_us + 100 + 3 * i for i in range(len(texts))]
            cursor = start_us + 15_000
            for latency in latencies_us:
                cursor += latency
                texts.append(finished_text)
                times.append(cursor)
            texts.append(closing)
            times.append(cursor + 8)
            for text, at in zip(texts, times, strict=True):
                yield from samples_until(at, True)
                yield Log(host_t=host(at, 1_200 + rng.random() * 40), seq=log_seq, text=text)
                log_seq += 1
            yield from samples_until(end_us, True)
            spans = place_back_to_back(
                [lat / 1e6 for lat in latencies_us], start_us / 1e6, end_us / 1e6, 0.0035
            )
            burst_host = host(end_us, 6_000)
            for position, ((begin, finish), latency) in enumerate(
                zip(spans, latencies_us, strict=True)
            ):
                phase = "warmup" if position < warmup else "measure"
                yield Iteration(
                    t=finish,
                    host_t=burst_host + position * 2.7e-6,
                    seq=iteration_seq,
                    index=index[phase],
                    phase=phase,
                    start=begin,
                    end=finish,
                    latency_s=latency / 1e6,
                )
                index[phase] += 1
                iteration_seq += 1
            if elapsed >= next_report_s:
                factor = latencies_us[-1] / 2290
                report = capture["report"]
                yield ProfileReport(
                    t=end_us / 1e6 + 0.0027,
                    host_t=burst_host + 8.3e-5,
                    source_kind=report["source_kind"],
                    path=report["path"],
                    report=_scaled_report(report["report"], factor),
                )
                next_report_s += DEMO_RATES["profile_report_every_s"]
            if not warned and elapsed >= 1.35:
                warned = True
                for warning in capture["warnings"]:
                    yield replace(warning, t=end_us / 1e6, host_t=host(end_us, 1_300), seq=log_seq)
                    log_seq += 1
            process += 1
            pid += 9 + rng.randint(0, 8)
            start_us = t0_us + 57_000 + round(process * period_us) + rng.randint(0, 300)
        yield from samples_until(start_us, False)
        yield PhaseChange(t=start_us / 1e6, host_t=host(start_us, 1_500), phase="done")

    return header, events()


def write_demo_hour(path: Path, seconds: float = HOUR_S, seed: int = 1) -> dict[str, float]:
    """Write the synthetic demo hour like a live session; returns the rates it ran at."""
    header, events = demo_hour_events(seconds, seed)
    writer = RecordingWriter(path, header)
    session = Session(source=None, recorder=writer)  # type: ignore[arg-type]
    session.model.apply(header)
    counts: collections.Counter[str] = collections.Counter()
    first = last = None
    for event in events:
        counts[event.kind] += 1
        if event.t is not None:
            first = event.t if first is None else first
            last = event.t
        session.consume(event)
    session.close_recording(End(t=last, reason="completed"))
    span = (last or 0.0) - (first or 0.0)
    rates = {f"{kind}/s": count / span for kind, count in counts.items()}
    rates["device_seconds"] = span
    rates["channels"] = len(session.model.channels)
    rates["events"] = sum(counts.values())
    return rates


def describe_rates(rates: dict[str, float]) -> str:
    per_second = ", ".join(
        f"{key[:-2]} {value:.1f}/s" for key, value in sorted(rates.items()) if key.endswith("/s")
    )
    return (
        f"{rates['device_seconds']:.0f} device seconds, {rates['events']:,.0f} events "
        f"({per_second}; samples of {rates['channels']:.0f} channels)"
    )


def measure_demo(seconds: int = 60) -> None:
    """Run the real demo headless and print its events per kind per second."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "demo.jsonl"
        subprocess.run(
            [sys.executable, "-m", "qtop", "demo", "--headless", "--duration", f"{seconds}s",
             "--record", str(path)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        counts: collections.Counter[str] = collections.Counter()
        times = []
        size = path.stat().st_size
        with path.open("rb") as stream:
            for line in stream:
                data = json.loads(line)
                counts[data["kind"]] += 1
                if isinstance(data.get("t"), float):
                    times.append(data["t"])
        span = max(times) - min(times)
        print(f"qtop demo, {span:.1f} device seconds, {size / 1e6:.1f} MB:")
        for kind, count in counts.most_common():
            print(f"  {kind:15} {count:7d}  {count / span:8.1f}/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", action="store_true", help="run the real demo, print rates")
    parser.add_argument("--out", type=Path, help="write the synthetic hour here")
    parser.add_argument("--seconds", type=float, default=HOUR_S)
    args = parser.parse_args()
    if args.measure:
        measure_demo()
        return
    out = args.out or Path(tempfile.mkdtemp()) / "demo-hour.jsonl"
    began = time.monotonic()
    rates = write_demo_hour(out, args.seconds)
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB in {time.monotonic() - began:.0f} s")
    print(describe_rates(rates))


if __name__ == "__main__":
    main()
