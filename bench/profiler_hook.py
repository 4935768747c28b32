"""What the profiler hooks cost: python bench/profiler_hook.py [PROCESSES]

Runs the shipped ``sim-evk`` profile (qnn-net-run with HTP linting, 20 executes
per process, ``latency_source: execute_stats``) against the simulated board
over real SSH and prints:

* the hook's time per process on the host (viewer exec over SSH, parse, events);
* the size of the viewer's text and of one ``profile_report`` event;
* the device-side gap between one process's end and the next one's start, with
  the profiler output moved into the run directory (one ``mv`` per file) and
  without a profiler at all, so the cost of the move shows.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

from qtop.device.plan import RunOptions
from qtop.device.protocol import ProcessLine, parse_line
from qtop.events import ProfileReport
from qtop.live.profiler_hooks import profiler_hook_for
from qtop.live.source import LiveSource
from qtop.profiles import Profile, load_profile, resolve_profile
from qtop.sim import start_sim
from qtop.transport.ssh import SSHTarget, SSHTransport


class TimedHook:
    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.seconds: list[float] = []
        self.report_bytes: list[int] = []

    async def __call__(self, exit: object, device: object) -> object:
        started = time.perf_counter()
        result = await self.inner(exit, device)  # type: ignore[operator]
        self.seconds.append(time.perf_counter() - started)
        for event in result.events:
            if isinstance(event, ProfileReport):
                self.report_bytes.append(len(json.dumps(event.to_dict())))
        return result


async def run(profile: Profile, hook: object | None) -> list[float]:
    """The run's device-side gaps between processes (seconds)."""
    transport = SSHTransport(SSHTarget.from_profile(profile.device))
    source = LiveSource(
        profile,
        transport,
        hook=hook,  # type: ignore[arg-type]
        run_options=RunOptions(calibrations=3),
        remove_when_done=False,
    )
    await source.start()
    async for _ in source.events():
        pass
    await source.close()
    assert source.state.run_dir is not None
    lines = Path(source.state.run_dir, "events").read_text().splitlines()
    processes = [p for p in map(parse_line, lines) if isinstance(p, ProcessLine)]
    return [(b.start_us - a.end_us) / 1e6 for a, b in itertools.pairwise(processes)]


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(values) * 1e3:.2f} ms, p95 {p95 * 1e3:.2f} ms"


async def main(processes: int) -> None:
    with tempfile.TemporaryDirectory() as state:
        async with start_sim(state, variant="evk", time_scale=10) as sim:
            base = load_profile(resolve_profile("sim-evk")).replace_device(**sim.device_overrides())
            profile = base.replace_run(warmup=2, iterations=18 * processes, cooldown=None)
            hook = TimedHook(profiler_hook_for(profile))
            gaps = await run(profile, hook)
            viewer = Path(sim.ground_truth_path).read_text().count("qnn-profile-viewer")
            wall = base.replace_run(
                latency_source="wall", profiler=None, warmup=0, iterations=processes, cooldown=None
            )
            plain_gaps = await run(wall, None)
    print(f"processes: {len(hook.seconds)} (viewer runs {viewer})")
    print(f"hook per process: {ms(hook.seconds)}")
    print(f"profile_report event: {statistics.median(hook.report_bytes) / 1e3:.1f} kB")
    print(f"gap between processes, output moved: {ms(gaps)}")
    print(f"gap between processes, no profiler:  {ms(plain_gaps)}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
