"""Driving a live session for ``qtop run`` and ``qtop demo``.

Before anything starts, a leftover run of an earlier session (it would hold
the NPU) is offered for stopping on a terminal and refused otherwise. Then
the run starts, the recording opens with the header, and the session runs
under the UI or headless. Headless, Ctrl-C asks whether to stop the device
run (stopping kills its whole process group; declining leaves it running and
detaches); without a terminal to ask on, it stops the run and says so.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from qtop.analysis.collect import Collector
from qtop.errors import QtopError, RunFailed, UsageError
from qtop.events import End, Header
from qtop.live.progress import ProgressPrinter
from qtop.live.source import LiveSource
from qtop.record.writer import RecordingWriter
from qtop.session import Session

if TYPE_CHECKING:
    from qtop.metrics.address import ListenAddress
    from qtop.metrics.server import MetricsServer

RECORDINGS_DIR = "recordings"
_UNSAFE_IN_FILE_NAME = re.compile(r"[^0-9A-Za-z_.+-]+")
UiOpener = Callable[[Session], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """The command-line choices that shape a live session."""

    profile_ref: str
    record: str | None = None
    no_record: bool = False
    headless: bool = True
    stop_leftover: bool = False
    metrics_listen: ListenAddress | None = None


def default_recording_path(profile_name: str, now: float | None = None) -> Path:
    """``recordings/<time>-<name>.jsonl``; the name is made safe, never a path of its own."""
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(now))
    slug = _UNSAFE_IN_FILE_NAME.sub("-", profile_name).strip("-.")[:80] or "run"
    return Path(RECORDINGS_DIR) / f"{stamp}-{slug}.jsonl"


def _ask(question: str, stdin: TextIO, out: TextIO) -> asyncio.Future[bool]:
    """Ask on the terminal without blocking the event loop (or its exit)."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[bool] = loop.create_future()

    def read() -> None:
        out.write(question)
        out.flush()
        try:
            text = stdin.readline()
        except (OSError, ValueError):
            text = ""
        reply = text.strip().lower() in ("y", "yes")

        def give() -> None:
            if not answer.done():
                answer.set_result(reply)

        loop.call_soon_threadsafe(give)

    threading.Thread(target=read, daemon=True).start()
    return answer


class LiveRun:
    """One ``qtop run``/``qtop demo`` session from leftover check to summary."""

    def __init__(
        self,
        source: LiveSource,
        options: LiveOptions,
        *,
        out: TextIO | None = None,
        stdin: TextIO | None = None,
        interactive: bool | None = None,
        handle_interrupts: bool = True,
    ) -> None:
        self.source = source
        # False when a coordinator (several devices at once) takes Ctrl-C for all of them.
        self.handle_interrupts = handle_interrupts
        self.options = options
        self.out = out or sys.stdout
        self.stdin = stdin or sys.stdin
        if interactive is None:
            interactive = self.stdin.isatty() and self.out.isatty()
        self.interactive = interactive
        self.session: Session | None = None
        self.recording_path: Path | None = None
        self._printer: ProgressPrinter | None = None
        self._interrupts = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.metrics: MetricsServer | None = None
        # A person chose to stop the run (in the UI, or answering the Ctrl-C question).
        self._ui_shown = False
        self._stop_chosen = False

    def say(self, text: str) -> None:
        if self._printer is not None:
            self._printer.say(text)
        else:
            self.out.write(text + "\n")
            self.out.flush()

    async def run(self, open_ui: UiOpener | None = None) -> int:
        try:
            # Listening before anything starts on the device: a port in use leaves no run behind.
            self._start_metrics()
            await self._clear_leftovers()
            # A recording that cannot be written must stop us before the device run
            # starts, or it would be left running on the board with nothing recording it.
            target = self._recording_target()
            header = await self.source.start()
            self.say(f"run {self.source.state.run_id} started on {self.source.where}")
            recorder = self._open_recording(header, target)
            session = Session(self.source, recorder=recorder)
            session.model.apply(header)
            self.session = session
            if self.metrics is not None:
                self.metrics.watch(session.model)
            if not self.options.headless and open_ui is not None and await open_ui(session):
                self._ui_shown = True
                session.close_recording(End(reason="interrupted", detail="the UI was closed"))
            else:
                if not self.options.headless:
                    self.say("(the UI is not available in this build; running headless)")
                # The summary at the end analyses every event, gathered as they pass.
                session.collector = Collector()
                session.collector.add(header)
                await self._headless(session)
            return self._conclude(session)
        finally:
            await self.source.close()
            await self._stop_metrics()

    def _start_metrics(self) -> None:
        if self.options.metrics_listen is not None:
            from qtop.metrics.server import MetricsServer

            self.metrics = MetricsServer.start(self.options.metrics_listen)
            self.say(self.metrics.describe())

    async def _stop_metrics(self) -> None:
        if self.metrics is not None:
            await self.metrics.close()
            problem = self.metrics.problem()
            if problem is not None:
                self.say(f"warning: {problem}")

    async def _clear_leftovers(self) -> None:
        for leftover in await self.source.leftovers():
            what = (
                f"run {leftover.run_id} (profile {leftover.profile or '?'}, started "
                f"{leftover.started or '?'}, process group {leftover.pgid}) is still running on "
                f"{self.source.where} and would hold the NPU"
            )
            stop = self.options.stop_leftover
            if not stop and self.interactive:
                stop = await _ask(f"{what}.\nstop it? [y/N] ", self.stdin, self.out)
            if not stop:
                raise RunFailed(
                    f"refusing to start: {what}",
                    f"stop it with: qtop run {self.options.profile_ref} --stop-leftover",
                )
            outcome = await self.source.stop_leftover(leftover)
            self.say(f"stopped leftover run {leftover.run_id} (SIG{outcome.signal})")

    def _recording_target(self) -> Path | None:
        """Where the recording will go, checked before anything starts on the device."""
        if self.options.no_record:
            return None
        path = (
            Path(self.options.record)
            if self.options.record
            else default_recording_path(self.source.profile.name)
        )
        if path.exists():
            raise UsageError(
                f"{path}: a recording with this name already exists",
                "choose another --record path; qtop never overwrites a recording",
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"{path.parent}: cannot create the recordings directory: {exc.strerror}",
                "pass --record with a path you can write, or --no-record",
            ) from None
        if not os.access(path.parent, os.W_OK):
            raise UsageError(
                f"{path.parent}: not writable, so the session could not be recorded",
                "pass --record with a path you can write, or --no-record",
            )
        return path

    def _open_recording(self, header: Header, path: Path | None) -> RecordingWriter | None:
        if path is None:
            return None
        recorder = RecordingWriter(path, header)
        self.recording_path = path
        self.source.state.recording_path = str(path)
        self.say(f"recording to {path}")
        return recorder

    async def _headless(self, session: Session) -> None:
        self._printer = ProgressPrinter(session.model, self.out, self.out.isatty())
        loop = asyncio.get_running_loop()
        handler_installed = self.handle_interrupts
        try:
            if handler_installed:
                loop.add_signal_handler(signal.SIGINT, self._on_interrupt)
        except (NotImplementedError, RuntimeError, ValueError):
            handler_installed = False
        try:
            await session.run(self._printer)
        finally:
            if handler_installed:
                loop.remove_signal_handler(signal.SIGINT)
            self._printer.finish()

    def _on_interrupt(self) -> None:
        self._interrupts += 1
        if self._interrupts == 1:
            self._spawn(self._interrupted())
        else:
            self.say("interrupted again: detaching; the device run is left as it is")
            self._spawn(self.source.detach())

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _interrupted(self) -> None:
        if self.interactive:
            stop = await _ask("\nstop the run on the device? [y/N] ", self.stdin, self.out)
        else:
            self.say("interrupted: stopping the device run (no terminal to ask on)")
            stop = True
        await self.end_run(stop, chosen=self.interactive)

    async def end_run(self, stop: bool, *, chosen: bool) -> None:
        """Stop the device run (``chosen``: a person asked for it), or detach and leave it."""
        run_id = self.source.state.run_id
        if not stop:
            self.say(
                f"leaving run {run_id} running on the device; stop it later with "
                f"'qtop run {self.options.profile_ref} --stop-leftover'"
            )
            await self.source.detach()
            return
        self._stop_chosen = chosen
        self.say(f"stopping run {run_id}: SIGTERM to its process group, SIGKILL after 5 s")
        try:
            outcome = await self.source.stop_run()
        except QtopError as exc:
            self.say(f"error: {exc}")
            await self.source.detach()
            return
        self.say(f"run {run_id} stopped (SIG{outcome.signal}); no process of it is left")

    def _conclude(self, session: Session) -> int:
        from qtop.report.render import render
        from qtop.report.summary import summarize

        end = session.model.end
        name = str(self.recording_path) if self.recording_path else self.source.profile.name
        if self.options.headless or self._printer is not None:
            collected = session.collector.finish() if session.collector is not None else None
            summary = summarize(session.model, collected, name)
            self.say(render([summary], "text"))
        if session.recording_error is not None:
            self.say(f"warning: {session.recording_error}")
        if self.recording_path is not None:
            self.say(f"recorded to {self.recording_path}")
            self.say(
                f"  replay it: qtop replay {self.recording_path}  ·  "
                f"summary: qtop report {self.recording_path}"
            )
        if end is None:
            self.say("the session ended without an end event")
            return 1
        self.say(f"run {end.reason}" + (f": {end.detail}" if end.detail else ""))
        # Stopping the run is not a failure when a person asked for it (the UI's stop, or
        # "y" at the Ctrl-C question); stopped by an unattended interrupt, it is.
        chosen = self._ui_shown or self._stop_chosen
        if end.reason == "stopped" and chosen and self.source.stop_outcome is not None:
            return 0
        return 0 if end.reason == "completed" else 1
