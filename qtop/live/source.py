"""LiveSource: a run on a device as the session's event stream.

``start`` connects, probes the device, launches the run detached and waits
for the timer calibration, which completes the header. ``events`` then
yields everything the device writes, in order per spool file: it follows the
run's three files (events, samples, the command's stdout) with one ``tail``
each over the same connection, and when the link drops it reconnects with
backoff and resumes each file from the byte after its last complete line.
Lines seen before are dropped by sequence number, so nothing is lost and
nothing is counted twice; what the device itself could not record is a
``Link`` gap event.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from qtop import __version__
from qtop.device import control
from qtop.device.plan import RunOptions, build_run_plan, new_run_id, spool_error
from qtop.device.probe import ProbeResult
from qtop.device.protocol import LineBuffer, ProcessLine
from qtop.device.sensors import SensorPlan, plan_sensors
from qtop.errors import RunFailed, UsageError
from qtop.events import End, Event, Header, Link
from qtop.live.backoff import Backoff
from qtop.live.early_stop import EarlyStopper
from qtop.live.hooks import DeviceAccess, ProcessHook
from qtop.live.prepare import prepare_device
from qtop.live.translate import Translator
from qtop.profiles import Profile
from qtop.textsafe import plain
from qtop.transport.base import LinkDown, Stream, Transport

HEADER_TIMEOUT_S = 120.0
SAMPLER_CLOCK_GRACE_S = 5.0
STOP_RECONNECT_WAIT_S = 30.0
# How long the events file may stay quiet before the device is asked whether the run's
# shell is still alive (a long iteration is quiet too: the question is cheap).
RUNNER_CHECK_S = 10.0
T = TypeVar("T")


class RunGone(RunFailed):
    """The run's spool directory disappeared from the device."""


@dataclass(slots=True)
class LiveState:
    """What the UI header shows about the link and the run."""

    link: str = "connecting"
    run_id: str | None = None
    run_dir: str | None = None
    pgid: int | None = None
    recording_path: str | None = None
    reconnects: int = 0


@dataclass(slots=True)
class _Followed:
    """One spool file being followed: how far it has been handled, and when it is complete."""

    name: str
    path: str
    committed: int = 0
    buffer: LineBuffer = field(default_factory=LineBuffer)
    tail_pid: int | None = None
    target: int | None = None
    ended: bool = False

    def done(self) -> bool:
        return self.ended or (self.target is not None and self.committed >= self.target)


def _lost_runner_detail(
    status: control.RunStatus, outcome: control.StopOutcome, run_dir: str
) -> str:
    """Why a run whose shell is gone ended without an end line qtop could read."""
    left = "" if outcome.signal == "none" else f"; what it left running got SIG{outcome.signal}"
    if status.died:
        return (
            f"the run's shell on the device (process group {outcome.pgid}) was killed "
            f"without ending the run (by the OOM killer, or a signal from outside qtop)"
            f"{left}; everything it wrote is kept"
        )
    if status.state:
        return f"the run ended ({status.state}) without an end line qtop could read{left}"
    # Writing the state truncates the file first: a full disk leaves it empty.
    return (
        f"the run ended without an end line, and its state file {plain(run_dir)}/state "
        f"is empty (is the device's disk full?){left}"
    )


class LiveSource:
    """A live run on a device (over SSH, or this machine) as a source of events."""

    def __init__(
        self,
        profile: Profile,
        transport: Transport,
        *,
        source_kind: str | None = None,
        agent_shell: str | None = None,
        run_options: RunOptions | None = None,
        recording_path: str | None = None,
        backoff: Backoff | None = None,
        hook: ProcessHook | None = None,
        remove_when_done: bool = True,
        now: Callable[[], float] = time.time,
        runner_check_s: float = RUNNER_CHECK_S,
    ) -> None:
        self.profile = profile
        self.transport = transport
        self.source_kind = source_kind or transport.kind
        self.description = f"{profile.name} on {transport.description}"
        self.state = LiveState(recording_path=recording_path)
        self.header: Header | None = None
        self.probe_result: ProbeResult | None = None
        self.sensors: SensorPlan | None = None
        self.translator: Translator | None = None
        self.stop_outcome: control.StopOutcome | None = None
        self._agent_shell = agent_shell
        self._run_options = run_options or RunOptions()
        self._backoff = backoff or Backoff()
        self._hook = hook
        self._remove_when_done = remove_when_done
        self._now = now
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._files: dict[str, _Followed] = {}
        self._stale_tails: list[int] = []
        self._progress = asyncio.Event()
        self._header_ready = asyncio.Event()
        self._header_grace: asyncio.TimerHandle | None = None
        self._connected = asyncio.Event()
        self._pump_task: asyncio.Task[None] | None = None
        self._detaching = False
        self._finished = False
        self._shell_name = ""
        self._early_stop = EarlyStopper(profile)
        self._runner_check_s = runner_check_s
        self._runner_lost: str | None = None

    # --- before the run ------------------------------------------------------

    @property
    def where(self) -> str:
        return self.transport.description

    async def open(self) -> ProbeResult:
        """Connect and probe the device (once); nothing is started yet."""
        if self.probe_result is not None:
            return self.probe_result
        # The link's state lives in the stream (and the recording), so every consumer
        # reads the same one: connecting and connected are events like a reconnect.
        self._emit(Link(host_t=self._now(), state="connecting", detail=f"to {self.where}"))
        try:
            await self.transport.connect()
        except LinkDown as exc:
            raise RunFailed(
                str(exc),
                exc.fix
                or "check the host name, that the device is up and reachable, and your "
                "~/.ssh/config; 'ssh HOST true' should work without a password prompt",
            ) from None
        self._connected.set()
        self.state.link = "connected"
        self._emit(Link(host_t=self._now(), state="connected", detail=f"to {self.where}"))
        probe = await self._link_call(
            control.probe(self.transport, self.profile.device, self.where)
        )
        if "sysfs_root" in probe.errors:
            raise UsageError(
                f"{self.where}: device.sysfs_root: {plain(probe.errors['sysfs_root'])}",
                "set the variable in the device's environment or use an absolute path",
            )
        if probe.spool is None:
            error = spool_error(probe)
            raise UsageError(f"{self.where}: {error.problem}", error.fix)
        self.probe_result = probe
        self.sensors = plan_sensors(probe, self.profile.device)
        return probe

    async def _link_call(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except LinkDown as exc:
            raise RunFailed(f"{self.where}: the link dropped: {exc}", "try again") from None

    async def leftovers(self) -> list[control.LeftoverRun]:
        """Runs of earlier sessions still alive in this profile's spool directory."""
        probe = await self.open()
        if probe.spool is None:
            return []
        return await self._link_call(control.leftovers(self.transport, probe.spool))

    async def stop_leftover(self, run: control.LeftoverRun) -> control.StopOutcome:
        await self.open()
        return await self._link_call(control.stop(self.transport, run.run_dir))

    def _choose_shell(self, probe: ProbeResult) -> str:
        """bash 5 where there is one, else mksh, else ``sh``: the agent checks the rest.

        bash 5 has ``$EPOCHREALTIME`` and a timed ``read`` and counts in 64
        bits; mksh (Android) has both, with 32-bit arithmetic the agent allows
        for; dash has neither and forks a ``sleep`` per tick.
        """
        wanted = self._agent_shell
        if wanted in (None, "auto"):
            bash = probe.bash_path
            mksh = probe.caps.get("mksh", ("",))[0]
            if bash:
                self._shell_name = f"bash {plain(probe.caps['bash'][2])}"
                return bash
            if mksh:
                self._shell_name = "mksh"
                return mksh
            self._shell_name = "sh"
            return "sh"
        if wanted == "bash":
            if probe.bash_path is None:
                raise UsageError(f"{self.where}: the agent shell 'bash' (5 or later) is not there")
            self._shell_name = f"bash {probe.caps['bash'][2]}"
            return probe.bash_path
        self._shell_name = wanted
        return wanted

    # --- starting -------------------------------------------------------------

    async def start(self) -> Header:
        """Launch the run on the device and return the header (after timer calibration)."""
        if self.header is not None:
            return self.header
        probe = await self.open()
        assert self.sensors is not None
        notes = await self._link_call(
            prepare_device(self.transport, self.profile, probe, self.sensors)
        )
        shell = self._choose_shell(probe)
        run_id = new_run_id(self.profile.name)
        plan = build_run_plan(
            self.profile, probe, self.sensors, shell=shell, run_id=run_id, options=self._run_options
        )
        launched = await self._link_call(control.launch(self.transport, plan))
        self.state.run_id, self.state.run_dir, self.state.pgid = (
            run_id,
            launched.run_dir,
            launched.pgid,
        )
        self.translator = Translator(
            self.sensors,
            plan.variants,
            self.profile.device.sample_interval_s,
            run_dir=launched.run_dir,
            now=self._now,
            deadline_s=self.profile.run.effective_deadline_s(),
        )
        self._files = {
            name: _Followed(name, f"{launched.run_dir}/{name}") for name in control.FOLLOWED_FILES
        }
        self._emit(self.translator.channels_event())
        for warning in self.sensors.warnings:
            self._emit(self.translator.probe_warning(warning))
        for text, level in notes:
            self._emit(self.translator.note(text, level))
        self._pump_task = asyncio.create_task(self._pump())
        waiter = asyncio.create_task(self._header_ready.wait())
        try:
            await asyncio.wait(
                {waiter, self._pump_task},
                timeout=HEADER_TIMEOUT_S,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            waiter.cancel()
        if not self._header_ready.is_set():
            if self._pump_task.done() and self._pump_task.exception() is not None:
                raise self._pump_task.exception()  # type: ignore[misc]
            raise RunFailed(
                f"{self.where}: the run started ({run_id}) but its timer calibration did not "
                f"arrive within {HEADER_TIMEOUT_S:g} s",
                f"look at {launched.run_dir}/agent.err on the device",
            )
        self.header = self._build_header(probe, launched)
        return self.header

    def _build_header(self, probe: ProbeResult, launched: control.LaunchedRun) -> Header:
        assert self.translator is not None
        identity = probe.identity
        clock = self.translator.clocks["events"]
        device: dict[str, object] = {
            "hostname": identity.get("hostname", ""),
            "uname": identity.get("uname", ""),
            "soc": identity.get("soc_machine") or identity.get("model", ""),
            "model": identity.get("model", ""),
            "soc_id": identity.get("soc_soc_id", ""),
            "qnn_version": probe.qnn_version,
            "qnn_version_output": list(probe.qnn_lines),
            "qnn_sdk_root": identity.get("qnn_sdk_root"),
            "shell": self._shell_name,
            "clock": clock.clock,
            "clock_resolution_s": clock.resolution_us / 1e6,
            "agent_sleep": clock.sleep,
            "agent_arithmetic_bits": clock.arithmetic_bits,
            "sampler_clock": self.translator.clocks["samples"].clock or None,
            "detached_with": launched.detached_with,
            "timer_overhead_s": self.translator.overhead_s,
            "timer_overhead_spread_s": self.translator.overhead_spread_s,
            "timer_calibration_s": [d / 1e6 for d in self.translator.calibration_us],
            "run_id": self.state.run_id,
            "run_dir": launched.run_dir,
            "pgid": launched.pgid,
            "sysfs_root": probe.root,
            "sample_interval_s": self.profile.device.sample_interval_s,
            "page_size": probe.page_size,
            "transport": self.transport.description,
        }
        return Header(
            host_t=self._now(),
            qtop_version=__version__,
            session_id=self.state.run_id or uuid.uuid4().hex,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._now())),
            source=self.source_kind,
            profile=self.profile.to_dict(),
            device={k: v for k, v in device.items() if v is not None},
        )

    # --- the stream -----------------------------------------------------------

    async def events(self) -> AsyncIterator[Event]:
        """Every event after the header (``header`` holds it once ``start`` returns), to End."""
        if self.header is None:
            await self.start()
        while True:
            event = await self._queue.get()
            if event is None:
                return
            yield event
            if isinstance(event, End):
                self.state.link = "ended"
                return

    def _emit(self, event: Event) -> None:
        self._queue.put_nowait(event)

    async def _pump(self) -> None:
        assert self.translator is not None
        reason, detail = "failed", ""
        try:
            while True:
                try:
                    await self._follow()
                    break
                except LinkDown as exc:
                    if self._detaching:
                        return
                    await self._reconnect(str(exc))
            reason, detail = self._end_reason()
            if reason == "failed":
                self._emit(self.translator.note(f"the run failed: {detail}", "error"))
        except asyncio.CancelledError:
            raise
        except RunFailed as exc:
            reason, detail = "failed", str(exc)
            self._emit(self.translator.note(detail, "error"))
        except Exception as exc:
            reason, detail = "failed", f"internal error: {type(exc).__name__}: {exc}"
            self._emit(self.translator.note(detail, "error"))
        finally:
            if not self._detaching:
                await self._finish(reason, detail)

    def _end_reason(self) -> tuple[str, str]:
        assert self.translator is not None
        end = self.translator.run_end
        if end is not None:
            return end.reason, end.detail
        if self.stop_outcome is not None:
            return "stopped", f"stopped with SIG{self.stop_outcome.signal}"
        if self._runner_lost is not None:
            return "failed", self._runner_lost
        return "failed", "the run ended without its end line"

    async def _finish(self, reason: str, detail: str) -> None:
        assert self.translator is not None
        self._finished = True
        self._header_ready.set()
        if self._header_grace is not None:
            self._header_grace.cancel()
        await self._end_tails()
        if reason == "completed" and self._remove_when_done and self.state.run_dir:
            with contextlib.suppress(LinkDown):
                await control.remove(self.transport, self.state.run_dir)
        extra = {"reconnects": self.state.reconnects}
        self._emit(self.translator.end_event(reason, detail, extra))
        self._queue.put_nowait(None)

    async def _end_tails(self) -> None:
        pids = self._stale_tails + [f.tail_pid for f in self._files.values() if f.tail_pid]
        self._stale_tails = []
        for followed in self._files.values():
            followed.tail_pid = None
        with contextlib.suppress(LinkDown):
            await control.kill_followers(self.transport, pids)

    async def _follow(self) -> None:
        """Follow every unfinished file until all are complete; ``LinkDown`` if the link drops."""
        if self._stale_tails:
            await control.kill_followers(self.transport, self._stale_tails)
            self._stale_tails = []
        tasks = {
            name: asyncio.create_task(self._read(followed))
            for name, followed in self._files.items()
            if not followed.done()
        }
        watch = asyncio.create_task(self._watch_runner())
        cancelled: set[str] = set()
        try:
            while True:
                for name, task in tasks.items():
                    followed = self._files[name]
                    self._flush_if_complete(followed)
                    if followed.done() and not task.done() and name not in cancelled:
                        cancelled.add(name)
                        task.cancel()
                for task in [*tasks.values(), watch]:
                    if task.done() and not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
                if all(f.done() for f in self._files.values()):
                    return
                self._progress.clear()
                waiter = asyncio.create_task(self._progress.wait())
                pending = [t for t in [*tasks.values(), watch] if not t.done()]
                await asyncio.wait([waiter, *pending], return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
        finally:
            for task in [*tasks.values(), watch]:
                task.cancel()
            await asyncio.gather(*tasks.values(), watch, return_exceptions=True)
            for followed in self._files.values():
                if followed.tail_pid is not None:
                    self._stale_tails.append(followed.tail_pid)
                    followed.tail_pid = None

    async def _watch_runner(self) -> None:
        """Ends the follow of a run whose shell died without writing its end line.

        A runner killed from outside qtop (the OOM killer, a ``kill -9``) leaves
        files that stop growing, and ``tail -f`` would follow them for ever. Each
        time the events file has been quiet for ``runner_check_s`` the device is
        asked whether the runner is alive; once it is not, what the run left
        running is stopped and every file is read to its final size.
        """
        run_dir = self.state.run_dir
        events = self._files.get("events")
        if run_dir is None or events is None:
            return
        seen = events.committed
        while not events.done():
            await asyncio.sleep(self._runner_check_s)
            if events.committed != seen:
                seen = events.committed
                continue
            try:
                status = await control.status(self.transport, run_dir)
            except (LinkDown, TimeoutError):
                continue  # the followers see a dropped link and reconnect
            if status is None or status.runner_alive:
                continue
            # Its files grow no more (but from what it left running, which the stop
            # ends): each is read to its size, whose end line may be unreadable too.
            outcome = await control.stop(self.transport, run_dir)
            for name, size in outcome.sizes.items():
                if name in self._files:
                    self._files[name].target = size
            self._runner_lost = _lost_runner_detail(status, outcome, run_dir)
            self._progress.set()
            return

    def _flush_if_complete(self, followed: _Followed) -> None:
        """A file known to end without a newline: its last partial line is complete."""
        buffer = followed.buffer
        if followed.target is None or followed.done() or not buffer.pending:
            return
        if buffer.offset + buffer.pending >= followed.target:
            flushed = buffer.flush()
            if flushed is not None and followed.name == "stdout":
                line, end = flushed
                for event in self.translator.stdout_line(_text(line)):  # type: ignore[union-attr]
                    self._emit(event)
                followed.committed = end

    async def _read(self, followed: _Followed) -> None:
        tail_sleep = self.probe_result is not None and self.probe_result.has("tail_sleep")
        command = control.follow_command(followed.path, followed.committed, tail_sleep)
        opening = asyncio.ensure_future(self.transport.open_stream(command))
        try:
            stream = await asyncio.shield(opening)
        except asyncio.CancelledError:
            # Cancelled while the stream was being opened: close it once it exists,
            # even if the cancellation is repeated meanwhile (a stream left open
            # keeps a process and its pipes until the garbage collector finds them).
            while not opening.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait([opening])
            if not opening.cancelled() and opening.exception() is None:
                await _close_fully(opening.result())
            raise
        followed.buffer = LineBuffer(followed.committed)
        try:
            preamble = await self._read_preamble(stream, followed)
            chunks = [preamble] if preamble else []
            while not followed.done():
                data = chunks.pop() if chunks else await stream.read()
                if not data:
                    raise LinkDown(f"the follow stream of {followed.name} ended")
                for line, end in followed.buffer.feed(data):
                    await self._handle(followed, line)
                    followed.committed = end
                    self._progress.set()
                    if followed.done():
                        break
                self._flush_if_complete(followed)
                self._progress.set()
        finally:
            if followed.buffer.pending and not followed.done():
                assert self.translator is not None
                self.translator.counts["torn_lines_dropped"] += 1
            followed.buffer.discard_partial()
            await _close_fully(stream)

    async def _read_preamble(self, stream: Stream, followed: _Followed) -> bytes:
        """The follow command's first line (the tail's pid); returns the bytes after it."""
        head = b""
        while b"\n" not in head:
            data = await stream.read()
            if not data:
                raise LinkDown(f"the follow stream of {followed.name} ended before it started")
            head += data
        first, _, rest = head.partition(b"\n")
        if first.strip() == b"gone":
            raise RunGone(
                f"{self.where}: the run's file {followed.path} is gone (was the device rebooted, "
                "or the spool directory cleaned?)",
                "the data already received is in the recording",
            )
        if first.strip().isdigit():
            followed.tail_pid = int(first.strip())
        return rest

    async def _handle(self, followed: _Followed, raw: bytes) -> None:
        translator = self.translator
        assert translator is not None
        text = _text(raw)
        if followed.name == "samples":
            for event in translator.samples_line(text):
                self._emit(event)
            self._check_header_ready()
            return
        if followed.name == "stdout":
            for event in translator.stdout_line(text):
                self._emit(event)
            return
        events, process = translator.events_line(text)
        for event in events:
            self._emit(event)
        self._check_header_ready()
        if translator.run_end is not None and not followed.ended:
            followed.ended = True
            self._files["stdout"].target = translator.run_end.stdout_bytes
            self._files["samples"].target = translator.run_end.samples_bytes
        if process is not None:
            await self._handle_process(process)

    def _check_header_ready(self) -> None:
        """The header waits for the timer calibration and the sampler's clock line.

        A sampler that has not said which clock it uses within a few seconds of
        the calibration does not hold the header back any longer.
        """
        translator = self.translator
        assert translator is not None
        if self._header_ready.is_set():
            return
        if translator.overhead_s is not None or translator.run_end is not None:
            if translator.clocks["samples"].clock:
                self._header_ready.set()
            elif self._header_grace is None:
                self._header_grace = asyncio.get_running_loop().call_later(
                    SAMPLER_CLOCK_GRACE_S, self._header_ready.set
                )

    async def _handle_process(self, line: ProcessLine) -> None:
        translator = self.translator
        assert translator is not None
        exit = translator.process_exit(line)
        if self._hook is None:
            produced: list[Event] = [translator.iteration(exit)]
        else:
            result = await self._hook(exit, DeviceAccess(self.transport, exit.run_dir))
            if result.advance:
                await control.advance(self.transport, exit.run_dir, exit.variant_index)
            produced = translator.adopt(result.events)
            if self.profile.run.latency_source == "wall":
                # A hook next to wall latency only adds the profiler's reports.
                produced.insert(0, translator.iteration(exit))
        stop = self._early_stop.observe(exit.variant, produced, self._now())
        if stop is not None:
            await control.advance(self.transport, exit.run_dir, exit.variant_index)
            produced.append(stop)
        for event in [*translator.commit_process(line), *produced]:
            self._emit(event)

    async def _reconnect(self, reason: str) -> None:
        assert self.translator is not None
        t = self.translator.last_device_t
        self._connected.clear()
        self.state.link = "disconnected"
        self._emit(Link(t=t, host_t=self._now(), state="disconnected", detail=reason))
        attempt = 0
        last_error = reason
        while True:
            attempt += 1
            delay = self._backoff.delay(attempt)
            self.state.link = "reconnecting"
            self._emit(
                Link(
                    t=t,
                    host_t=self._now(),
                    state="reconnecting",
                    attempt=attempt,
                    detail=f"attempt {attempt} in {delay:.1f} s (last error: {last_error})",
                )
            )
            await asyncio.sleep(delay)
            try:
                await self.transport.connect()
            except LinkDown as exc:
                last_error = str(exc)
                continue
            break
        self.state.reconnects += 1
        self.state.link = "connected"
        self._connected.set()
        self._emit(
            Link(
                t=t,
                host_t=self._now(),
                state="reconnected",
                attempt=attempt,
                detail=f"resuming run {self.state.run_id}",
            )
        )

    # --- stopping -------------------------------------------------------------

    async def stop_run(self) -> control.StopOutcome:
        """Stop the device run: TERM its process group, then KILL; no process is left."""
        if self.state.run_dir is None:
            raise RunFailed("there is no run to stop")
        if self.stop_outcome is not None:
            return self.stop_outcome
        if self._finished and self.translator is not None and self.translator.run_end is not None:
            raise RunFailed("the run has already ended")
        try:
            await asyncio.wait_for(self._connected.wait(), STOP_RECONNECT_WAIT_S)
            outcome = await control.stop(self.transport, self.state.run_dir)
        except (TimeoutError, LinkDown):
            raise RunFailed(
                f"cannot reach {self.where} to stop run {self.state.run_id}; it keeps running",
                f"stop it later with: qtop run {self.profile.name} --stop-leftover",
            ) from None
        self.stop_outcome = outcome
        for name, size in outcome.sizes.items():
            if name in self._files:
                self._files[name].target = size
        self._progress.set()
        return outcome

    async def detach(self) -> None:
        """Stop following and leave the device run alone; the stream ends with ``interrupted``."""
        if self._finished:
            return
        self._detaching = True
        self._finished = True
        if self._pump_task is not None:
            self._pump_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump_task
        await self._end_tails()
        if self.translator is not None:
            detail = (
                f"qtop detached; run {self.state.run_id} continues on the device (stop it with "
                f"'qtop run {self.profile.name} --stop-leftover')"
            )
            self._emit(self.translator.end_event("interrupted", detail))
        self._queue.put_nowait(None)

    async def close(self) -> None:
        if self._pump_task is not None and not self._pump_task.done():
            await self.detach()
        await self.transport.close()


async def _close_fully(stream: Stream) -> None:
    """Close a stream even if the task is cancelled again meanwhile (it is unwinding anyway)."""
    closing = asyncio.ensure_future(stream.close())
    while not closing.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(closing)
    with contextlib.suppress(Exception):
        closing.result()


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")
