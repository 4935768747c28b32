"""Dashboard: composes the panes, runs the session, and keeps the display in step with it.

Workers post messages and the app's handlers own the state they change:

- One async worker runs ``Session.run``, the only reader of the source. The
  session hands over what arrived at most ``display_hz`` times a second, and
  each hand-over posts a ``ModelChanged``; a burst the display cannot keep up
  with merges into one in the queue.
- On ``ModelChanged`` every pane gets a new ``View`` (its reactive input) and
  redraws from it, and the analysis is asked for.
- The analysis (validity, onset, decay fit, energy) runs in a thread worker
  over a copy of the model's series, at most once every ``analysis_period_s``,
  and posts ``AnalysisReady``.
- A replay's whole file is analysed once in another process (the throttling
  onsets to seek to), which posts ``OnsetsFound``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from typing import cast

from textual import events, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Grid
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static, Tab, Tabs
from textual.worker import get_current_worker

from qtop.analysis.live import LiveAnalysis, LiveInputs, analyze_live, capture
from qtop.analysis.onsets import onset_marks
from qtop.errors import QtopError
from qtop.events import Event, Marker
from qtop.record.reader import Mark
from qtop.record.sidecar import read_markers
from qtop.session import Session
from qtop.textsafe import clean
from qtop.ui import actions as needs
from qtop.ui.actions import ACTIONS, ActionSpec
from qtop.ui.messages import AnalysisReady, ModelChanged, OnsetsFound, SessionFinished
from qtop.ui.panes.base import Pane
from qtop.ui.panes.decay import DecayPane
from qtop.ui.panes.header import HeaderPane
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.panes.log import LogPane
from qtop.ui.panes.ops import OpsPane
from qtop.ui.panes.power import PowerPane
from qtop.ui.panes.replay_bar import ReplayBar
from qtop.ui.panes.thermal import ThermalPane
from qtop.ui.plain_app import PlainApp
from qtop.ui.playback import Playback, marker_mark
from qtop.ui.screens.help import PaneKeys
from qtop.ui.stream_log import StreamLog
from qtop.ui.view import View

DISPLAY_HZ = 3.0
# Charts (and the zone table's sparklines) cost most to draw and move least: once a second.
CHART_PERIOD_S = 1.0
ANALYSIS_PERIOD_S = 1.0
# Below MIN_* nothing fits; below GRID_* the panes stack two at a time (latency and a
# chosen one, the others behind tabs); from GRID_* on, all six are on screen.
MIN_WIDTH, MIN_HEIGHT = 80, 24
GRID_WIDTH, GRID_HEIGHT = 100, 30
STACKED = ("thermal", "decay", "power", "ops", "log")
# Panes with keys of their own, which act while the pane has the focus (its number key).
PANE_KEYS: tuple[tuple[str, str, type[Pane]], ...] = (
    ("Ops pane", "5", OpsPane),
    ("Device log", "6", LogPane),
)


def too_small_text(width: int, height: int) -> str:
    return (
        f"qtop needs a terminal of at least {MIN_WIDTH}×{MIN_HEIGHT}; this one is "
        f"{width}×{height}.\nMake it larger (the session goes on meanwhile), or press q to quit."
    )


class Dashboard(PlainApp[int]):
    """The dashboard, live or replayed: the same panes fed by the same session model.

    What the keys do is ``QtopApp`` (``qtop.ui.app``); this is the display and the
    work behind it.
    """

    CSS_PATH = "qtop.tcss"
    TITLE = "qtop"
    # Textual declares the breakpoints per instance, so they are not ClassVars here.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [  # noqa: RUF012
        (0, "-too-narrow"), (MIN_WIDTH, "-narrow"), (GRID_WIDTH, "-wide"),
    ]  # fmt: skip
    VERTICAL_BREAKPOINTS: list[tuple[int, str]] | None = [  # noqa: RUF012
        (0, "-too-short"), (MIN_HEIGHT, "-short"), (GRID_HEIGHT, "-tall"),
    ]  # fmt: skip

    def __init__(
        self,
        session: Session,
        *,
        display_hz: float = DISPLAY_HZ,
        chart_period_s: float = CHART_PERIOD_S,
        analysis_period_s: float = ANALYSIS_PERIOD_S,
        analyze_recording: bool = True,
        run_outlives_qtop: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.session = session
        self.playback = Playback(session, run_outlives_qtop=run_outlives_qtop)
        self.stream = StreamLog(clock)
        self.analysis: LiveAnalysis | None = None
        self.session_error: QtopError | None = None
        self.session_finished = False
        self.pinned_variant: str | None = None
        self.generation = 0
        self.onsets_searched = False
        self._clock = clock
        self._display_period = 1.0 / display_hz
        self._chart_period = chart_period_s
        self._charts_drawn = -chart_period_s
        self._chart_timer: object | None = None
        self._show_timer: object | None = None
        self._charts_at: tuple[object, ...] | None = None
        self._analysis_period = analysis_period_s
        self._analyze_recording = analyze_recording
        self._analysis_wanted = False
        self._analysis_request = 0
        self._analysis_running = False
        self._analysis_started = -analysis_period_s
        self._analysis_timer: object | None = None
        self._onsets_marked: set[str] = set()
        self._session_done: asyncio.Event | None = None
        self._panes: list[Pane] = []
        self._shown_at: tuple[object, ...] | None = None
        self._analysed_at: tuple[object, ...] | None = None

    # --- layout --------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderPane(self.stream.silent_for, id="header")
        yield Tabs(
            *(Tab(f"{number} {name}", id=f"tab-{name}") for number, name in
              enumerate(STACKED, start=2)),
            id="pane-tabs",
        )  # fmt: skip
        with Grid(id="panes"):
            yield LatencyPane(id="latency")
            yield ThermalPane(id="thermal")
            yield DecayPane(id="decay", classes="-behind")
            yield PowerPane(id="power", classes="-behind")
            yield OpsPane(id="ops", classes="-behind")
            yield LogPane(id="log", classes="-behind")
        if self.playback.is_replay:
            yield ReplayBar(id="replay-bar")
        yield Static(id="too-small")
        yield Footer()

    @property
    def panes(self) -> list[Pane]:
        return list(self._panes)

    def on_mount(self) -> None:
        self._panes = list(self.query(Pane))
        self._session_done = asyncio.Event()
        self.title = clean(f"qtop · {self.session.source.description}")
        self.run_session()
        replay = self.playback.replay
        if replay is not None:
            # Indexing reads the whole file once, which is how a torn tail or bad lines show up.
            replay.recording.index()
            for warning in replay.recording.warnings():
                self.notify(warning, title="recording", severity="warning", timeout=20)
            saved = read_markers(replay.recording.path, replay.recording.header.session_id)
            self.playback.saved = [marker_mark(marker) for marker in saved.markers]
            for problem in saved.problems:
                self.notify(problem, title="saved markers", severity="warning", timeout=20)
            if self._analyze_recording:
                self.find_onsets()
        self._show(charts=True)

    def on_resize(self, event: events.Resize) -> None:
        for notice in self.query("#too-small").results(Static):
            notice.update(Content(too_small_text(*event.size)))

    # --- the session ----------------------------------------------------------

    @work(exclusive=True, group="session", exit_on_error=True)
    async def run_session(self) -> None:
        error: QtopError | None = None
        try:
            await self.session.run(self._observe, batch_window_s=self._display_period)
        except QtopError as exc:
            error = exc
        finally:
            if self._session_done is not None:
                self._session_done.set()
        self.post_message(SessionFinished(error))

    def _observe(self, batch: Sequence[Event]) -> None:
        self.stream.observe(batch)
        self.post_message(ModelChanged())

    def on_model_changed(self, _message: ModelChanged) -> None:
        self.generation += 1
        self._request_analysis()
        self._show()

    def on_session_finished(self, message: SessionFinished) -> None:
        self.session_finished = True
        self.session_error = message.error
        self._request_analysis(now=True)
        self._show(charts=True)
        if message.error is not None:
            self.notify(str(message.error), title="session stopped", severity="error", timeout=30)
        else:
            self.notify("the session ended", title="session")

    @work(exclusive=True, group="onsets", exit_on_error=False)
    async def find_onsets(self) -> None:
        """Analyse the whole recording once, in another process, so its onsets can be seeked to."""
        replay = self.playback.replay
        if replay is not None:
            marks, problem = await onset_marks(replay.recording.path)
            self.post_message(OnsetsFound(marks, problem))

    def on_onsets_found(self, message: OnsetsFound) -> None:
        self.playback.onsets = message.marks
        self.onsets_searched = True
        if message.problem:
            self.notify(f"could not look for the throttling onset: {message.problem}",
                        severity="warning")  # fmt: skip
        self._show(charts=True)

    async def on_unmount(self) -> None:
        await self.session.source.close()

    # --- the analysis ----------------------------------------------------------

    def _request_analysis(self, now: bool = False) -> None:
        """Analyse the model as it is now, or once the analysis period since the last has passed."""
        self._analysis_wanted = True
        if now and self._analysis_timer is not None:
            self._analysis_timer.stop()  # type: ignore[attr-defined]
            self._analysis_timer = None
        if self._analysis_running or self._analysis_timer is not None:
            return
        wait = self._analysis_started + self._analysis_period - self._clock()
        if wait > 0 and not now:
            self._analysis_timer = self.set_timer(wait, self._start_analysis)
        else:
            self._start_analysis()

    def _start_analysis(self) -> None:
        self._analysis_timer = None
        if not self._analysis_wanted:
            return
        self._analysis_wanted = False
        self._analysis_running = True
        self._analysis_started = self._clock()
        self._analysis_request += 1
        self._analysed_at = self._stamp()
        inputs, request = capture(self.session.model, self.variant), self._analysis_request
        # A thread worker: the analysis is pure Python over a copy, and the display goes on.
        self.run_worker(
            lambda: self._analyze(inputs, request),
            name="analysis",
            group="analysis",
            description=f"analysis of {inputs.variant or 'the run'} (request {request})",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _analyze(self, inputs: LiveInputs, request: int) -> None:
        """The analysis of a captured copy of the model (in the worker's thread)."""
        try:
            analysis, problem = analyze_live(inputs), ""
        except Exception as exc:
            # A live run must stay supervised even if one analysis trips over its data.
            analysis, problem = None, f"{type(exc).__name__}: {exc}"
        if not get_current_worker().is_cancelled:
            self.post_message(AnalysisReady(analysis, request, problem))

    def on_analysis_ready(self, message: AnalysisReady) -> None:
        if message.request != self._analysis_request:
            return
        self._analysis_running = False
        if message.analysis is None:
            self.notify(f"the analysis failed: {message.problem}", severity="error", timeout=10)
        else:
            self.analysis = message.analysis
            self._note_live_onset(message.analysis)
            self._show_soon()
        if self._analysis_wanted:
            self._request_analysis()

    def _note_live_onset(self, analysis: LiveAnalysis) -> None:
        """A live throttling onset becomes a seekable mark, and an ``auto`` marker once."""
        thermal = analysis.thermal
        if self.playback.is_replay or thermal is None or thermal.onset_t is None:
            return
        label = f"throttling onset {analysis.variant}".strip()
        others = [m for m in self.playback.onsets if m.label != label]
        self.playback.onsets = [*others, Mark(thermal.onset_t, "onset", label, -1)]
        if analysis.variant in self._onsets_marked:
            return
        self._onsets_marked.add(analysis.variant)
        at = (
            f" at {thermal.temperature_at_onset_c:.1f} C"
            if thermal.temperature_at_onset_c is not None
            else ""
        )
        note = (
            f"{label}: rolling P50 above {thermal.theta:.0%} over the baseline for "
            f"{thermal.hold_s:g} s{at} (seen live)"
        )
        marker = Marker(
            t=thermal.onset_t,
            host_t=time.time(),
            label="throttling onset",
            note=note,
            origin="auto",
        )
        self.session.consume(marker)
        # The app changed the model itself: the same path as a batch from the session.
        self.post_message(ModelChanged())

    # --- the display ------------------------------------------------------------

    @property
    def variant(self) -> str:
        """The variant on show: the pinned one, else the one running."""
        if self.pinned_variant is not None:
            return self.pinned_variant
        model = self.session.model
        if model.phase.variant or not model.variants:
            return model.phase.variant
        return model.variants[-1]

    def view(self, charts: bool = True) -> View:
        recorder = self.session.recorder
        error = self.session.recording_error
        variant = self.variant
        analysis = self.analysis if self.analysis and self.analysis.variant == variant else None
        return View(
            model=self.session.model,
            generation=self.generation,
            charts=charts,
            restarts=self.stream.keyframes,
            variant=variant,
            variant_pinned=self.pinned_variant is not None,
            analysis=analysis,
            playback=self.playback,
            recording=recorder.path if recorder is not None else None,
            recording_paused=self.session.recording_paused,
            recording_error=error.problem if error is not None else None,
            session_error=self.session_error.problem if self.session_error else None,
        )

    def _show(self, charts: bool | None = None) -> None:
        """Give every pane the current view; a paused live display keeps its data panes.

        Figures follow every change; the charts follow at most once a chart period
        (``charts=None``: when due, and a timer catches the last change), or now
        when a person asked for something (``charts=True``).
        """
        if self._show_timer is not None:
            self._show_timer.stop()  # type: ignore[attr-defined]
            self._show_timer = None
        if charts is None:
            charts = self._charts_due()
        if charts and self._chart_timer is not None:
            self._chart_timer.stop()  # type: ignore[attr-defined]
            self._chart_timer = None
        view = self.view(charts)
        frozen = self.playback.display_paused
        for pane in self._panes:
            if not frozen or isinstance(pane, HeaderPane | ReplayBar):
                pane.view = view
        if not frozen:
            self._shown_at = self._stamp()
            if charts:
                self._charts_drawn = self._clock()
                self._charts_at = self._shown_at

    def _show_soon(self) -> None:
        """Show soon: with the next change while the stream flows, else on a timer."""
        if self._show_timer is None:
            # A little over a display period, so a flowing stream's next batch comes first.
            delay = self._display_period * 1.5
            self._show_timer = self.set_timer(delay, lambda: self._show())

    def _charts_due(self) -> bool:
        wait = self._charts_drawn + self._chart_period - self._clock()
        if wait <= 0:
            return True
        # While the stream flows, the first refresh after the period draws the charts; the
        # timer (a display period later) only catches a stream that has gone quiet.
        if self._chart_timer is None:
            delay = wait + self._display_period
            self._chart_timer = self.set_timer(delay, lambda: self._show(charts=True))
        return False

    def _stamp(self) -> tuple[object, ...]:
        model = self.session.model
        return (model.event_count, model.t_last, self.stream.keyframes, self.variant)

    @property
    def settled(self) -> bool:
        """Everything the model holds is on screen and analysed (what tests wait for)."""
        stamp = self._stamp()
        return (
            self._shown_at == stamp
            and self._charts_at == stamp
            and self._analysed_at == stamp
            and self._chart_timer is None
            and self._show_timer is None
            and not self._analysis_running
            and not self._analysis_wanted
            and self._analysis_timer is None
        )

    def _choose_pane(self, pane_id: str) -> None:
        """The pane shown under the latency when the terminal is too small for all six."""
        if pane_id not in STACKED:
            return
        for name in STACKED:
            self.query_one(f"#{name}", Pane).set_class(name != pane_id, "-behind")
        tabs = self.query_one(Tabs)
        if tabs.active != f"tab-{pane_id}":
            tabs.active = f"tab-{pane_id}"

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab.id is not None:
            self._choose_pane(event.tab.id.removeprefix("tab-"))

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

    def pane_keys(self) -> list[PaneKeys]:
        return [
            (f"{title} (when it has the focus: {key}, or click it)",
             cast(list[Binding], pane.BINDINGS))
            for title, key, pane in PANE_KEYS
        ]  # fmt: skip

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for spec in ACTIONS:
            if self.can(spec):
                yield SystemCommand(
                    f"{spec.label} [{spec.key_display or spec.keys.split(',')[0]}]",
                    spec.help,
                    lambda action=spec.action: self.run_action(action),
                )
        for title, _key, pane_class in PANE_KEYS:
            pane = self.query_one(pane_class)
            for binding in cast(list[Binding], pane_class.BINDINGS):
                yield SystemCommand(
                    f"{title}: {binding.description} [{binding.key_display or binding.key}]",
                    binding.tooltip,
                    lambda pane=pane, action=binding.action: pane.run_action(action),
                )
