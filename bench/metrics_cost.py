"""What the metrics endpoint costs a session: python bench/metrics_cost.py

A synthetic session at the demo's rates (10 Hz ticks of 30 channels: 26
thermal zones, 3 cooling devices, an external power meter; 200 measured
iterations a second) is folded through ``Session.consume`` on an asyncio loop,
as a live run does, with the endpoint of ``--metrics-listen`` watching it.

- per event: events/s folded with no endpoint, with the endpoint watching
  and nobody scraping, and with a scraper asking back to back (the worst case);
- per scrape, after 1, 10 and 60 minutes of session: the time the session's
  loop spends copying the model (the only work done on the loop), the CPU the
  scrape's thread spends turning the copy into the exposition (analysis
  included), the whole HTTP round trip, and the size of the answer.

Each figure is min / median / max of 3 runs.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prometheus_client import CollectorRegistry, generate_latest

from qtop.events import ChannelInfo, Channels, Event, Header, Iteration, PhaseChange, Sample, Trip
from qtop.metrics.address import parse_listen
from qtop.metrics.server import MetricsServer
from qtop.session import Session

TICK_S = 0.1
ITERATIONS_PER_TICK = 20
BASELINE_S = 10.0
ZONES = [f"thermal/zone-{k}-thermal" for k in range(26)]
COOLING = [f"cooling/cdev-{k}" for k in range(3)]
METER = "meter/ina226/power"
EVENTS_PER_S = (1 + ITERATIONS_PER_TICK) / TICK_S
RUNS = 3
FOLD_S = 300.0


def channels() -> Channels:
    infos = [
        ChannelInfo(id=z, kind="temperature", unit="C", trips=(Trip(type="passive", temp_c=105),))
        for z in ZONES
    ]
    infos += [ChannelInfo(id=c, kind="cooling", unit="state", max_state=10) for c in COOLING]
    infos.append(ChannelInfo(id=METER, kind="power", unit="W"))
    return Channels(t=0.0, channels=tuple(infos))


def stream(seconds: float, start_tick: int = 0, seed: int = 1) -> Iterator[Event]:
    """``seconds`` of session from tick ``start_tick``: samples, phases and iterations."""
    rng = random.Random(seed + start_tick)
    seq = start_tick * ITERATIONS_PER_TICK
    for tick in range(start_tick, start_tick + round(seconds / TICK_S)):
        t = tick * TICK_S
        if tick == round(BASELINE_S / TICK_S):
            yield PhaseChange(t=t, phase="measure", variant="w8a8", planned_duration_s=3600)
        heat = 1 - 2.718 ** (-max(0.0, t - BASELINE_S) / 600)
        values: dict[str, float | None] = {
            z: round(40 + 50 * heat + rng.random(), 1) for z in ZONES
        }
        values.update({c: float(heat > 0.8) for c in COOLING})
        values[METER] = round((6.0 if t >= BASELINE_S else 2.0) + rng.random() * 0.1, 3)
        yield Sample(t=t, seq=tick, values=values)
        if t < BASELINE_S:
            continue
        for k in range(ITERATIONS_PER_TICK):
            latency = 0.004 * (1 + 0.3 * heat) + rng.random() * 0.0005
            end = t + (k + 1) * TICK_S / ITERATIONS_PER_TICK
            yield Iteration(t=end, seq=seq, index=seq, variant="w8a8", start=end - latency,
                            end=end, latency_s=latency)  # fmt: skip
            seq += 1


def opening() -> list[Event]:
    header = Header(session_id="bench", source="bench", profile={"name": "bench"},
                    device={"hostname": "bench-board"})  # fmt: skip
    return [header, channels(), PhaseChange(t=0.0, phase="baseline", note="idle power")]


async def fold(session: Session, events: Iterator[Event]) -> tuple[int, float, float]:
    """Consume events on the loop, yielding to it every 50 as a source's reads would.

    Returns the count, the wall time, and the loop thread's own CPU time (which
    leaves out other threads, and the time spent waiting for the interpreter lock).
    """
    count = 0
    started, cpu_started = time.perf_counter(), time.thread_time()
    for event in events:
        session.consume(event)
        count += 1
        if count % 50 == 0:
            await asyncio.sleep(0)
    return count, time.perf_counter() - started, time.thread_time() - cpu_started


def scrape(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    scaled = [v * scale for v in values]
    return " / ".join(f"{v:.{digits}f}" for v in (min(scaled), statistics.median(scaled),
                                                  max(scaled)))  # fmt: skip


async def events_per_second(endpoint: bool, scraping: bool) -> tuple[float, float]:
    """(events/s, loop CPU seconds per event) folding FOLD_S of session."""
    session = Session(source=None)  # type: ignore[arg-type]
    server = MetricsServer.start(parse_listen("127.0.0.1:0")) if endpoint else None
    stop = threading.Event()
    scraper = None
    try:
        for event in opening():
            session.consume(event)
        if server is not None:
            server.watch(session.model)
        if scraping and server is not None:
            url = server.url

            def keep_scraping() -> None:
                while not stop.is_set():
                    scrape(url)

            scraper = threading.Thread(target=keep_scraping, daemon=True)
            scraper.start()
        count, elapsed, cpu = await fold(session, stream(FOLD_S))
        return count / elapsed, cpu / count
    finally:
        stop.set()
        if server is not None:
            await server.close()
        if scraper is not None:
            scraper.join()


def thread_cpu(work: Callable[[], bytes]) -> tuple[float, bytes]:
    """CPU seconds ``work`` takes on a thread of its own (as a scrape runs), and its result."""
    out: dict[str, object] = {}

    def run() -> None:
        started = time.thread_time()
        out["result"] = work()
        out["cpu"] = time.thread_time() - started

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out["cpu"], out["result"]  # type: ignore[return-value]


async def scrape_costs(minutes: tuple[int, ...]) -> dict[int, dict[str, list[float]]]:
    session = Session(source=None)  # type: ignore[arg-type]
    server = MetricsServer.start(parse_listen("127.0.0.1:0"))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(server.collector)
    figures: dict[int, dict[str, list[float]]] = {}
    try:
        for event in opening():
            session.consume(event)
        server.watch(session.model)
        done_s = 0.0
        for minute in minutes:
            await fold(session, stream(minute * 60 - done_s, round(done_s / TICK_S)))
            done_s = minute * 60.0
            row: dict[str, list[float]] = {"copy": [], "cpu": [], "http": [], "bytes": []}
            for _ in range(RUNS):
                cpu, text = await asyncio.to_thread(thread_cpu, lambda: generate_latest(registry))
                capture = server.collector.last_capture
                assert capture is not None
                row["copy"].append(capture.copy_s)
                row["cpu"].append(cpu)
                row["bytes"].append(len(text))
                started = time.perf_counter()
                await asyncio.to_thread(scrape, server.url)
                row["http"].append(time.perf_counter() - started)
            row["events"] = [float(session.model.event_count)]
            figures[minute] = row
    finally:
        await server.close()
    return figures


async def main() -> None:
    print(
        f"session at the demo's rates: {len(ZONES) + len(COOLING) + 1} channels at "
        f"{1 / TICK_S:.0f} Hz, {ITERATIONS_PER_TICK / TICK_S:.0f} iterations/s "
        f"({EVENTS_PER_S:.0f} events/s); min / median / max of {RUNS} runs\n"
    )
    print(f"folding {FOLD_S / 60:.0f} minutes of session ({EVENTS_PER_S * FOLD_S:,.0f} events):")
    print("  setup                            loop CPU us/event     at 210/s   events/s (wall)")
    setups = (
        ("no endpoint", False, False),
        ("endpoint watching, no scrapes", True, False),
        ("endpoint, scraped back to back", True, True),
    )
    found: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in setups}
    for _ in range(RUNS):  # interleaved, so a drift of the machine hits every setup alike
        for label, endpoint, scraping in setups:
            found[label].append(await events_per_second(endpoint, scraping))
    for label, runs in found.items():
        rates, cpu = [r for r, _ in runs], [c for _, c in runs]
        share = statistics.median(cpu) * EVENTS_PER_S * 100
        print(f"  {label:32} {spread(cpu, 1e6):20}  {share:.2f}%      {spread(rates, 1, 0)}")
    print("\nper scrape, as the session grows:")
    print("  session   events      loop copy ms       scrape thread CPU ms   HTTP round trip ms"
          "   answer KB")  # fmt: skip
    for minute, row in (await scrape_costs((1, 10, 60))).items():
        print(
            f"  {minute:3d} min  {int(row['events'][0]):8,d}   {spread(row['copy'], 1e3):17}  "
            f"{spread(row['cpu'], 1e3):21}  {spread(row['http'], 1e3):19}  "
            f"{statistics.median(row['bytes']) / 1024:.1f}"
        )
        cpu = statistics.median(row["cpu"])
        print(f"           a scrape every 15 s: {cpu / 15 * 100:.2f}% of a core; every 1 s: "
              f"{cpu * 100:.1f}%")  # fmt: skip
    print("\nThe loop copy is the only pause the session (and the UI) sees.")


if __name__ == "__main__":
    asyncio.run(main())
