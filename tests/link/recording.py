"""Run a LiveSource to its end into a recording, and check a recording's integrity."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from qtop.device.plan import RunOptions
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.transport.local import LocalTransport


async def record(source: LiveSource, path: Path, observer=None) -> list[dict[str, Any]]:
    header = await source.start()
    recorder = RecordingWriter(path, header)
    session = Session(source, recorder=recorder)
    session.model.apply(header)
    try:
        await session.run(observer)
    finally:
        await source.close()
    return load(path)


def local_source(tmp_path: Path, sysfs: Path, run: str, device_extra: str = "") -> LiveSource:
    """A live session on this machine, sampling every 50 ms (``run``: the profile's run
    mapping; ``device_extra``: more ``device`` keys, each after a comma)."""
    profile = load_profile_text(
        f"device: {{sysfs_root: '{sysfs}', spool_dir: '{tmp_path / 'spool'}', "
        f"sample_interval: 50ms{device_extra}}}\nrun: {run}\n",
        "local.yaml",
    )
    return LiveSource(
        profile,
        LocalTransport(),
        run_options=RunOptions(calibrations=3),
        backoff=Backoff(initial_s=0.05, maximum_s=0.2),
    )


async def warnings_of_a_short_local_run(
    tmp_path: Path, sysfs: Path, device_extra: str = ""
) -> list[str]:
    """The warnings a two-iteration run on this machine records."""
    source = local_source(
        tmp_path,
        sysfs,
        "{command: 'sleep 0.01', warmup: 0, iterations: 2, min_iterations: 2}",
        device_extra,
    )
    events = await record(source, tmp_path / "run.jsonl")
    assert events[-1]["reason"] == "completed"
    return [e["text"] for e in of_kind(events, "log") if e["level"] == "warning"]


def load(path: Path) -> list[dict[str, Any]]:
    """Every event of a recording as its dict (runs packed in one line come out one by one)."""
    return [event.to_dict() for event in open_recording(path).events()]


def of_kind(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def check_complete(events: list[dict[str, Any]], processes: int, faults: int) -> None:
    """Contiguous, unduplicated samples and iterations; every fault (at least) noticed and
    resumed; no line lost; run completed."""
    assert events[0]["kind"] == "header" and events[-1]["kind"] == "end"
    samples = [e["seq"] for e in of_kind(events, "sample")]
    assert samples == list(range(len(samples))), "sample seq not contiguous from 0"
    iterations = [e["seq"] for e in of_kind(events, "iteration")]
    assert iterations == list(range(processes))
    links = Counter(e["state"] for e in of_kind(events, "link"))
    # Every fault is noticed; on a loaded machine a keepalive may also time out on a link
    # that was only slow, which is one more drop, and it must be resumed like the others.
    assert links["disconnected"] >= faults
    assert links["reconnected"] == links["disconnected"]
    # A sampler starved of CPU (a simulated board on a busy machine) skips ticks and says
    # so: that is the device's load, not a loss. A line missing from a file is a loss.
    gaps = [e["detail"] for e in of_kind(events, "link") if e["state"] == "gap"]
    assert all("the sampler fell behind" in detail for detail in gaps), gaps
    end = events[-1]
    assert end["reason"] == "completed", end
    assert end["counts"]["reconnects"] == links["reconnected"]
    assert end["counts"]["samples"] == len(samples)
    assert end["counts"]["iterations"] == processes
    assert "lost_lines" not in end["counts"]
