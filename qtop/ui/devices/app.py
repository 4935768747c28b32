"""DevicesApp: the combined view, one column per device, live or replayed.

It follows the dashboard's pattern: one async worker per device runs that
device's ``Session.run`` (the only reader of its source) and posts
``DeviceChanged`` with the device's index; the handler gives that device's
column a new ``DeviceView``. Each device's analysis (power source, energy per
inference, throttling onset) runs in a thread worker over a copy of its model,
at most once an analysis period, and posts ``DeviceAnalysed``. A device whose
session fails shows its error in its column; the others go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import shlex
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from qtop.analysis.live import LiveAnalysis, LiveInputs, analyze_live, capture
from qtop.errors import QtopError
from qtop.events import Event
from qtop.record.replay import ReplaySource
from qtop.record.replay_set import ALIGNMENT_NOTE, ReplaySet
from qtop.session_set import DeviceSession
from qtop.textsafe import clean
from qtop.ui.devices.column import DeviceColumn
from qtop.ui.devices.messages import DeviceAnalysed, DeviceChanged, DeviceFinished
from qtop.ui.devices.view import DeviceView, shown_variant
from qtop.ui.format import clock
from qtop.ui.plain_app import PlainApp
from qtop.ui.playback import speed_name
from qtop.ui.screens.quit import QuitChoice, QuitScreen

DISPLAY_HZ = 3.0
CHART_PERIOD_S = 1.0
ANALYSIS_PERIOD_S = 1.0
# A stopped or detached run ends its stream within seconds; past this, quit anyway.
SESSION_END_WAIT_S = 10.0
REPLAY_ACTIONS = ("toggle_pause", "faster", "slower", "max_speed", "seek", "seek_start")
Stamp = tuple[object, ...]


@dataclass(slots=True)
class _Slot:
    """One device and the display's bookkeeping for it."""

    device: DeviceSession
    analysis: LiveAnalysis | None = None
    finished: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    request: int = 0
    analysis_running: bool = False
    analysis_wanted: bool = False
    analysis_started: float = -math.inf
    analysis_timer: object | None = None
    charts_drawn: float = -math.inf
    chart_timer: object | None = None
    shown_at: Stamp | None = None
    charts_at: Stamp | None = None
    analysed_at: Stamp | None = None


def dashboard_command(recording: Path, live: bool) -> list[str]:
    """``qtop replay`` of one device's recording: a live one as fast as it can to the end
    written so far, then following what the device's session appends."""
    command = [sys.executable, "-m", "qtop", "replay", str(recording)]
    if live:
        command += ["--follow", "--speed", "max"]
    return command


def devices_quit_text(names: Sequence[str], can_leave: bool) -> str:
    runs = ", ".join(clean(name) for name in names)
    if not can_leave:
        return (
            f"The runs on {runs} are on simulated boards, which go away when qtop exits: "
            "quitting stops them. What was measured so far is kept in the recordings."
        )
    return (
        f"The runs on {runs} keep their NPUs busy until they end. Stop them all now (what "
        "was measured is kept), or leave them running and stop each later with "
        "'qtop run PROFILE --stop-leftover'."
    )


class DevicesApp(PlainApp[int]):
    """Several devices side by side: one column each, fed by each device's own session."""

    TITLE = "qtop"
    CSS = """
    #devices-title { height: 1; padding: 0 1; background: $panel; text-wrap: nowrap;
                     text-overflow: ellipsis; }
    #devices { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("space", "toggle_pause", "Pause"),
        Binding("plus,equals_sign", "faster", "Faster", key_display="+"),
        Binding("minus", "slower", "Slower", key_display="-"),
        Binding("asterisk", "max_speed", "Max speed", show=False),
        Binding("right", "seek(5)", "+5 s", show=False),
        Binding("left", "seek(-5)", "-5 s", show=False),
        Binding("shift+right", "seek(60)", "+1 min", show=False),
        Binding("shift+left", "seek(-60)", "-1 min", show=False),
        Binding("home", "seek_start", "Start", show=False),
        Binding("enter", "open_device", "Dashboard"),
        *(Binding(str(n), f"open_device({n - 1})", show=False) for n in range(1, 10)),
    ]

    def __init__(
        self,
        devices: Sequence[DeviceSession],
        *,
        display_hz: float = DISPLAY_HZ,
        chart_period_s: float = CHART_PERIOD_S,
        analysis_period_s: float = ANALYSIS_PERIOD_S,
        run_outlives_qtop: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.slots = [_Slot(device) for device in devices]
        sources = [d.session.source for d in devices if d.session is not None]
        replays = [s for s in sources if isinstance(s, ReplaySource)]
        self.replay = ReplaySet(replays) if replays and len(replays) == len(sources) else None
        self.run_outlives_qtop = run_outlives_qtop
        self._display_period = 1.0 / display_hz
        self._chart_period = chart_period_s
        self._analysis_period = analysis_period_s
        self._clock = clock

    # --- layout ------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="devices-title")
        with Horizontal(id="devices"):
            for index, slot in enumerate(self.slots):
                session = slot.device.session
                description = session.source.description if session is not None else ""
                yield DeviceColumn(slot.device.name, description, id=f"device-{index}")
        yield Footer()

    def on_mount(self) -> None:
        self.title = clean(f"qtop · {len(self.slots)} devices")
        for index, slot in enumerate(self.slots):
            if slot.device.session is not None:
                self.run_device(index)
                self._request_analysis(index, now=True)
            else:
                slot.finished = True
                slot.done.set()
            self._show(index, charts=True)
        self._show_title()

    # --- each device's session ---------------------------------------------------

    @work(exit_on_error=True)
    async def run_device(self, index: int) -> None:
        slot = self.slots[index]
        session = slot.device.session
        assert session is not None
        error: QtopError | None = None

        def observe(batch: Sequence[Event]) -> None:
            self.post_message(DeviceChanged(index))

        try:
            await session.run(observe, batch_window_s=self._display_period)
        except QtopError as exc:
            error = exc
        finally:
            slot.done.set()
        self.post_message(DeviceFinished(index, error))

    def on_device_changed(self, message: DeviceChanged) -> None:
        self._request_analysis(message.index)
        self._show(message.index)
        self._show_title()

    def on_device_finished(self, message: DeviceFinished) -> None:
        slot = self.slots[message.index]
        slot.finished = True
        if message.error is not None:
            # The run coordinator reports it with the device's outcome after the view closes.
            slot.device.error = str(message.error)
            self.notify(str(message.error), title=f"{slot.device.name}: session stopped",
                        severity="error", timeout=30)  # fmt: skip
        self._request_analysis(message.index, now=True)
        self._show(message.index, charts=True)
        self._show_title()

    async def on_unmount(self) -> None:
        for slot in self.slots:
            if slot.device.session is not None:
                await slot.device.session.source.close()

    # --- each device's analysis -----------------------------------------------------

    def _request_analysis(self, index: int, now: bool = False) -> None:
        slot = self.slots[index]
        slot.analysis_wanted = True
        if now and slot.analysis_timer is not None:
            slot.analysis_timer.stop()  # type: ignore[attr-defined]
            slot.analysis_timer = None
        if slot.analysis_running or slot.analysis_timer is not None:
            return
        wait = slot.analysis_started + self._analysis_period - self._clock()
        if wait > 0 and not now:
            slot.analysis_timer = self.set_timer(wait, lambda: self._start_analysis(index))
        else:
            self._start_analysis(index)

    def _start_analysis(self, index: int) -> None:
        slot = self.slots[index]
        slot.analysis_timer = None
        session = slot.device.session
        if not slot.analysis_wanted or session is None:
            return
        slot.analysis_wanted = False
        slot.analysis_running = True
        slot.analysis_started = self._clock()
        slot.request += 1
        slot.analysed_at = self._stamp(index)
        inputs, request = capture(session.model, shown_variant(session.model)), slot.request
        self.run_worker(
            lambda: self._analyze(index, inputs, request),
            name=f"analysis-{index}",
            group=f"analysis-{index}",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _analyze(self, index: int, inputs: LiveInputs, request: int) -> None:
        try:
            analysis, problem = analyze_live(inputs), ""
        except Exception as exc:
            # A live run must stay supervised even if one analysis trips over its data.
            analysis, problem = None, f"{type(exc).__name__}: {exc}"
        if not get_current_worker().is_cancelled:
            self.post_message(DeviceAnalysed(index, analysis, request, problem))

    def on_device_analysed(self, message: DeviceAnalysed) -> None:
        slot = self.slots[message.index]
        if message.request != slot.request:
            return
        slot.analysis_running = False
        if message.analysis is None:
            self.notify(f"{slot.device.name}: the analysis failed: {message.problem}",
                        severity="error", timeout=10)  # fmt: skip
        else:
            slot.analysis = message.analysis
            self._show(message.index)
        if slot.analysis_wanted:
            self._request_analysis(message.index)

    # --- the display ----------------------------------------------------------------

    def _stamp(self, index: int) -> Stamp:
        session = self.slots[index].device.session
        if session is None:
            return ()
        model = session.model
        return (model.event_count, model.t_last, shown_variant(model))

    def view(self, index: int, charts: bool) -> DeviceView:
        slot = self.slots[index]
        session = slot.device.session
        model = session.model if session is not None else None
        variant = shown_variant(model) if model is not None else ""
        analysis = slot.analysis if slot.analysis and slot.analysis.variant == variant else None
        recorder = session.recorder if session is not None else None
        return DeviceView(
            name=slot.device.name,
            model=model,
            variant=variant,
            analysis=analysis,
            charts=charts,
            replay=self.replay is not None,
            finished=slot.finished,
            error=slot.device.error,
            recording=recorder.path if recorder is not None else None,
        )

    def _show(self, index: int, charts: bool | None = None) -> None:
        """Give the device's column its view; its chart at most once a chart period."""
        slot = self.slots[index]
        if charts is None:
            charts = self._charts_due(index)
        if charts and slot.chart_timer is not None:
            slot.chart_timer.stop()  # type: ignore[attr-defined]
            slot.chart_timer = None
        # A device's message may still come in while the app closes and its columns go.
        for column in self.query(f"#device-{index}").results(DeviceColumn):
            column.show(self.view(index, charts))
        slot.shown_at = self._stamp(index)
        if charts:
            slot.charts_drawn = self._clock()
            slot.charts_at = slot.shown_at

    def _charts_due(self, index: int) -> bool:
        slot = self.slots[index]
        wait = slot.charts_drawn + self._chart_period - self._clock()
        if wait <= 0:
            return True
        if slot.chart_timer is None:
            delay = wait + self._display_period
            slot.chart_timer = self.set_timer(delay, lambda: self._show(index, charts=True))
        return False

    def title_text(self) -> str:
        count = len(self.slots)
        replay = self.replay
        if replay is None:
            running = sum(1 for slot in self.slots if not slot.finished)
            return f"{count} devices side by side · {running} running · each on its own clock"
        state = "paused" if replay.paused else speed_name(replay.speed)
        length = replay.length_s()
        where = f"+{clock(replay.offset_s())}" + (f" / {clock(length)}" if length else "")
        # What changes first: on a narrow terminal the end of the line is cut.
        return f"replay · {state} · {where} · {count} recordings, {ALIGNMENT_NOTE}"

    def _show_title(self) -> None:
        text = Content(clean(self.title_text()))
        for title in self.query("#devices-title").results(Static):
            if not isinstance(title.content, Content) or title.content.plain != text.plain:
                title.update(text)

    @property
    def settled(self) -> bool:
        """Every device's model is on screen, charted and analysed (what tests wait for)."""
        for index, slot in enumerate(self.slots):
            if slot.device.session is None:
                continue
            stamp = self._stamp(index)
            if (
                slot.shown_at != stamp
                or slot.charts_at != stamp
                or slot.analysed_at != stamp
                or slot.analysis_running
                or slot.analysis_wanted
                or slot.analysis_timer is not None
                or slot.chart_timer is not None
            ):
                return False
        return True

    # --- keys -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in REPLAY_ACTIONS:
            return self.replay is not None
        if action == "open_device" and parameters:
            # Only the digits of devices there are.
            return isinstance(parameters[0], int) and parameters[0] < len(self.slots)
        return True

    def _replay_changed(self, message: str = "") -> None:
        self._show_title()
        if message:
            self.notify(message, timeout=2)

    def action_toggle_pause(self) -> None:
        if self.replay is not None:
            self.replay.toggle_pause()
            self._replay_changed()

    def action_faster(self) -> None:
        if self.replay is not None:
            self._replay_changed(f"speed {speed_name(self.replay.faster())}")

    def action_slower(self) -> None:
        if self.replay is not None:
            self._replay_changed(f"speed {speed_name(self.replay.slower())}")

    def action_max_speed(self) -> None:
        if self.replay is not None:
            self._replay_changed(f"speed {speed_name(self.replay.toggle_max_speed())}")

    def action_seek(self, delta_s: float) -> None:
        if self.replay is not None:
            self.replay.seek_by(delta_s)
            self._replay_changed()

    def action_seek_start(self) -> None:
        if self.replay is not None:
            self.replay.seek_offset(0.0)
            self._replay_changed()

    def recording_of(self, index: int) -> Path | None:
        """The file behind a device's column: the one it replays or the one it writes."""
        session = self.slots[index].device.session
        if session is None:
            return None
        if isinstance(session.source, ReplaySource):
            return session.source.recording.path
        return session.recorder.path if session.recorder is not None else None

    def _focused_device(self) -> int | None:
        focused = self.focused
        if isinstance(focused, DeviceColumn) and focused.id is not None:
            return int(focused.id.removeprefix("device-"))
        return None

    async def action_open_device(self, index: int | None = None) -> None:
        """Open one device's full dashboard (the focused column's, or device ``index + 1``)."""
        if index is None:
            index = self._focused_device()
        if index is None:
            self.notify("move to a device's column first (tab), or press its number")
            return
        slot = self.slots[index]
        recording = self.recording_of(index)
        if recording is None:
            self.notify(f"{slot.device.name}: no recording to open", severity="warning")
            return
        command = dashboard_command(recording, live=self.replay is None)
        # The combined replay waits where it is while one of its recordings is looked at.
        paused_here = self.replay is not None and not self.replay.paused
        if paused_here:
            self.action_toggle_pause()
        try:
            await self.hand_over(command)
        except OSError as exc:
            problem = f"could not start {shlex.join(command)}: {exc}"
            self.notify(problem, severity="error", timeout=30)
        except SuspendNotSupported:
            self.notify(
                f"this terminal cannot be handed over; in another one, run: {shlex.join(command)}",
                title=f"{slot.device.name}: full dashboard",
                timeout=30,
            )
        if paused_here:
            self.action_toggle_pause()

    async def hand_over(self, command: Sequence[str]) -> None:
        """Give the terminal to ``command`` until it exits. Drawing waits (a batch), the
        sessions do not: their workers go on in this event loop while it runs."""
        # While the terminal is not in raw mode (before the other program takes the keys,
        # or after it lets go) a ctrl+c reaches this process too: it must not end the runs.
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            with self.batch_update(), self.suspend():
                process = await asyncio.create_subprocess_exec(*command)
                await process.wait()
        finally:
            signal.signal(signal.SIGINT, interrupt)
        self.refresh(layout=True)

    def _running_devices(self) -> list[_Slot]:
        """Devices whose run is still going on the device (a live run that has not ended)."""
        return [
            slot
            for slot in self.slots
            if self.replay is None
            and slot.device.session is not None
            and not slot.finished
            and hasattr(slot.device.session.source, "stop_run")
        ]

    async def action_quit(self) -> None:
        running = self._running_devices()
        if not running:
            self.exit(0)
            return
        names = [slot.device.name for slot in running]
        text = devices_quit_text(names, self.run_outlives_qtop)
        screen = QuitScreen("", "", can_leave=self.run_outlives_qtop, text=text)
        self.push_screen(screen, self._quit_choice)

    def _quit_choice(self, choice: QuitChoice | None) -> None:
        if choice == "stop":
            self.notify("stopping the runs on the devices, then quitting")
            self.end_runs_and_quit(stop=True)
        elif choice == "leave" and self.run_outlives_qtop:
            self.end_runs_and_quit(stop=False)

    @work(exclusive=True, group="stop", exit_on_error=False)
    async def end_runs_and_quit(self, stop: bool) -> None:
        """Stop (or detach from) every running device, let their last events in, then quit."""
        running = self._running_devices()

        async def end(slot: _Slot) -> None:
            assert slot.device.session is not None
            source = slot.device.session.source
            try:
                if stop:
                    await source.stop_run()  # type: ignore[attr-defined]
                elif hasattr(source, "detach"):
                    await source.detach()
            except QtopError as exc:
                self.notify(str(exc), title=f"{slot.device.name}: the run was not stopped",
                            severity="error", timeout=30)  # fmt: skip
                return
            # Past the wait the recording is closed by whoever opened the view: never hang.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(slot.done.wait(), SESSION_END_WAIT_S)

        await asyncio.gather(*(end(slot) for slot in running))
        self.exit(0)
