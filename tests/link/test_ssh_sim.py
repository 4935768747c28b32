"""LiveSource against the simulated board, with faults injected: over real SSH, and again
over adb (the real adb client through the simulated adb server), the same tests."""

import asyncio
import json
import statistics
import time

import pytest

from qtop.device.plan import RunOptions
from qtop.events import Iteration, Link, Sample
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.live.translate import TIMER_OVERHEAD_PREFIX
from qtop.profiles import load_profile_text
from qtop.transport.factory import make_transport

from .helpers import GLASSES_SHELL
from .links import sim_link
from .recording import check_complete, of_kind, record

FAST = Backoff(initial_s=0.1, maximum_s=0.5)
NETRUN = (
    "qnn-net-run --backend libQnnHtp.so --retrieve_context "
    '"$QTOP_SIM_ROOT/data/local/tmp/prismml/prismml_w8a8_seq64.bin" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" '
    '--output_dir "$QTOP_SIM_ROOT/data/local/tmp/prismml/out" --num_inferences {n}'
)


def sim_profile(link, run: str, keepalive: str = ""):
    text = (
        "name: simlink\n"
        "device:\n"
        f"{link.device_yaml()}"
        "  sysfs_root: $QTOP_SIM_SYSFS\n"
        "  sample_interval: 50ms\n"
        f"{keepalive}"
        f"run: {run}\n"
    )
    return load_profile_text(text, "simlink.yaml")


def sim_source(profile, options=None):
    return LiveSource(
        profile,
        make_transport(profile),
        source_kind="sim",
        backoff=FAST,
        run_options=options or RunOptions(calibrations=5),
    )


class FaultInjector:
    """A session observer that injects a fault each time the stream reaches the next count.

    A fault fires only while the link is up, so every fault is one disconnection.
    """

    def __init__(self, source, counts, fault):
        self.source = source
        self.pending = sorted(counts)
        self.fault = fault
        self.injected = 0
        self.seen = 0
        self._tasks = set()

    def __call__(self, batch):
        for event in batch:
            if isinstance(event, Sample | Iteration):
                self.seen += 1
        if self.pending and self.seen >= self.pending[0] and self.source.state.link == "connected":
            self.pending.pop(0)
            self.injected += 1
            task = asyncio.ensure_future(self.fault(self.injected))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)


async def test_a_run_survives_a_dropped_link(tmp_path, transport_kind):
    async with sim_link(tmp_path / "sim", transport_kind, variant="glasses", time_scale=20) as link:
        run = "{command: '" + NETRUN.format(n=2) + "', warmup: 1, iterations: 12}"
        source = sim_source(sim_profile(link, run))
        injector = FaultInjector(source, [10], lambda _: link.drop())
        events = await record(source, tmp_path / "run.jsonl", injector)
    assert injector.injected == 1
    assert events[0]["device"]["transport"].startswith(transport_kind)
    if transport_kind == "adb":
        # The link events say the device went away and that qtop waits for it.
        disconnected = next(e for e in of_kind(events, "link") if e["state"] == "disconnected")
        assert disconnected["detail"].startswith("device QTOPSIM0001 is no longer attached")
        assert disconnected["detail"].endswith("waiting for it to come back")
    check_complete(events, processes=13, faults=1)
    header = events[0]
    assert header["source"] == "sim"
    # The glasses have no bash, as on Android: the agent runs in their sh (mksh).
    assert header["device"]["shell"] == GLASSES_SHELL
    ids = [c["id"] for c in of_kind(events, "channels")[0]["channels"]]
    assert "thermal/nsphvx-0" in ids and "power/battery/power" in ids
    battery = [s["values"]["power/battery/current"] for s in of_kind(events, "sample")]
    assert all(value is not None and value < 0 for value in battery)
    assert all(i["exit_status"] == 0 for i in of_kind(events, "iteration"))


@pytest.mark.slow
async def test_repeated_aborts_and_a_server_restart_lose_nothing(tmp_path, transport_kind):
    async with sim_link(tmp_path / "sim", transport_kind, variant="evk", time_scale=20) as link:
        run = "{command: '" + NETRUN.format(n=3) + "', warmup: 2, iterations: 100}"
        source = sim_source(sim_profile(link, run))

        async def fault(number):
            if number == 3:
                await link.restart_server()
            else:
                await link.drop()

        injector = FaultInjector(source, [15, 40, 65, 90, 115], fault)
        events = await record(source, tmp_path / "run.jsonl", injector)
    assert injector.injected == 5
    check_complete(events, processes=102, faults=5)


@pytest.mark.slow
async def test_a_sustained_run_with_three_disconnects_loses_and_repeats_nothing(
    tmp_path, transport_kind
):
    """Device gone and back three times during a 6 s sustained run: every tick, once."""
    async with sim_link(tmp_path / "sim", transport_kind, variant="glasses", time_scale=20) as link:
        run = "{command: '" + NETRUN.format(n=2) + "', warmup: 1, duration: 6s}"
        source = sim_source(sim_profile(link, run))
        injector = FaultInjector(source, [40, 90, 140], lambda _: link.drop())
        events = await record(source, tmp_path / "run.jsonl", injector)
    assert injector.injected == 3
    processes = len(of_kind(events, "iteration"))
    check_complete(events, processes=processes, faults=3)
    samples = of_kind(events, "sample")
    # 6 s at 50 ms is about 120 ticks, and none was skipped while the link was away.
    assert len(samples) >= 100
    times = [s["t"] for s in samples]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert sum(e["state"] == "reconnecting" for e in of_kind(events, "link")) >= 3


@pytest.mark.slow
async def test_a_silent_drop_is_noticed_by_keepalives_and_resumed(tmp_path, transport_kind):
    async with sim_link(tmp_path / "sim", transport_kind, variant="evk", time_scale=20) as link:
        keepalive = "  keepalive_interval: 300ms\n  keepalive_count_max: 2\n"
        run = "{command: '" + NETRUN.format(n=3) + "', warmup: 0, iterations: 30}"
        profile = await link.silent_profile(sim_profile(link, run, keepalive=keepalive), tmp_path)
        source = sim_source(profile)
        silenced_at = []

        def observe(batch):
            if not silenced_at and any(isinstance(e, Iteration) for e in batch):
                silenced_at.append(time.time())
                link.go_silent()
            if any(isinstance(e, Link) and e.state == "disconnected" for e in batch):
                link.noticed()

        events = await record(source, tmp_path / "run.jsonl", observe)
    check_complete(events, processes=30, faults=1)
    disconnected = next(e for e in of_kind(events, "link") if e["state"] == "disconnected")
    # Keepalives, not the stream, noticed it: never before one keepalive interval went
    # unanswered. How soon after is the machine's load (bench/link_faults.py measures it).
    assert disconnected["host_t"] - silenced_at[0] > 0.3


@pytest.mark.slow
async def test_wall_latency_is_the_stamped_time_less_the_calibrated_overhead(
    tmp_path, transport_kind
):
    """Each latency is the device-stamped wall time less the overhead in effect, which is the
    median of the latest calibration; the stamps enclose the tool's own run.

    30 inferences per process make a realistic qnn-net-run process (~150 ms); the timer is
    calibrated with the default empty command, as on a real board. How close the median
    comes to the simulator's ground truth depends on the machine's load: that figure is
    measured by bench/transport_compare.py and bench/latency_accuracy.py, not asserted here.
    """
    options = {"variant": "glasses", "time_scale": 1, "seed": 3}
    async with sim_link(tmp_path / "sim", transport_kind, **options) as link:
        run = "{command: '" + NETRUN.format(n=30) + "', warmup: 2, iterations: 40}"
        source = sim_source(sim_profile(link, run))
        events = await record(source, tmp_path / "run.jsonl")
        truth = [json.loads(line) for line in link.sim.ground_truth_path.read_text().splitlines()]
    netruns = [t for t in truth if t["tool"] == "qnn-net-run" and "--version" not in t["argv"]]
    device = events[0]["device"]
    first_calibration = device["timer_calibration_s"]
    assert device["timer_overhead_s"] == pytest.approx(statistics.median(first_calibration))
    overhead = None
    iterations = []
    for event in events:
        if event["kind"] == "log" and event["text"].startswith(TIMER_OVERHEAD_PREFIX):
            overhead = float(event["text"].removeprefix(TIMER_OVERHEAD_PREFIX).split()[0])
        elif event["kind"] == "iteration":
            assert overhead is not None, "an iteration before any calibration"
            stamped = event["end"] - event["start"]
            assert event["latency_s"] == pytest.approx(max(0.0, stamped - overhead), abs=1e-9)
            iterations.append(stamped)
    assert len(iterations) == len(netruns) == 42
    # The runner stamps before it starts the process and after it exits, so the stamps
    # enclose the tool's script from its first line to the end of its work, at any load
    # (to the device clock's resolution and the tool's microsecond stamp).
    resolution = device["clock_resolution_s"] + 2e-6
    for stamped, tool in zip(iterations, netruns, strict=True):
        assert stamped >= tool["process_wall_s"] - resolution, (stamped, tool["process_wall_s"])
