"""Device lines to events: the pure, stateful middle of a live session.

It knows nothing of links or files' byte offsets; it is fed complete lines of
the three spool files in their order and returns events. Lines it has seen
(by their per-file sequence number) are dropped, so feeding a line twice
after a reconnect cannot count anything twice. Gaps are reported, never
filled: a sampler that fell behind on the device, or lines missing from a
file, become ``Link`` gap events with their extent in device time.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from qtop.device.protocol import (
    AgentLogLine,
    CalibrationLine,
    ClockLine,
    Line,
    OutputLine,
    PhaseLine,
    ProcessLine,
    ProtocolError,
    RunEndLine,
    SampleLine,
    SamplerEndLine,
    StderrLine,
    parse_line,
)
from qtop.device.refresh import RefreshEstimator
from qtop.device.sensors import SensorPlan
from qtop.events import Channels, End, Event, Iteration, Link, Log, PhaseChange, Sample, replace
from qtop.stats.model import PROBE_STREAM

ERROR_LINES = 10
ERROR_CHARS = 2000
TIMER_OVERHEAD_PREFIX = "timer_overhead_s="
# The calibration the overhead comes from: the latest samples, across recalibrations.
CALIBRATION_WINDOW = 21
# Malformed lines each get a warning up to this many; the rest are only counted.
MALFORMED_WARNINGS = 10


@dataclass(slots=True)
class FileClock:
    """Puts one file's raw microseconds on the device's uptime line."""

    clock: str = ""
    offset_us: int = 0
    resolution_us: int = 0
    sleep: str = ""
    arithmetic_bits: int = 0

    def seconds(self, raw_us: int) -> float:
        return (raw_us + self.offset_us) / 1e6


@dataclass(frozen=True, slots=True)
class ProfilerFile:
    """A profiler file a process left: where it is kept now, and where the process wrote it."""

    path: str
    original: str


@dataclass(frozen=True, slots=True)
class ProcessExit:
    """What the host learns when one run of the command exits (the profiler hook's input)."""

    run_dir: str
    process: int
    phase: str
    variant: str
    variant_index: int
    index: int
    start: float
    end: float
    wall_s: float
    exit_status: int
    timed_out: bool
    stderr_tail: tuple[str, ...]
    outputs: tuple[ProfilerFile, ...] = ()
    # When the runner began the phase this process belongs to (its duration counts from here).
    phase_start: float | None = None
    # When a paced run's schedule said it should start.
    scheduled: float | None = None


class Translator:
    """Feeds on spool lines, yields events."""

    def __init__(
        self,
        sensors: SensorPlan,
        variants: tuple[str, ...],
        interval_s: float,
        run_dir: str = "",
        now: Callable[[], float] = time.time,
        deadline_s: float | None = None,
    ) -> None:
        self.sensors = sensors
        self.deadline_s = deadline_s
        self.variants = variants
        self.interval_s = interval_s
        self.run_dir = run_dir
        self.now = now
        self.clocks = {"samples": FileClock(), "events": FileClock()}
        self.last_seq = {"samples": -1, "events": -1}
        self.counts: Counter[str] = Counter()
        self.overhead_s: float | None = None
        self.overhead_spread_s: float | None = None
        self.calibration_us: tuple[int, ...] = ()
        self._calibration_window: deque[int] = deque(maxlen=CALIBRATION_WINDOW)
        self.run_end: RunEndLine | None = None
        self.last_device_t: float | None = None
        self.last_sample_t: float | None = None
        self._last_slot: int | None = None
        self._sample_seq_base: int | None = None
        self._stderr: dict[str, list[str]] = {}
        self._outputs: dict[int, list[ProfilerFile]] = {}
        self._phase_starts: dict[int, float] = {}
        self._log_seq = 0
        self.refresh = RefreshEstimator(interval_s, {c.id: c.kind for c in sensors.channels})

    # --- helpers ------------------------------------------------------------

    def variant_name(self, index: int) -> str:
        return self.variants[index - 1] if 1 <= index <= len(self.variants) else ""

    def _log(self, stream: str, level: str, text: str, t: float | None = None) -> Log:
        event = Log(
            t=t, host_t=self.now(), seq=self._log_seq, stream=stream, level=level, text=text
        )
        self._log_seq += 1
        return event

    def note(self, text: str, level: str = "info", t: float | None = None) -> Log:
        """A host-side note in the stream (stream ``qtop``)."""
        return self._log("qtop", level, text, t)

    def probe_warning(self, text: str) -> Log:
        """What the device probe found missing, before the run (stream ``probe``)."""
        return self._log(PROBE_STREAM, "warning", text)

    def channels_event(self) -> Channels:
        return Channels(host_t=self.now(), channels=self.sensors.channels)

    def _parse(self, file: str, text: str) -> tuple[Line | None, list[Event]]:
        """The line as a record, or a warning: a malformed line is never acted on."""
        try:
            line = parse_line(text)
            if isinstance(line, SampleLine) and len(line.values) != self.sensors.field_count:
                raise ProtocolError(
                    f"S line with {len(line.values)} values for {self.sensors.field_count} fields"
                )
            return line, []
        except ProtocolError as exc:
            self.counts["malformed_lines"] += 1
            if self.counts["malformed_lines"] > MALFORMED_WARNINGS:
                return None, []
            more = (
                "; further malformed lines are only counted"
                if self.counts["malformed_lines"] == MALFORMED_WARNINGS
                else ""
            )
            warning = self._log(
                "qtop",
                "warning",
                f"ignored a malformed line of the device's {file} file ({exc}): {text[:120]!r}"
                + more,
            )
            return None, [warning]

    @staticmethod
    def _file_clock(line: ClockLine) -> FileClock:
        return FileClock(
            line.clock, line.offset_us, line.resolution_us, line.sleep, line.arithmetic_bits
        )

    def _fresh(self, file: str, line: Line, t: float | None) -> list[Event]:
        """Events for a sequence jump; empty when in order. Raises nothing; marks seen."""
        last = self.last_seq[file]
        self.last_seq[file] = line.seq
        if last < 0 or line.seq == last + 1:
            return []
        missing = line.seq - last - 1
        self.counts["lost_lines"] += missing
        self.counts["gaps"] += 1
        gap_from = self.last_sample_t if file == "samples" else None
        return [
            Link(
                t=t,
                host_t=self.now(),
                state="gap",
                detail=f"{missing} line(s) of the device's {file} file are missing",
                gap_from=gap_from,
                gap_to=t,
            )
        ]

    # --- the three files ----------------------------------------------------

    def samples_line(self, text: str) -> list[Event]:
        line, warnings = self._parse("samples", text)
        if line is None:
            return warnings
        if line.seq <= self.last_seq["samples"]:
            self.counts["duplicates_dropped"] += 1
            return []
        clock = self.clocks["samples"]
        if isinstance(line, ClockLine):
            # A later K line (the device slept, say) moves the clock only.
            self.last_seq["samples"] = line.seq
            self.clocks["samples"] = self._file_clock(line)
            if self._sample_seq_base is None:
                self._sample_seq_base = line.seq + 1
            else:
                self._sample_seq_base += 1
                self.counts["clock_resyncs"] += 1
            return []
        t = clock.seconds(line.time_us)
        events = self._fresh("samples", line, t)
        if isinstance(line, SamplerEndLine):
            return events
        if not isinstance(line, SampleLine):
            return events
        if events:
            # Lines are missing: that gap already covers the slots they held.
            self._last_slot = line.slot
        else:
            events.extend(self._slot_gap(line, t))
        values = self.sensors.decode(line.values)
        base = self._sample_seq_base if self._sample_seq_base is not None else 0
        events.append(Sample(t=t, host_t=self.now(), seq=line.seq - base, values=values))
        self.counts["samples"] += 1
        self.last_sample_t = t
        self._note_time(t)
        for warning in self.refresh.observe(t, values):
            events.append(self._log("qtop", "warning", warning, t))
        return events

    def _slot_gap(self, line: SampleLine, t: float) -> list[Event]:
        last_slot, self._last_slot = self._last_slot, line.slot
        if last_slot is None or line.slot <= last_slot + 1:
            return []
        skipped = line.slot - last_slot - 1
        self.counts["missed_ticks"] += skipped
        self.counts["gaps"] += 1
        return [
            Link(
                t=t,
                host_t=self.now(),
                state="gap",
                detail=f"the sampler fell behind on the device: {skipped} tick(s) not taken",
                gap_from=self.last_sample_t,
                gap_to=t,
            )
        ]

    def events_line(self, text: str) -> tuple[list[Event], ProcessLine | None]:
        """Events for one line of the run's events file, and the process line if it is one."""
        line, warnings = self._parse("events", text)
        if line is None:
            return warnings, None
        if line.seq <= self.last_seq["events"]:
            self.counts["duplicates_dropped"] += 1
            return [], None
        if isinstance(line, ClockLine):
            self.last_seq["events"] = line.seq
            self.clocks["events"] = self._file_clock(line)
            return [], None
        if isinstance(line, ProcessLine):
            # Marked as seen only by commit_process, once the host has handled it.
            return [], line
        t = self.clocks["events"].seconds(line.time_us)
        events = self._fresh("events", line, t)
        self._note_time(t)
        if isinstance(line, CalibrationLine):
            events.append(self._calibrated(line, t))
        elif isinstance(line, PhaseLine):
            events.append(self._phase(line, t))
        elif isinstance(line, StderrLine):
            self._stderr.setdefault(line.process, []).append(line.text)
            events.append(self._log("stderr", "info", line.text, t))
        elif isinstance(line, OutputLine):
            stored = f"{self.run_dir.rstrip('/')}/{line.stored}"
            self._outputs.setdefault(line.process, []).append(ProfilerFile(stored, line.original))
        elif isinstance(line, AgentLogLine):
            events.append(self._log("agent", line.level, line.text, t))
        elif isinstance(line, RunEndLine):
            self.run_end = line
        return events, None

    def stdout_line(self, text: str) -> list[Event]:
        self.counts["stdout_lines"] += 1
        return [self._log("stdout", "info", text)]

    def _note_time(self, t: float) -> None:
        if self.last_device_t is None or t > self.last_device_t:
            self.last_device_t = t

    def _calibrated(self, line: CalibrationLine, t: float) -> Log:
        """The timer overhead: the median of the latest calibration samples; their spread.

        The runner calibrates at the start and again during long runs, so the
        overhead follows the device's state; half the interquartile range of
        the samples is the uncertainty it leaves on each iteration's latency.
        """
        first = self.overhead_s is None
        if first:
            self.calibration_us = line.durations_us
        self._calibration_window.extend(line.durations_us)
        window = sorted(self._calibration_window)
        if window:
            self.overhead_s = statistics.median(window) / 1e6
            if len(window) >= 4:
                quartiles = statistics.quantiles(window, n=4)
                self.overhead_spread_s = (quartiles[2] - quartiles[0]) / 2 / 1e6
            else:
                self.overhead_spread_s = (window[-1] - window[0]) / 2 / 1e6
        elif first:
            self.overhead_s = 0.0
        else:
            self.counts["empty_calibrations"] += 1
        clock = self.clocks["events"]
        spread = self.overhead_spread_s
        return self._log(
            "agent",
            "info",
            f"{TIMER_OVERHEAD_PREFIX}{self.overhead_s:.9f} "
            + (f"+-{spread:.9f} " if spread is not None else "")
            + f"({'median' if first else 'recalibrated: median'} of the latest {len(window)} "
            f"runs of an empty command through the measured path, {len(line.durations_us)} "
            f"new; clock {clock.clock or 'unknown'})",
            t,
        )

    def _phase(self, line: PhaseLine, t: float) -> PhaseChange:
        self._phase_starts[line.variant] = t
        duration = line.planned_duration_us / 1e6 if line.planned_duration_us is not None else None
        return PhaseChange(
            t=t,
            host_t=self.now(),
            phase=line.phase,
            variant=self.variant_name(line.variant),
            planned_iterations=line.planned_iterations,
            planned_duration_s=duration,
            note=line.note,
        )

    # --- processes and iterations -------------------------------------------

    def process_exit(self, line: ProcessLine) -> ProcessExit:
        clock = self.clocks["events"]
        tail = tuple(self._stderr.get(str(line.process), ())[-ERROR_LINES:])
        wall = (line.end_us - line.start_us) / 1e6
        return ProcessExit(
            run_dir=self.run_dir,
            process=line.process,
            phase=line.phase,
            variant=self.variant_name(line.variant),
            variant_index=line.variant,
            index=line.index,
            start=clock.seconds(line.start_us),
            end=clock.seconds(line.end_us),
            wall_s=max(0.0, wall - (self.overhead_s or 0.0)),
            exit_status=line.exit_status,
            timed_out=line.timed_out,
            stderr_tail=tail,
            outputs=tuple(self._outputs.get(line.process, ())),
            phase_start=self._phase_starts.get(line.variant),
            scheduled=None if line.scheduled_us is None else clock.seconds(line.scheduled_us),
        )

    def commit_process(self, line: ProcessLine) -> list[Event]:
        """Mark a process line handled; returns a gap event if lines before it are missing."""
        self._stderr.pop(str(line.process), None)
        self._outputs.pop(line.process, None)
        t = self.clocks["events"].seconds(line.time_us)
        self._note_time(t)
        return self._fresh("events", line, t)

    def iteration(self, exit: ProcessExit) -> Iteration:
        """The ``wall`` latency source: one iteration per run of the command."""
        error = None
        if exit.timed_out:
            error = "timed out (stopped with SIGINT, then SIGTERM, then SIGKILL)"
        elif exit.exit_status != 0:
            error = "\n".join(exit.stderr_tail)[-ERROR_CHARS:] or f"exit status {exit.exit_status}"
        self.counts["iterations"] += 1
        if exit.exit_status != 0:
            self.counts["failed_iterations"] += 1
        lateness = missed = None
        if exit.scheduled is not None:
            # Both stamps are whole microseconds of the device's clock.
            lateness = round(exit.start - exit.scheduled, 6)
            # Completion is the start plus the latency (the timer's overhead taken off), and a
            # run that failed delivered nothing in time.
            late = self.deadline_s is not None and lateness + exit.wall_s > self.deadline_s
            missed = late or exit.exit_status != 0 or exit.timed_out
        return Iteration(
            t=exit.end,
            host_t=self.now(),
            seq=exit.process,
            index=exit.index,
            phase=exit.phase,
            variant=exit.variant,
            start=exit.start,
            end=exit.end,
            latency_s=exit.wall_s,
            exit_status=exit.exit_status,
            error=error,
            latency_uncertainty_s=self.overhead_spread_s,
            scheduled=exit.scheduled,
            lateness_s=lateness,
            missed=missed,
        )

    def adopt(self, events: Iterable[Event]) -> list[Event]:
        """A profiler hook's events as this stream's own: logs numbered, iterations counted."""
        adopted: list[Event] = []
        for event in events:
            if isinstance(event, Log):
                event = replace(event, seq=self._log_seq, host_t=self.now())
                self._log_seq += 1
            elif event.host_t is None:
                event = replace(event, host_t=self.now())
            if isinstance(event, Iteration):
                self.counts["iterations"] += 1
                if event.exit_status != 0:
                    self.counts["failed_iterations"] += 1
            adopted.append(event)
        return adopted

    def end_event(self, reason: str, detail: str, extra: dict[str, int] | None = None) -> End:
        counts = dict(self.counts)
        counts.update(extra or {})
        return End(
            t=self.last_device_t, host_t=self.now(), reason=reason, detail=detail, counts=counts
        )
