"""Several devices at once: ``qtop run A.yaml B.yaml``.

Each device is a ``LiveRun`` of its own (its ``LiveSource``, ``Session`` and
recording, exactly what a single-device run writes), all on one event loop. A
device that fails (it cannot be reached, its link is lost for good) is reported
with its error while the others go on. Headless, every line a device prints is
prefixed with its name; with the UI, the runs wait until every device has
started (or failed to), then one combined view shows them all, and each run
concludes when it closes.

Ctrl-C (headless) is taken once for all devices: on a terminal it asks whether
to stop every run or leave them all going; without one it stops them.
"""

from __future__ import annotations

import asyncio
import io
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO, cast

from qtop.errors import QtopError, UsageError
from qtop.live.runner import RECORDINGS_DIR, LiveOptions, LiveRun, _ask, default_recording_path
from qtop.live.source import LiveSource
from qtop.session import Session
from qtop.session_set import DeviceSession, distinct_names

DevicesUiOpener = Callable[[list[DeviceSession]], Awaitable[bool]]


def plan_recordings(
    profile_names: Sequence[str],
    record: str | None,
    no_record: bool,
    now: float | None = None,
) -> list[Path | None]:
    """One recording per device: the default name of each profile, in one directory.

    ``--record`` names that directory; a single file cannot hold several devices'
    sessions, so a ``.jsonl`` path or an existing file is refused with the fix.
    Two devices of the same profile get ``-2``, ``-3`` after the name.
    """
    if no_record:
        return [None] * len(profile_names)
    directory = Path(RECORDINGS_DIR)
    if record is not None:
        directory = Path(record)
        if directory.suffix == ".jsonl" or (directory.exists() and not directory.is_dir()):
            raise UsageError(
                f"--record {record}: {len(profile_names)} devices make {len(profile_names)} "
                "recordings, which one file cannot hold",
                "give a directory (--record DIR): each device's recording goes in it, "
                "named by its profile",
            )
    paths: list[Path | None] = []
    taken: set[str] = set()
    for name in profile_names:
        default = default_recording_path(name, now)
        stem, number = default.stem, 1
        while (candidate := f"{stem}{f'-{number}' if number > 1 else ''}.jsonl") in taken:
            number += 1
        taken.add(candidate)
        paths.append(directory / candidate)
    return paths


class PrefixedOut(io.TextIOBase):
    """A text stream that writes each complete line to ``out`` after ``prefix``.

    It is never a terminal, so a device's progress comes as whole lines (a status
    line redrawn in place would overwrite the other device's).
    """

    def __init__(self, prefix: str, out: TextIO) -> None:
        super().__init__()
        self.prefix = prefix
        self.out = out
        self._partial = ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self.out.write(f"{self.prefix}{line}\n")
        return len(text)

    def flush(self) -> None:
        self.out.flush()


class MultiRun:
    """The devices of one ``qtop run A B ...``, each its own ``LiveRun``, run together."""

    def __init__(
        self,
        sources: Sequence[LiveSource],
        options: Sequence[LiveOptions],
        *,
        out: TextIO | None = None,
        stdin: TextIO | None = None,
        interactive: bool | None = None,
    ) -> None:
        if len(sources) != len(options):
            raise ValueError("one LiveOptions per source")
        self.out = out or sys.stdout
        self.stdin = stdin or sys.stdin
        if interactive is None:
            interactive = self.stdin.isatty() and self.out.isatty()
        self.interactive = interactive
        self.headless = all(o.headless for o in options)
        names = distinct_names(source.profile.name for source in sources)
        self.devices = [DeviceSession(name, None) for name in names]
        # The devices' own runs never ask: two questions on one terminal at once could
        # not be told apart. Leftovers are refused with their fix; Ctrl-C is asked here.
        self.runs = [
            LiveRun(
                source,
                option,
                out=cast(TextIO, PrefixedOut(f"{name}: ", self.out)),
                stdin=self.stdin,
                interactive=False,
                handle_interrupts=False,
            )
            for source, option, name in zip(sources, options, names, strict=True)
        ]
        self.codes: list[int | None] = [None] * len(self.runs)
        self._settled: set[int] = set()
        self._ui_result: asyncio.Future[bool] | None = None
        self._ui_task: asyncio.Task[None] | None = None
        self._ui_error: BaseException | None = None
        self._open_ui: DevicesUiOpener | None = None
        self._interrupts = 0
        self._signals_taken = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._drives: list[asyncio.Task[None]] = []

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def run(self, open_ui: DevicesUiOpener | None = None) -> int:
        loop = asyncio.get_running_loop()
        self._ui_result = loop.create_future()
        self._open_ui = None if self.headless else open_ui
        if self._open_ui is None:
            self._take_interrupts()
        try:
            self._drives = [asyncio.ensure_future(self._drive(i)) for i in range(len(self.runs))]
            await asyncio.gather(*self._drives, return_exceptions=True)
            if self._ui_task is not None:
                await self._ui_task
        finally:
            self._release_interrupts()
        if self._ui_error is not None:
            raise self._ui_error
        return self._conclude()

    async def _drive(self, index: int) -> None:
        run, device = self.runs[index], self.devices[index]
        try:
            self.codes[index] = await run.run(lambda session: self._join(index, session))
        except QtopError as exc:
            device.error = str(exc)
            run.say(f"error: {exc}")
            self.codes[index] = exc.exit_code
        except asyncio.CancelledError:
            device.error = "interrupted before its run started"
            self.codes[index] = 1
        finally:
            self._settle(index)
            run.out.flush()

    async def _join(self, index: int, session: Session) -> bool:
        """A device's session is ready: wait for the others, then for the combined view."""
        self.devices[index].session = session
        if self._open_ui is None:
            return False
        self._settle(index)
        assert self._ui_result is not None
        return await asyncio.shield(self._ui_result)

    def _settle(self, index: int) -> None:
        """``index`` has its session or has failed; once every device has, the view opens."""
        self._settled.add(index)
        if len(self._settled) < len(self.runs) or self._ui_task is not None:
            return
        if self._ui_result is None or self._ui_result.done():
            return
        if self._open_ui is None or not any(d.session for d in self.devices):
            self._ui_result.set_result(False)
            return
        self._ui_task = asyncio.ensure_future(self._show(self._open_ui))

    async def _show(self, open_ui: DevicesUiOpener) -> None:
        assert self._ui_result is not None
        shown = True
        try:
            shown = await open_ui(self.devices)
        except Exception as exc:
            # Let every run conclude (and close its recording) before this is raised.
            self._ui_error = exc
        if not shown:
            self.say("(the UI is not available in this build; running headless)")
            self._take_interrupts()
        self._ui_result.set_result(shown)

    # --- Ctrl-C, once for every device ------------------------------------------

    def _take_interrupts(self) -> None:
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_interrupt)
            self._signals_taken = True
        except (NotImplementedError, RuntimeError, ValueError):
            self._signals_taken = False

    def _release_interrupts(self) -> None:
        if self._signals_taken:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
            self._signals_taken = False

    def _on_interrupt(self) -> None:
        self._interrupts += 1
        if self._interrupts == 1:
            self._spawn(self._interrupted())
            return
        self.say("interrupted again: detaching from every device; their runs are left as they are")
        for run in self.runs:
            self._spawn(run.source.detach())

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _interrupted(self) -> None:
        count = sum(1 for run in self.runs if run.session is not None)
        if self.interactive:
            question = f"\nstop the runs on all {count} devices? [y/N] "
            stop = await _ask(question, self.stdin, self.out)
        else:
            self.say("interrupted: stopping every device's run (no terminal to ask on)")
            stop = True
        for run, drive in zip(self.runs, self._drives, strict=True):
            if run.session is None:
                # Not started yet: nothing is running on that device to stop or leave.
                drive.cancel()
            elif run.session.model.end is None:
                self._spawn(run.end_run(stop, chosen=self.interactive))

    # --- the end ------------------------------------------------------------------

    def _conclude(self) -> int:
        self.say("devices:")
        for run, device, code in zip(self.runs, self.devices, self.codes, strict=True):
            self.say(f"  {device.name}: {self._outcome(run, device, code)}")
        recorded = [str(run.recording_path) for run in self.runs if run.recording_path is not None]
        if len(recorded) > 1:
            self.say(f"side by side: qtop report {' '.join(recorded)}")
            self.say(f"  replay them together: qtop replay {' '.join(recorded)}")
        codes = [1 if code is None else code for code in self.codes]
        return 0 if all(code == 0 for code in codes) else max(codes)

    @staticmethod
    def _outcome(run: LiveRun, device: DeviceSession, code: int | None) -> str:
        if run.session is None:
            problem = (device.error or "it did not start").split("\n", 1)[0]
            return f"failed: {problem} (exit {code})"
        end = run.session.model.end
        said = f"run {end.reason}" if end is not None else "ended without an end event"
        if device.error is not None:
            said += f"; {device.error.splitlines()[0]}"
        where = f", recorded to {run.recording_path}" if run.recording_path else ""
        return f"{said}{where} (exit {code})"


def per_device_options(
    base: LiveOptions, profile_refs: Sequence[str], recordings: Sequence[Path | None]
) -> list[LiveOptions]:
    """Each device's options: its own profile reference and recording path."""
    return [
        replace(base, profile_ref=ref, record=str(path) if path else None, no_record=path is None)
        for ref, path in zip(profile_refs, recordings, strict=True)
    ]
