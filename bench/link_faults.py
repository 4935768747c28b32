"""The link under faults, against the simulated board: python bench/link_faults.py
[--transport ssh|adb|both]

Prints, per transport (SSH, and adb through the real adb client and the
simulated adb server):
- how long a silent drop takes to be noticed with keepalives every 0.5 s and
  2 unanswered, and how long until the stream resumes, over several drops
  (SSH: a TCP proxy that stops forwarding, no FIN or RST; adb: a frozen link,
  whose network comes back once the drop is noticed);
- the accuracy of wall latency against the simulator's ground truth: the
  median residual over several runs with the default timer calibration, for
  short (3 inferences) and realistic (30) qnn-net-run processes, next to the
  tolerance max(1 %, 0.2 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from link.links import sim_link

from qtop.events import Iteration, Link
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.transport.factory import make_transport

NETRUN = (
    "qnn-net-run --backend libQnnHtp.so --retrieve_context "
    '"$QTOP_SIM_ROOT/data/local/tmp/prismml/prismml_w8a8_seq64.bin" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" --num_inferences {n}'
)


def profile(link, run: str, extra: str = ""):
    return load_profile_text(
        f"name: bench\ndevice:\n{link.device_yaml()}  sysfs_root: $QTOP_SIM_SYSFS\n"
        f"  sample_interval: 100ms\n{extra}run: {run}\n"
    )


async def silent_drops(kind: str, drops: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        async with sim_link(Path(tmp) / "sim", kind, variant="evk", time_scale=10) as link:
            run = "{command: '" + NETRUN.format(n=5) + "', warmup: 0, iterations: 400}"
            keepalive = "  keepalive_interval: 500ms\n  keepalive_count_max: 2\n"
            used = await link.silent_profile(profile(link, run, keepalive), Path(tmp))
            source = LiveSource(used, make_transport(used), backoff=Backoff(0.2, 1.0))
            await source.start()
            detect, resume = [], []
            silenced = None
            iterations_since = 0
            async for event in source.events():
                if isinstance(event, Iteration):
                    iterations_since += 1
                    if silenced is None and iterations_since >= 20 and len(detect) < drops:
                        silenced = time.monotonic()
                        link.go_silent()
                if isinstance(event, Link) and event.state == "disconnected" and silenced:
                    detect.append(time.monotonic() - silenced)
                    link.noticed()
                if isinstance(event, Link) and event.state == "reconnected" and silenced:
                    resume.append(time.monotonic() - silenced)
                    silenced, iterations_since = None, 0
                    if len(resume) == drops:
                        await source.stop_run()
            await source.close()
            return detect, resume


async def accuracy(kind: str, inferences: int, runs: int) -> list[tuple[float, float]]:
    """Median residual of measured wall latency against the ground truth, per run."""
    results = []
    for seed in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            async with sim_link(Path(tmp) / "sim", kind, variant="glasses", seed=seed) as link:
                run = "{command: '" + NETRUN.format(n=inferences) + "', warmup: 2, iterations: 40}"
                used = profile(link, run)
                source = LiveSource(used, make_transport(used))
                await source.start()
                measured = [e.latency_s async for e in source.events()
                            if isinstance(e, Iteration) and e.phase == "measure"]  # fmt: skip
                await source.close()
                truth = [json.loads(x) for x in link.ground_truth_path.read_text().splitlines()]
            netruns = [
                t for t in truth if t["tool"] == "qnn-net-run" and "--version" not in t["argv"]
            ]
            true_median = statistics.median(t["wall_s"] for t in netruns[2:])
            results.append((statistics.median(measured) - true_median, true_median))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("ssh", "adb", "both"), default="both")
    parser.add_argument("--drops", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    kinds = ["ssh", "adb"] if args.transport == "both" else [args.transport]
    for kind in kinds:
        detect, resume = asyncio.run(silent_drops(kind, args.drops))
        print(f"[{kind}] silent drop, keepalive 0.5 s x 2:")
        print(f"  noticed after   {', '.join(f'{d:.2f}' for d in detect)} s")
        print(f"  resumed after   {', '.join(f'{r:.2f}' for r in resume)} s")
    for kind in kinds:
        print(f"[{kind}] wall latency vs the ground truth (default calibration, median of 40):")
        for inferences in (3, 30):
            for residual, true_median in asyncio.run(accuracy(kind, inferences, args.runs)):
                tolerance = max(0.01 * true_median, 0.0002)
                print(
                    f"  {inferences:2d} inferences/process: true {true_median * 1e3:7.3f} ms, "
                    f"residual {residual * 1e3:+.3f} ms, tolerance {tolerance * 1e3:.3f} ms"
                )


if __name__ == "__main__":
    main()
