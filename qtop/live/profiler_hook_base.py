"""What every profiler hook shares: one result per process, a state copy, fetching, reports.

``ProfilerHook.__call__`` gives each process one result: it works on a copy of
the hook's state and keeps it only when the process is handled completely (a
dropped link repeats the call from the same state), and it remembers the last
result (a drop after the hook, while the device is told to advance, gets the
same events again). Subclasses implement ``_handle`` for their latency source.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from qtop.live import profiler_fetch as fetch
from qtop.live.hooks import DeviceAccess, HookResult
from qtop.live.profiler_state import CLEANUP_BATCH, HookState, ProcessEvents, VariantProgress
from qtop.live.translate import ProcessExit, ProfilerFile
from qtop.parsers import ProfilerParseError, parse, parse_auto
from qtop.profiles import Profile, ProfilerOutput
from qtop.profiling.model import ParsedProfile
from qtop.transport.base import LinkDown

REPORT_EVERY_S = 30.0
TEXT_KIND = "qnn-viewer-text"
OPTRACE_KIND = "optrace"
GENIE_KIND = "genie-profile"

Parsed = list[tuple[ProfilerFile, ParsedProfile]]


class ProfilerHook:
    """Shared by the hooks: idempotence per process, the state copy, reports and parsing."""

    # A hook that measures iterations stops counting once its variant has them all:
    # a process the runner had already started by then is reported, not counted.
    counts_to_a_target: ClassVar[bool] = True

    def __init__(self, profile: Profile) -> None:
        if profile.run.profiler is None:
            raise ValueError(f"profile {profile.name} has no run.profiler")
        self.profile = profile
        self.profiler: ProfilerOutput = profile.run.profiler
        self.state = HookState()
        self.report_every_s = REPORT_EVERY_S
        self._last: tuple[int, HookResult] | None = None

    async def __call__(self, exit: ProcessExit, device: DeviceAccess) -> HookResult:
        if self._last is not None and self._last[0] == exit.process:
            # The same process again: the link dropped after the hook had finished.
            return self._last[1]
        draft = self.state.copy()
        out = ProcessEvents(exit, draft)
        progress = draft.variant(exit.variant)
        try:
            if self.counts_to_a_target and progress.advanced:
                self._overrun(exit, out)
                advance = False
            else:
                advance = await self._handle(exit, device, progress, out)
        except (LinkDown, asyncio.CancelledError):
            raise
        except Exception as exc:
            draft = self.state.copy()
            out = ProcessEvents(exit, draft)
            out.log(
                "error",
                f"the profiler hook failed on process {exit.process}: "
                f"{type(exc).__name__}: {exc}; its output is not counted",
            )
            progress, advance = draft.variant(exit.variant), False
        progress.processes += 1
        draft.cleanup.append(exit.process)
        if len(draft.cleanup) >= CLEANUP_BATCH:
            await fetch.remove(device, draft.take_cleanup())
        result = HookResult(tuple(out.events), advance)
        self.state = draft
        self._last = (exit.process, result)
        return result

    async def _handle(
        self, exit: ProcessExit, device: DeviceAccess, progress: VariantProgress, out: ProcessEvents
    ) -> bool:
        raise NotImplementedError

    # --- helpers ------------------------------------------------------------

    def _parse(
        self, kind: str | None, text: str, file: ProfilerFile, out: ProcessEvents
    ) -> ParsedProfile | None:
        try:
            if kind is None:
                return parse_auto(text, file.original)
            return parse(kind, text, file.original)
        except ProfilerParseError as exc:
            fix = f" (fix: {exc.fix})" if exc.fix else ""
            out.warn_once(
                f"parse:{kind}",
                f"cannot parse the profiler output of process {out.exit.process}: "
                f"{exc.problem}{fix}",
            )
            return None

    def _overrun(self, exit: ProcessExit, out: ProcessEvents) -> None:
        out.log(
            "info",
            f"process {exit.process} of variant {exit.variant or '(default)'} was already "
            "running when the variant had all it needed; its output is not counted",
        )

    def _finished(self, progress: VariantProgress, exit: ProcessExit) -> bool:
        """Has the variant all its measured iterations (or its measured time)?"""
        run = self.profile.run
        if run.iterations is not None:
            return progress.measured >= run.iterations
        # The runner's own test, on its own times, when the phase's start is known.
        start = exit.phase_start if exit.phase_start is not None else progress.measure_start
        if run.duration_s is not None and start is not None:
            return exit.end - start >= run.duration_s
        return False

    def _report_due(self, progress: VariantProgress, exit: ProcessExit, last: bool) -> bool:
        if last or progress.processes == 0 or progress.last_report_t is None:
            return True
        return exit.end - progress.last_report_t >= self.report_every_s

    async def _text(
        self, exit: ProcessExit, device: DeviceAccess, out: ProcessEvents
    ) -> tuple[Parsed, list[str]]:
        """Each log of the process rendered as text and parsed; the problems on the way."""
        parsed: Parsed = []
        problems: list[str] = []
        state = out.state
        for file in exit.outputs:
            fetched = await fetch.render_text(
                device, self.profiler, file.path, state.reader_usable, state.take_cleanup()
            )
            if fetched.notes:
                state.reader_usable = False
                for note in fetched.notes:
                    out.warn_once("reader", note)
            if fetched.text is None:
                problem = fetched.problem + (f" (fix: {fetched.fix})" if fetched.fix else "")
                out.warn_once("viewer", f"process {exit.process}: {problem}")
                problems.append(problem)
                continue
            profile = self._parse(TEXT_KIND, fetched.text, file, out)
            if profile is None:
                problems.append(f"its log {file.original} could not be parsed")
            else:
                parsed.append((file, profile))
        return parsed, problems

    async def _report(
        self, exit: ProcessExit, device: DeviceAccess, out: ProcessEvents, text: Parsed | None
    ) -> None:
        """The process's reports, in the profiler's own format where it has one."""
        kind = self.profiler.kind
        if kind in ("genie_profile", "file"):
            for file in exit.outputs:
                fetched = await fetch.read_text(device, file.path, out.state.take_cleanup())
                profile = None
                if fetched.text is not None:
                    profile = self._parse(
                        GENIE_KIND if kind == "genie_profile" else None, fetched.text, file, out
                    )
                if profile is not None:
                    out.report(file, profile)
            return
        if kind == "optrace":
            text = await self._optrace_reports(exit, device, out, text)
        elif text is None:
            text, _ = await self._text(exit, device, out)
        for file, profile in text:
            out.report(file, profile)

    async def _optrace_reports(
        self, exit: ProcessExit, device: DeviceAccess, out: ProcessEvents, text: Parsed | None
    ) -> Parsed:
        """Reports from the optrace render; the text render's for the files it failed on."""
        fallback: Parsed = []
        for number, file in enumerate(exit.outputs):
            output = f"{fetch.stored_prefix(device.run_dir, exit.process)}chrometrace{number}.json"
            fetched = await fetch.render_optrace(
                device, self.profiler, file.path, output, out.state.take_cleanup()
            )
            profile = None
            if fetched.text is not None:
                profile = self._parse(OPTRACE_KIND, fetched.text, file, out)
            else:
                fix = f"; fix: {fetched.fix}" if fetched.fix else ""
                out.warn_once("optrace", f"no optrace report: {fetched.problem}{fix}", "error")
            if profile is not None:
                out.report(file, profile)
                continue
            if text is None:
                text, _ = await self._text(exit, device, out)
            fallback += [(f, p) for f, p in text if f == file]
        return fallback
