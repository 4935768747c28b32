"""QtopApp: the dashboard and what its keys do.

The keys, the ``?`` help and the command palette come from one table
(``qtop.ui.actions``); the panes' own keys are in their ``BINDINGS``. Every action
asks the session's source through ``Playback`` and lets the display follow by
posting or showing, never by drawing itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.widgets import Tabs

from qtop.errors import QtopError
from qtop.events import Marker
from qtop.record.sidecar import save_marker
from qtop.session import Session
from qtop.ui.actions import ACTIONS, ActionSpec
from qtop.ui.dashboard import PANE_KEYS, STACKED, Dashboard
from qtop.ui.format import offset
from qtop.ui.messages import ModelChanged
from qtop.ui.panes.base import Pane
from qtop.ui.playback import marker_mark
from qtop.ui.screens.confirm import ConfirmScreen
from qtop.ui.screens.help import HelpScreen
from qtop.ui.screens.marker import MarkerScreen
from qtop.ui.screens.quit import QuitChoice, QuitScreen

__all__ = ["PANE_KEYS", "STACKED", "QtopApp", "open_ui", "run_ui"]

# A stopped or detached run ends its stream within seconds; past this, quit anyway.
SESSION_END_WAIT_S = 10.0


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


class QtopApp(Dashboard):
    """The dashboard with its keys: session, replay and view actions."""

    BINDINGS: ClassVar[list[BindingType]] = [_binding(spec) for spec in ACTIONS]

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.can, self.pane_keys()))

    def action_toggle_pause(self) -> None:
        paused = self.playback.toggle_pause()
        self._show(charts=True)
        if not self.playback.is_replay:
            self.notify("display paused; still recording" if paused else "display resumed")

    def action_add_marker(self) -> None:
        model = self.session.model
        if model.t_last is None:
            self.notify("nothing to mark yet: no event with a device time has arrived")
            return
        where = offset(model.t_last - model.t_first) if model.t_first is not None else "the start"
        replay = self.playback.replay
        kept = (
            f"The note is saved next to the recording, in {replay.recording.path.name}.markers."
            if replay is not None
            else "The note is written to the recording with the device time."
        )
        self.push_screen(MarkerScreen(where, kept), self._add_marker)

    def _add_marker(self, note: str | None) -> None:
        if note is None:
            return
        model = self.session.model
        marker = Marker(t=model.t_last, host_t=time.time(), label="note", note=note)
        self.session.consume(marker)
        # The app changed the model itself: the same path as a batch from the session.
        self.post_message(ModelChanged())
        replay = self.playback.replay
        if replay is None:
            self.notify(f"marker added: {note or '(no note)'}")
        else:
            recording = replay.recording
            try:
                path = save_marker(recording.path, recording.header.session_id, marker)
            except QtopError as exc:
                self.notify(str(exc), title="marker not saved", severity="error", timeout=20)
                return
            self.playback.saved.append(marker_mark(marker))
            self.notify(f"marker saved to {Path(path).name}: {note or '(no note)'}")
        self._show(charts=True)

    def action_toggle_recording(self) -> None:
        self.session.recording_paused = not self.session.recording_paused
        self._show(charts=True)
        self.notify("recording paused" if self.session.recording_paused else "recording resumed")

    async def action_quit(self) -> None:
        """Quit; while a device run is still going, ask whether to stop it first."""
        if self.playback.can_stop_run and not self.session_finished:
            header = self.session.model.header
            run_id = str(header.device.get("run_id", "")) if header is not None else ""
            profile = str(header.profile.get("name", "")) if header is not None else ""
            screen = QuitScreen(run_id, profile, can_leave=self.playback.can_leave_run)
            self.push_screen(screen, self._quit_choice)
            return
        self.exit(0)

    def _quit_choice(self, choice: QuitChoice | None) -> None:
        if choice == "stop":
            self.notify("stopping the run on the device, then quitting")
            self.end_run_and_quit(stop=True)
        elif choice == "leave" and self.playback.can_leave_run:
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
        if self._session_done is not None:
            # Past the wait the recording is closed by whoever opened the UI: never hang.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._session_done.wait(), SESSION_END_WAIT_S)
        self.exit(0)

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
        try:
            await self.session.source.stop_run()  # type: ignore[attr-defined]
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
        self._request_analysis(now=True)
        self._show(charts=True)
        shown = self.pinned_variant if self.pinned_variant is not None else "the running variant"
        self.notify(f"showing {shown or '(unnamed)'}")

    def _replay_action(self, message: str = "") -> None:
        self._show(charts=True)
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
        self._choose_pane(pane_id)
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
        if focused is None or isinstance(focused, Tabs):
            self.notify("focus a pane first (1-6, or click it)")
            return
        screen.maximize(focused)


def open_ui(session: Session, *, run_outlives_qtop: bool = True) -> int:
    """Run the dashboard on ``session`` until the user quits; re-raise what stopped the source.

    The exit code is 0; a ``QtopError`` from the source (a lost device, a
    recording that changed under a follow) is raised again after the screen
    is restored, so the command line prints it the usual way.
    """
    app = QtopApp(session, run_outlives_qtop=run_outlives_qtop)
    app.run()
    if app.session_error is not None:
        raise app.session_error
    return app.return_code or 0


async def run_ui(session: Session, *, run_outlives_qtop: bool = True) -> int:
    """``open_ui`` for a caller already inside an event loop (``qtop run``, ``qtop demo``)."""
    app = QtopApp(session, run_outlives_qtop=run_outlives_qtop)
    await app.run_async()
    if app.session_error is not None:
        raise app.session_error
    return app.return_code or 0
