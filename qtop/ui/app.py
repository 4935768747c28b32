"""QtopApp: composes the panes, runs the session, routes keys to whoever handles them.

One async worker runs ``Session.run``: the only consumer of the source, which
folds every event into the model (and the recording). The panes never see
events; a timer (about 12 Hz) redraws them from the model when something
changed, and a slower one (2 Hz) recomputes the analysis figures. So a burst
of events costs one redraw, and a replay at full speed cannot flood the screen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer

from qtop.errors import QtopError
from qtop.events import Event, Marker
from qtop.record.reader import Mark
from qtop.session import Session
from qtop.ui import actions as needs
from qtop.ui.actions import ACTIONS, ActionSpec
from qtop.ui.derive import LiveAnalysis, analyze_live
from qtop.ui.format import offset
from qtop.ui.onsets import onset_marks
from qtop.ui.panes.base import Pane
from qtop.ui.panes.decay import DecayPane
from qtop.ui.panes.header import HeaderPane
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.panes.log import LogPane
from qtop.ui.panes.ops import OpsPane
from qtop.ui.panes.power import PowerPane
from qtop.ui.panes.replay_bar import ReplayBar
from qtop.ui.panes.thermal import ThermalPane
from qtop.ui.playback import Playback
from qtop.ui.screens.confirm import ConfirmScreen
from qtop.ui.screens.help import HelpScreen
from qtop.ui.screens.marker import MarkerScreen
from qtop.ui.screens.quit import QuitChoice, QuitScreen
from qtop.ui.stream_log import StreamLog
from qtop.ui.view import View

REFRESH_HZ = 12.0
ANALYSIS_HZ = 2.0
SEEK_STEP_S = 5.0


def _binding(spec: ActionSpec) -> Binding:
    return Binding(
        spec.keys,
        spec.action,
        spec.label,
        show=spec.footer,
        priority=spec.priority,
        key_display=spec.key_display,
        tooltip=spec.help,
    )


class SessionFinished(Message):
    """The session's worker returned: the source ended, or failed with ``error``."""

    def __init__(self, error: QtopError | None) -> None:
        super().__init__()
        self.error = error


class OnsetsFound(Message):
    """The whole recording was analysed in the background: its throttling onsets."""

    def __init__(self, marks: list[Mark]) -> None:
        super().__init__()
        self.marks = marks


class QtopApp(App[int]):
    """The dashboard, live or replayed: the same panes fed by the same session model."""

    CSS_PATH = "qtop.tcss"
    TITLE = "qtop"
    BINDINGS: ClassVar[list[BindingType]] = [_binding(spec) for spec in ACTIONS]

    def __init__(
        self,
        session: Session,
        *,
        refresh_hz: float = REFRESH_HZ,
        analysis_hz: float = ANALYSIS_HZ,
        analyze_recording: bool = True,
    ) -> None:
        super().__init__()
        self.session = session
        self.playback = Playback(session)
        self.stream = StreamLog()
        self.analysis: LiveAnalysis | None = None
        self.session_error: QtopError | None = None
        self.session_finished = False
        self.pinned_variant: str | None = None
        self._refresh_period = 1.0 / refresh_hz
        self._analysis_period = 1.0 / analysis_hz
        self._analyze_recording = analyze_recording
        self._panes: list[Pane] = []
        self._changed = True
        self._drawn_at: tuple[object, ...] | None = None
        self._analysed_at: tuple[object, ...] | None = None
        self.refreshes = 0
        self.onsets_searched = False

    # --- layout --------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderPane(id="header")
        with Grid(id="panes"):
            yield LatencyPane(id="latency")
            yield ThermalPane(id="thermal")
            yield DecayPane(id="decay")
            yield PowerPane(id="power")
            yield OpsPane(id="ops")
            yield LogPane(id="log")
        if self.playback.is_replay:
            yield ReplayBar(id="replay-bar")
        yield Footer()

    @property
    def panes(self) -> list[Pane]:
        return list(self._panes)

    def on_mount(self) -> None:
        self._panes = list(self.query(Pane))
        self.title = f"qtop · {self.session.source.description}"
        self.run_session()
        self.set_interval(self._refresh_period, self.refresh_panes)
        self.set_interval(self._analysis_period, self.refresh_analysis)
        replay = self.playback.replay
        if replay is not None:
            # Indexing reads the whole file once, which is how a torn tail or bad lines show up.
            replay.recording.index()
            for warning in replay.recording.warnings():
                self.notify(warning, title="recording", severity="warning", timeout=20)
            if self._analyze_recording:
                self.find_onsets()
        self.refresh_panes(force=True)

    # --- the session ----------------------------------------------------------

    @work(exclusive=True, group="session", exit_on_error=True)
    async def run_session(self) -> None:
        error: QtopError | None = None
        try:
            await self.session.run(self._observe)
        except QtopError as exc:
            error = exc
        self.post_message(SessionFinished(error))

    def _observe(self, batch: Sequence[Event]) -> None:
        self.stream.observe(batch)
        self._changed = True

    def on_session_finished(self, message: SessionFinished) -> None:
        self.session_finished = True
        self.session_error = message.error
        self._changed = True
        if message.error is not None:
            self.notify(str(message.error), title="session stopped", severity="error", timeout=30)
        else:
            self.notify("the session ended", title="session")

    @work(exclusive=True, group="onsets", exit_on_error=False)
    async def find_onsets(self) -> None:
        """Analyse the whole recording once, in another process, so its onsets can be seeked to."""
        replay = self.playback.replay
        if replay is None:
            return
        marks, problem = await onset_marks(replay.recording.path)
        if problem:
            self.notify(f"could not look for the throttling onset: {problem}", severity="warning")
        self.post_message(OnsetsFound(marks))

    def on_onsets_found(self, message: OnsetsFound) -> None:
        self.playback.onsets = message.marks
        self.onsets_searched = True
        self._changed = True

    async def on_unmount(self) -> None:
        await self.session.source.close()

    # --- refreshing ------------------------------------------------------------

    @property
    def variant(self) -> str:
        """The variant on show: the pinned one, else the one running."""
        if self.pinned_variant is not None:
            return self.pinned_variant
        model = self.session.model
        if model.phase.variant or not model.variants:
            return model.phase.variant
        return model.variants[-1]

    def view(self) -> View:
        recorder = self.session.recorder
        error = self.session.recording_error
        return View(
            model=self.session.model,
            variant=self.variant,
            variant_pinned=self.pinned_variant is not None,
            analysis=self.analysis,
            playback=self.playback,
            stream=self.stream,
            recording=recorder.path if recorder is not None else None,
            recording_paused=self.session.recording_paused,
            recording_error=error.problem if error is not None else None,
            session_error=self.session_error.problem if self.session_error else None,
        )

    def _stamp(self) -> tuple[object, ...]:
        """Changes whenever the model does (an event applied, a keyframe restored)."""
        model = self.session.model
        return (model.event_count, model.t_last, self.stream.keyframes, len(model.markers))

    def refresh_panes(self, force: bool = False) -> None:
        """Redraw from the model; the header and replay bar always (their clocks move)."""
        try:
            self._refresh_panes(force)
        except NoMatches:
            # Panes never remove their own children: a pane without them is being taken
            # down with the app, and a timer tick that runs into that has nothing to draw.
            return

    def _refresh_panes(self, force: bool) -> None:
        view = self.view()
        for pane in self._panes:
            if isinstance(pane, HeaderPane | ReplayBar):
                pane.update_view(view)
        stamp = self._stamp()
        changed = self._changed or stamp != self._drawn_at
        if self.playback.display_paused and not force:
            return
        if not (changed or force):
            for pane in self._panes:
                if pane.stale:
                    pane.update_view(view)
            return
        self._changed = False
        self._drawn_at = stamp
        self.refreshes += 1
        for pane in self._panes:
            if not isinstance(pane, HeaderPane | ReplayBar):
                if force:
                    pane.expire()
                pane.update_view(view)

    def refresh_analysis(self, force: bool = False) -> None:
        stamp = (*self._stamp(), self.variant)
        if (stamp == self._analysed_at and not force) or self.playback.display_paused:
            return
        self._analysed_at = stamp
        self.analysis = analyze_live(self.session.model, self.variant)
        live_onset = self.analysis.thermal.onset_t if self.analysis.thermal else None
        if not self.playback.is_replay and live_onset is not None:
            self.playback.onsets = [Mark(live_onset, "onset", "throttling onset", -1)]
        self._changed = True

    # --- which actions apply -----------------------------------------------------

    def can(self, spec: ActionSpec) -> bool:
        return {
            needs.ALWAYS: True,
            needs.REPLAY: self.playback.is_replay,
            needs.LIVE: not self.playback.is_replay,
            needs.RECORDER: self.playback.can_record,
            needs.STOPPABLE: self.playback.can_stop_run,
        }[spec.needs]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        spec = next((s for s in ACTIONS if s.action.partition("(")[0] == action), None)
        if spec is None or self.can(spec):
            return True
        return None if spec.needs in (needs.RECORDER, needs.STOPPABLE) else False

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for spec in ACTIONS:
            if self.can(spec):
                yield SystemCommand(
                    f"{spec.label} [{spec.key_display or spec.keys.split(',')[0]}]",
                    spec.help,
                    lambda action=spec.action: self.run_action(action),
                )

    # --- actions -------------------------------------------------------------------

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.can))

    def action_toggle_pause(self) -> None:
        paused = self.playback.toggle_pause()
        self._changed = True
        self.refresh_panes(force=True)
        if not self.playback.is_replay:
            self.notify("display paused; still recording" if paused else "display resumed")

    def action_add_marker(self) -> None:
        model = self.session.model
        where = (
            offset(model.t_last - model.t_first) if model.t_last and model.t_first else "the start"
        )
        self.push_screen(MarkerScreen(where), self._add_marker)

    def _add_marker(self, note: str | None) -> None:
        if note is None:
            return
        model = self.session.model
        self.session.consume(Marker(t=model.t_last, host_t=time.time(), label="note", note=note))
        self._changed = True
        saved = " (replay: not written to the file)" if self.playback.is_replay else ""
        self.notify(f"marker added{saved}: {note or '(no note)'}")

    def action_toggle_recording(self) -> None:
        self.session.recording_paused = not self.session.recording_paused
        self._changed = True
        self.notify("recording paused" if self.session.recording_paused else "recording resumed")

    async def action_quit(self) -> None:
        """Quit; while a device run is still going, ask whether to stop it first."""
        source = self.session.source
        if hasattr(source, "stop_run") and not self.session_finished:
            state = getattr(source, "state", None)
            self.push_screen(QuitScreen(getattr(state, "run_id", "") or ""), self._quit_choice)
            return
        self.exit()

    def _quit_choice(self, choice: QuitChoice | None) -> None:
        if choice == "stop":
            self.notify("stopping the run on the device, then quitting")
            self.end_run_and_quit(stop=True)
        elif choice == "leave":
            self.end_run_and_quit(stop=False)

    @work(exclusive=True, group="stop", exit_on_error=False)
    async def end_run_and_quit(self, stop: bool) -> None:
        """Stop the device run (or detach from it), let its last events in, then quit."""
        source = self.session.source
        try:
            if stop:
                await source.stop_run()  # type: ignore[attr-defined]
            elif hasattr(source, "detach"):
                await source.detach()
        except QtopError as exc:
            self.notify(str(exc), title="the run was not stopped", severity="error", timeout=30)
            return
        for _ in range(100):
            if self.session_finished:
                break
            await asyncio.sleep(0.05)
        self.exit()

    def action_stop_run(self) -> None:
        self.push_screen(
            ConfirmScreen(
                "Stop the run on the device?", "The iterations measured so far are kept."
            ),
            self._stop_run,
        )

    def _stop_run(self, confirmed: bool | None) -> None:
        if confirmed:
            self.notify("stopping the run on the device")
            self.stop_device_run()

    @work(exclusive=True, group="stop", exit_on_error=False)
    async def stop_device_run(self) -> None:
        stop = getattr(self.session.source, "stop_run", None)
        if stop is None:
            return
        try:
            await stop()
        except QtopError as exc:
            self.notify(str(exc), title="the run was not stopped", severity="error", timeout=30)

    def action_next_variant(self) -> None:
        variants = self.session.model.variants
        if not variants:
            self.notify("this session has no variants")
            return
        options: list[str | None] = [None, *variants]
        current = options.index(self.pinned_variant) if self.pinned_variant in options else 0
        self.pinned_variant = options[(current + 1) % len(options)]
        self._analysed_at = None
        self.refresh_analysis(force=True)
        self.refresh_panes(force=True)
        shown = self.pinned_variant if self.pinned_variant is not None else "the running variant"
        self.notify(f"showing {shown or '(unnamed)'}")

    def _replay_action(self, message: str = "") -> None:
        self._changed = True
        self.refresh_panes(force=True)
        if message:
            self.notify(message, timeout=2)

    def action_step(self) -> None:
        self._replay_action(self.playback.step())

    def action_faster(self) -> None:
        self._replay_action(self.playback.faster())

    def action_slower(self) -> None:
        self._replay_action(self.playback.slower())

    def action_max_speed(self) -> None:
        self._replay_action(self.playback.toggle_max_speed())

    def action_seek(self, delta_s: float) -> None:
        self._replay_action(self.playback.seek_by(delta_s))

    def action_seek_start(self) -> None:
        self._replay_action(self.playback.seek_to_edge(end=False))

    def action_seek_end(self) -> None:
        self._replay_action(self.playback.seek_to_edge(end=True))

    def action_next_mark(self) -> None:
        landing = self.playback.next_mark()
        self._replay_action(landing.describe() if landing else "no later mark")

    def action_previous_mark(self) -> None:
        landing = self.playback.previous_mark()
        self._replay_action(landing.describe() if landing else "no earlier mark")

    def action_focus_pane(self, pane_id: str) -> None:
        pane = self.query_one(f"#{pane_id}", Pane)
        if self.screen.maximized is not None and self.screen.maximized is not pane:
            self.screen.minimize()
        focusable = [w for w in pane.query("*") if w.focusable]
        (focusable[0] if focusable else pane).focus()

    def action_zoom(self) -> None:
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        focused = screen.focused
        if focused is None:
            self.notify("focus a pane first (1-6, or click it)")
            return
        screen.maximize(focused)

    def action_ops_toggle_aggregate(self) -> None:
        ops = self.query_one(OpsPane)
        self.notify(f"ops: {ops.toggle_aggregate()}", timeout=2)
        ops.update_view(self.view())

    def action_ops_execute(self, delta: int) -> None:
        ops = self.query_one(OpsPane)
        ops.step_execute(delta)
        ops.update_view(self.view())

    def action_ops_sort(self) -> None:
        ops = self.query_one(OpsPane)
        self.notify(f"ops sorted by {ops.next_sort()}", timeout=2)
        ops.update_view(self.view())

    def action_ops_graph(self) -> None:
        ops = self.query_one(OpsPane)
        ops.next_graph()
        ops.update_view(self.view())

    def action_log_follow(self) -> None:
        following = self.query_one(LogPane).toggle_follow()
        self.notify("log: following" if following else "log: not following", timeout=2)


def open_ui(session: Session) -> int:
    """Run the dashboard on ``session`` until the user quits; re-raise what stopped the source.

    The exit code is 0; a ``QtopError`` from the source (a lost device, a
    recording that changed under a follow) is raised again after the screen
    is restored, so the command line prints it the usual way.
    """
    app = QtopApp(session)
    app.run()
    if app.session_error is not None:
        raise app.session_error
    return app.return_code or 0


async def run_ui(session: Session) -> int:
    """``open_ui`` for a caller already inside an event loop (``qtop run``, ``qtop demo``)."""
    app = QtopApp(session)
    await app.run_async()
    if app.session_error is not None:
        raise app.session_error
    return app.return_code or 0
