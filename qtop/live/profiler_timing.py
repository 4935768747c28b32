"""Pure helpers of the profiler hooks: inferences from executes, their place in time, exit text.

A profiling log gives each execute's latency but not when it ran. The hooks
place the executes of a process back to back, the last ending where the
process's de-init began (its end minus the log's ``De-Init Stats`` time, or
its end when the log has none), never before the process started. These are
approximate positions for the timeline; the latency is the profiler's own.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence

from qtop.live.translate import ProcessExit
from qtop.profiling.latency import execute_latencies
from qtop.profiling.model import ParsedProfile, metric_key

# A process that timed out but exited 0 (it handled the SIGINT) gets the status
# timeout(1) uses, so its iterations count as failed.
TIMEOUT_STATUS = 124
# A process that exited 0 but left nothing to measure.
NO_MEASUREMENT_STATUS = -1


def inference_latencies(profiles: Sequence[ParsedProfile]) -> tuple[list[float], str]:
    """Per-inference latencies of one process, and a note when they had to be guessed.

    One graph: one inference per execute. Several graphs (a split model, one log
    per context): inference k runs execute k of every graph, so its latency is
    their sum. Graphs with different execute counts cannot be paired; then every
    execute is an inference of its own, and the note says so.
    """
    per_graph: dict[tuple[int, str], list[float]] = {}
    for number, profile in enumerate(profiles):
        for item in execute_latencies(profile):
            per_graph.setdefault((number, item.graph), []).append(item.latency_s)
    lists = list(per_graph.values())
    if len(lists) <= 1:
        return (lists[0] if lists else []), ""
    counts = {len(values) for values in lists}
    if len(counts) == 1:
        return [sum(values) for values in zip(*lists, strict=True)], ""
    graphs = ", ".join(f"{name} ({len(v)})" for (_, name), v in per_graph.items())
    note = (
        f"the graphs ran different numbers of executes ({graphs}), so they cannot be paired "
        "into inferences: each execute counts as one iteration"
    )
    return [latency for values in lists for latency in values], note


def section_us(profile: ParsedProfile, section: str, metric: str) -> float | None:
    """A time metric of a named section (``De-Init Stats`` NetRun, ``GenieDialog_free``)."""
    key = metric_key(metric)
    total = None
    for item in profile.sections:
        if item.name != section:
            continue
        for value in item.metrics:
            microseconds = value.in_us() if value.key == key else None
            if microseconds is not None:
                total = (total or 0.0) + microseconds
                break
    return total


def deinit_s(profiles: Sequence[ParsedProfile]) -> float:
    """The longest de-init among the process's logs (they run at its end), in seconds."""
    times = [section_us(p, "De-Init Stats", "NetRun") for p in profiles]
    return max((t for t in times if t is not None), default=0.0) / 1e6


def genie_tail_s(profile: ParsedProfile) -> float:
    """What Genie did after its queries: freeing the dialog (seconds)."""
    return (section_us(profile, "GenieDialog_free", "duration") or 0.0) / 1e6


def place_back_to_back(
    latencies: Sequence[float], start: float, end: float, tail_s: float = 0.0
) -> list[tuple[float, float]]:
    """(start, end) of each latency, back to back, ending ``tail_s`` before ``end``.

    Never before ``start`` and never after ``end``: when the latencies add up to
    more than the process lasted, they start at ``start`` and the last are cut
    at ``end``.
    """
    last_end = max(start, end - max(0.0, tail_s))
    cursor = max(start, last_end - sum(latencies))
    spans = []
    for latency in latencies:
        spans.append((min(cursor, end), min(cursor + latency, end)))
        cursor += latency
    return spans


def process_status(exit: ProcessExit) -> int:
    """The status an iteration of this process carries (a timeout is a failure)."""
    if exit.exit_status == 0 and exit.timed_out:
        return TIMEOUT_STATUS
    return exit.exit_status


def describe_exit(exit: ProcessExit, timeout_s: float | None) -> str:
    """How the process ended, in words: 'timed out after 5 s and was stopped ...'."""
    if exit.timed_out:
        limit = f" after {timeout_s:g} s" if timeout_s else ""
        how = f"timed out{limit} and was stopped (SIGINT, then SIGTERM, then SIGKILL)"
        return how + (f", exit status {exit.exit_status}" if exit.exit_status else "")
    status = exit.exit_status
    if 128 < status < 128 + 65:
        try:
            name = signal.Signals(status - 128).name
        except ValueError:
            name = f"signal {status - 128}"
        return f"was killed by {name} (exit status {status})"
    if status != 0:
        return f"exited with status {status}"
    return "exited cleanly (status 0)"


def stderr_text(exit: ProcessExit, limit: int = 2000) -> str:
    return "\n".join(exit.stderr_tail)[-limit:]
