"""How much device time ``run.stop: early`` saves on the simulated board.

Runs a two-variant PrismML sweep against the simulated EVK over real SSH, once
with a planned count (MLPerf mobile's 1,024 queries per variant) and once with
``stop: early`` at a 5% margin, three times each way (ROUNDS), and prints the measured
iterations, the device time of the measurement and the time saved. Usage:
``python bench/early_stop_sim.py [ITERATIONS [ROUNDS]]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.analysis.session import analyze
from qtop.device.plan import RunOptions
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.sim import start_sim
from qtop.transport.factory import make_transport

COMMAND = (
    'qnn-net-run --backend libQnnHtp.so --retrieve_context "$QTOP_SIM_ROOT/$CONTEXT" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" '
    '--output_dir "$QTOP_SIM_ROOT/tmp/out" --num_inferences 2'
)


async def one_run(root: Path, iterations: int, stop: str) -> tuple[int, float]:
    async with start_sim(root / "sim", variant="evk", seed=3) as sim:
        device = "".join(f"  {k}: {v}\n" for k, v in sim.device_overrides().items())
        text = (
            f"name: earlybench\ndevice:\n{device}run:\n  command: '{COMMAND}'\n"
            f"  warmup: 5\n  iterations: {iterations}\n  stop: {stop}\n"
            "  early_stop_margin: 5%\n  variants:\n"
            "    - {name: w8a8, env: {CONTEXT: data/local/tmp/prismml/prismml_w8a8_seq64.bin}}\n"
            "    - {name: w8a16, env: {CONTEXT: data/local/tmp/prismml/prismml_w8a16_seq64.bin}}\n"
        )
        profile = load_profile_text(text, "earlybench.yaml")
        source = LiveSource(
            profile,
            make_transport(profile),
            source_kind="sim",
            backoff=Backoff(initial_s=0.1, maximum_s=0.5),
            run_options=RunOptions(calibrations=3),
        )
        path = root / f"{stop}.jsonl"
        header = await source.start()
        session = Session(source, recorder=RecordingWriter(path, header))
        session.model.apply(header)
        try:
            await session.run()
        finally:
            await source.close()
    analysis = analyze(open_recording(path).events())
    measured = sum(v.measured.count for v in analysis.variants)
    seconds = sum(v.measured.duration_s for v in analysis.variants)
    return measured, seconds


async def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    results: dict[str, list[tuple[int, float]]] = {"planned": [], "early": []}
    for _ in range(rounds):
        for stop in results:
            with tempfile.TemporaryDirectory() as tmp:
                results[stop].append(await one_run(Path(tmp), iterations, stop))
    for stop, runs in results.items():
        counts = [c for c, _ in runs]
        times = [s for _, s in runs]
        print(
            f"{stop:8s} iterations min/median/max {min(counts)}/{statistics.median(counts)}/"
            f"{max(counts)}; measured device time {min(times):.1f}/"
            f"{statistics.median(times):.1f}/{max(times):.1f} s"
        )
    planned = statistics.median(s for _, s in results["planned"])
    early = statistics.median(s for _, s in results["early"])
    print(f"saved: {planned - early:.1f} s of {planned:.1f} s ({1 - early / planned:.0%})")


if __name__ == "__main__":
    asyncio.run(main())
