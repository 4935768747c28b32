"""What every profiler hook shares: one result per process, a state copy, fetching, reports.

``ProfilerHook.__call__`` gives each process one result: it works on a copy of
the hook's state and keeps it only when the process is handled completely (a
dropped link repeats the call from the same state), and it remembers the last
result (a drop after the hook, while the device is told to advance, gets the
same events again). Subclasses implement ``_handle`` for their latency source.

A viewer render is parsed twice over, lazily: every process needs only its
executes' root metrics and the stats sections (latency, de-init), which the
text parser reads without the per-op lines (``ops=False``, the same graphs and
metrics as the full parse); the full parse, ops and all, runs only for the
processes whose report is sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import ClassVar

from qtop.live import profiler_fetch as fetch
from qtop.live.hooks import DeviceAccess, HookResult
from qtop.live.profiler_state import CLEANUP_BATCH, HookState, ProcessEvents, VariantProgress
from qtop.live.translate import ProcessExit, ProfilerFile
from qtop.parsers import ProfilerParseError, parse, parse_auto, qnn_viewer_text
from qtop.profiles import Profile, ProfilerOutput
from qtop.profiling.model import ParsedProfile
from qtop.transport.base import LinkDown

REPORT_EVERY_S = 30.0
TEXT_KIND = "qnn-viewer-text"
OPTRACE_KIND = "optrace"
GENIE_KIND = "genie-profile"
# A profiler file bigger than this is not parsed (a render of a long run is a few MB);
# whatever the device sends, the hook must not spend minutes on one process.
MAX_PROFILE_CHARS = 200 * 10**6


@dataclass(slots=True)
class Rendered:
    """One log's text render: its timing (executes and sections, no ops), the full parse later."""

    file: ProfilerFile
    text: str
    timing: ParsedProfile
    _full: ParsedProfile | None = field(default=None, repr=False)

    def full(self) -> ParsedProfile:
        """The whole profile, ops included (parsed on the first call)."""
        if self._full is None:
            self._full = qnn_viewer_text.parse(self.text, self.file.original)
        return self._full


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
        self,
        kind: str | None,
        text: str,
        file: ProfilerFile,
        out: ProcessEvents,
        ops: bool = True,
    ) -> ParsedProfile | None:
        if len(text) > MAX_PROFILE_CHARS:
            out.warn_once(
                "too-big",
                f"the profiler output of process {out.exit.process} is {len(text) / 1e6:.3g} MB, "
                f"more than the {MAX_PROFILE_CHARS / 1e6:.3g} MB qtop parses; it was not read "
                "(fix: profile fewer inferences per process, or a lower --profiling_level)",
            )
            return None
        try:
            if kind == TEXT_KIND and not ops:
                return qnn_viewer_text.parse(text, file.original, ops=False)
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
    ) -> tuple[list[Rendered], list[str]]:
        """Each log of the process rendered as text, its timing parsed; the problems on the way."""
        rendered: list[Rendered] = []
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
            timing = self._parse(TEXT_KIND, fetched.text, file, out, ops=False)
            if timing is None:
                problems.append(f"its log {file.original} could not be parsed")
            else:
                rendered.append(Rendered(file, fetched.text, timing))
        return rendered, problems

    async def _report(
        self,
        exit: ProcessExit,
        device: DeviceAccess,
        out: ProcessEvents,
        text: list[Rendered] | None,
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
        for rendered in text:
            out.report(rendered.file, rendered.full())

    async def _optrace_reports(
        self,
        exit: ProcessExit,
        device: DeviceAccess,
        out: ProcessEvents,
        text: list[Rendered] | None,
    ) -> list[Rendered]:
        """Reports from the optrace render; the text render's for the files it failed on."""
        fallback: list[Rendered] = []
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
            fallback += [rendered for rendered in text if rendered.file == file]
        return fallback
