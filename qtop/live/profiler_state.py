"""What a profiler hook remembers between processes, and the events it builds for one process.

A hook works on a copy of its state (``HookState.copy``) and keeps the copy
only when the process has been handled completely: a link that drops in the
middle repeats the hook from the same state, so nothing is counted twice.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from qtop.events import Event, Iteration, Log, ProfileReport
from qtop.live.translate import ProcessExit, ProfilerFile
from qtop.profiling.model import ParsedProfile

# Processes whose files wait to be removed before a removal-only exec is worth it.
CLEANUP_BATCH = 64


@dataclass(slots=True)
class VariantProgress:
    """One variant's progress as the hook sees it."""

    processes: int = 0
    warmed: int = 0
    measured: int = 0
    emitted: dict[str, int] = field(default_factory=dict)
    measure_start: float | None = None
    advanced: bool = False
    last_report_t: float | None = None


@dataclass(slots=True)
class HookState:
    """Everything a hook carries from one process to the next."""

    seq: int = 0
    variants: dict[str, VariantProgress] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set)
    reader_usable: bool = True
    # Processes whose files in prof/ can go: their events are in the stream.
    cleanup: list[int] = field(default_factory=list)

    def copy(self) -> HookState:
        return copy.deepcopy(self)

    def variant(self, name: str) -> VariantProgress:
        return self.variants.setdefault(name, VariantProgress())

    def take_cleanup(self) -> list[int]:
        taken, self.cleanup = self.cleanup, []
        return taken


class ProcessEvents:
    """The events one process yields, in order, with the hook's numbering applied."""

    def __init__(self, exit: ProcessExit, state: HookState) -> None:
        self.exit = exit
        self.state = state
        self.events: list[Event] = []

    def log(self, level: str, text: str) -> None:
        self.events.append(Log(t=self.exit.end, stream="qtop", level=level, text=text))

    def warn_once(self, code: str, text: str, level: str = "warning") -> None:
        """A warning that would repeat for every process: said once per run."""
        if code not in self.state.warned:
            self.state.warned.add(code)
            self.log(level, text)

    def iteration(
        self,
        progress: VariantProgress,
        phase: str,
        span: tuple[float, float],
        latency_s: float,
        status: int,
        error: str | None = None,
        metrics: dict[str, float] | None = None,
    ) -> None:
        index = progress.emitted.get(phase, 0)
        progress.emitted[phase] = index + 1
        self.events.append(
            Iteration(
                t=span[1],
                seq=self.state.seq,
                index=index,
                phase=phase,
                variant=self.exit.variant,
                start=span[0],
                end=span[1],
                latency_s=latency_s,
                exit_status=status,
                error=error,
                metrics=metrics or {},
            )
        )
        self.state.seq += 1

    def report(self, file: ProfilerFile, profile: ParsedProfile) -> None:
        self.events.append(
            ProfileReport(
                t=self.exit.end,
                source_kind=profile.kind,
                path=file.original,
                variant=self.exit.variant,
                report=profile.to_dict(),
            )
        )
