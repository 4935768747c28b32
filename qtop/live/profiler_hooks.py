"""The profiler hooks: per-inference latency and profile reports from what each process left.

* ``execute_stats``: each ``qnn-net-run`` log is rendered by ``qnn-profile-viewer``
  on the device (with the profile's reader, else its default text reader),
  parsed here, and every inference becomes an ``Iteration`` whose latency is
  the log's ``QNN (execute) time``. The first ``warmup`` inferences of each
  process are warm-up.
* ``genie``: each ``genie-t2t-run`` process is one query per iteration (the
  first ``warmup`` queries that succeed are warm-up): latency TTFT + generation time,
  with TTFT and the prefill and decode rates as metrics. A missing profile is
  explained (Genie writes it only on a clean exit).
* ``wall`` with a ``profiler``: the iterations stay wall time; the hook adds
  the reports.

Reports are throttled: the first and the last process of each variant, and
at most one per ``REPORT_EVERY_S`` of device time in between. Nothing the
profiler writes can end the session: a file that cannot be read or parsed
becomes a warning, and the process a failed iteration that says why.
"""

from __future__ import annotations

from collections.abc import Callable

from qtop.live import profiler_fetch as fetch
from qtop.live.hooks import DeviceAccess, ProcessHook
from qtop.live.profiler_hook_base import GENIE_KIND, ProfilerHook, Rendered
from qtop.live.profiler_state import ProcessEvents, VariantProgress
from qtop.live.profiler_timing import (
    NO_MEASUREMENT_STATUS,
    deinit_s,
    describe_exit,
    genie_tail_s,
    inference_latencies,
    place_back_to_back,
    process_status,
    stderr_text,
)
from qtop.live.translate import ProcessExit, ProfilerFile
from qtop.profiles import Profile
from qtop.profiling.latency import genie_figures
from qtop.profiling.model import ParsedProfile


class ExecuteStatsHook(ProfilerHook):
    """``latency_source: execute_stats``: one iteration per inference of each qnn-net-run."""

    async def _handle(
        self, exit: ProcessExit, device: DeviceAccess, progress: VariantProgress, out: ProcessEvents
    ) -> bool:
        parsed, problems = await self._text(exit, device, out)
        latencies, note = inference_latencies([rendered.timing for rendered in parsed])
        if note:
            out.warn_once("pairing", note)
        if parsed and not latencies:
            problem = (
                "its log has no Execute Stat blocks (a --profiling_level basic log holds only "
                "averages); use --profiling_level detailed, or backend with a linting config"
            )
            out.warn_once("no-executes", f"process {exit.process}: {problem}")
            problems.append(problem)
        if latencies:
            self._iterations(exit, progress, out, latencies, parsed)
        else:
            self._nothing_measured(exit, progress, out, problems)
        advance = self._finished(progress, exit)
        progress.advanced = advance
        if self._report_due(progress, exit, advance):
            await self._report(exit, device, out, parsed)
            progress.last_report_t = exit.end
        return advance

    def _iterations(
        self,
        exit: ProcessExit,
        progress: VariantProgress,
        out: ProcessEvents,
        latencies: list[float],
        parsed: list[Rendered],
    ) -> None:
        run = self.profile.run
        status = process_status(exit)
        error = None
        if status != 0:
            error = f"the process {describe_exit(exit, run.timeout_s)}\n{stderr_text(exit)}".strip()
        spans = place_back_to_back(
            latencies, exit.start, exit.end, deinit_s([rendered.timing for rendered in parsed])
        )
        dropped = 0
        for number, (latency, span) in enumerate(zip(latencies, spans, strict=True)):
            phase = "warmup" if number < run.warmup else "measure"
            if phase == "measure" and status == 0:
                if run.iterations is not None and progress.measured >= run.iterations:
                    dropped += 1
                    continue
                progress.measured += 1
                if progress.measure_start is None:
                    progress.measure_start = exit.start
            out.iteration(progress, phase, span, latency, status, error)
        if len(latencies) <= run.warmup:
            out.warn_once(
                "all-warmup",
                f"process {exit.process} ran {len(latencies)} inference(s) and warmup is "
                f"{run.warmup} per process, so none is measured; raise --num_inferences in the "
                "command or lower run.warmup",
            )
        if dropped:
            out.log(
                "info",
                f"{dropped} inference(s) of process {exit.process} beyond the "
                f"{run.iterations} measured ones of variant {exit.variant or '(default)'} "
                "are not counted",
            )

    def _nothing_measured(
        self, exit: ProcessExit, progress: VariantProgress, out: ProcessEvents, problems: list[str]
    ) -> None:
        status = process_status(exit)
        where = self.profiler.path
        if status != 0:
            error = f"the process {describe_exit(exit, self.profile.run.timeout_s)}"
            detail = stderr_text(exit) or "; ".join(problems)
            error += f"\n{detail}" if detail else ""
        elif problems:
            error = "no latency: " + "; ".join(problems)
        else:
            error = (
                f"the process exited cleanly but left no profiling log in {where}: does the "
                "command pass --profiling_level and --output_dir with that directory?"
            )
            out.warn_once("no-log", f"process {exit.process}: {error}")
        out.iteration(
            progress,
            "measure",
            (exit.start, exit.end),
            0.0,
            status or NO_MEASUREMENT_STATUS,
            error,
        )


class GenieHook(ProfilerHook):
    """``latency_source: genie``: each genie-t2t-run process is one query, one iteration."""

    async def _handle(
        self, exit: ProcessExit, device: DeviceAccess, progress: VariantProgress, out: ProcessEvents
    ) -> bool:
        # Warm-up lasts until that many queries have succeeded: a failed one warms nothing.
        phase = "warmup" if progress.warmed < self.profile.run.warmup else "measure"
        profile, file = await self._profile(exit, device, out)
        if profile is None or file is None:
            self._missing(exit, progress, out, phase, file)
        else:
            self._queries(exit, progress, out, phase, profile)
        advance = self._finished(progress, exit)
        progress.advanced = advance
        if profile is not None and file is not None and self._report_due(progress, exit, advance):
            out.report(file, profile)
            progress.last_report_t = exit.end
        return advance

    async def _profile(
        self, exit: ProcessExit, device: DeviceAccess, out: ProcessEvents
    ) -> tuple[ParsedProfile | None, ProfilerFile | None]:
        if not exit.outputs:
            return None, None
        file = exit.outputs[0]
        fetched = await fetch.read_text(device, file.path, out.state.take_cleanup())
        if fetched.text is None:
            out.log(
                "warning",
                f"cannot read the Genie profile of process {exit.process}: {fetched.problem}",
            )
            return None, file
        return self._parse(GENIE_KIND, fetched.text, file, out), file

    def _missing(
        self,
        exit: ProcessExit,
        progress: VariantProgress,
        out: ProcessEvents,
        phase: str,
        file: ProfilerFile | None,
    ) -> None:
        how = describe_exit(exit, self.profile.run.timeout_s)
        if file is not None:
            error = (
                f"the Genie profile {file.original} could not be read or parsed; the process {how}"
            )
        elif exit.exit_status == 0 and not exit.timed_out:
            error = (
                f"genie-t2t-run exited cleanly but wrote no profile at {self.profiler.path}: "
                "does the command pass --profile with that path?"
            )
        else:
            error = (
                f"no Genie profile at {self.profiler.path}: genie-t2t-run writes --profile only "
                f"when it exits cleanly, and this process {how}. Stop it with SIGINT or SIGTERM "
                "(qtop's timeout does), never SIGKILL first, or give it a shorter prompt"
            )
        tail = stderr_text(exit)
        if file is None:
            out.log("warning", f"process {exit.process}: {error}")
        out.iteration(
            progress,
            phase,
            (exit.start, exit.end),
            0.0,
            process_status(exit) or NO_MEASUREMENT_STATUS,
            f"{error}\n{tail}".strip(),
        )

    def _queries(
        self,
        exit: ProcessExit,
        progress: VariantProgress,
        out: ProcessEvents,
        phase: str,
        profile: ParsedProfile,
    ) -> None:
        figures = genie_figures(profile)
        if not figures:
            out.iteration(
                progress, phase, (exit.start, exit.end), 0.0,
                process_status(exit) or NO_MEASUREMENT_STATUS,
                f"the Genie profile of process {exit.process} has no query with a time",
            )  # fmt: skip
            return
        status = process_status(exit)
        error = None
        if status != 0:
            error = f"the process {describe_exit(exit, self.profile.run.timeout_s)}"
            if exit.timed_out:
                error += "; Genie wrote its profile on the way out, so the query was cut short"
        latencies = [figure.latency_s for figure in figures]
        spans = place_back_to_back(latencies, exit.start, exit.end, genie_tail_s(profile))
        for figure, span in zip(figures, spans, strict=True):
            if phase == "warmup" and status == 0:
                progress.warmed += 1
            elif phase == "measure" and status == 0:
                progress.measured += 1
                if progress.measure_start is None:
                    progress.measure_start = exit.start
            out.iteration(progress, phase, span, figure.latency_s, status, error, figure.metrics())


class ReportHook(ProfilerHook):
    """``latency_source: wall`` with a profiler: wall-time iterations, the profiler's reports."""

    counts_to_a_target = False

    async def _handle(
        self, exit: ProcessExit, device: DeviceAccess, progress: VariantProgress, out: ProcessEvents
    ) -> bool:
        if exit.phase == "measure" and progress.measure_start is None:
            progress.measure_start = exit.start
        run = self.profile.run
        last = exit.phase == "measure" and (
            (run.iterations is not None and exit.index >= run.iterations - 1)
            or (run.duration_s is not None and self._finished(progress, exit))
        )
        if not exit.outputs:
            if exit.exit_status == 0:
                out.warn_once(
                    "no-output",
                    f"process {exit.process} exited cleanly but left no profiler output at "
                    f"{self.profiler.path}",
                )
            return False
        if self._report_due(progress, exit, last):
            await self._report(exit, device, out, None)
            progress.last_report_t = exit.end
        return False


# The hook each latency source gets; a source not here (``wall`` without a profiler)
# needs none.
HOOK_FACTORIES: dict[str, Callable[[Profile], ProcessHook]] = {
    "execute_stats": ExecuteStatsHook,
    "genie": GenieHook,
    "wall": ReportHook,
}


def profiler_hook_for(profile: Profile) -> ProcessHook | None:
    """A new hook for the profile's latency source, or ``None`` when there is none to call.

    ``wall`` without a ``profiler`` needs none; ``wall`` with one gets a hook that
    only adds the profiler's reports (the iterations stay wall time).
    """
    source = profile.run.latency_source
    if source == "wall" and profile.run.profiler is None:
        return None
    factory = HOOK_FACTORIES.get(source)
    return factory(profile) if factory else None
