"""A copy of the live model for the metrics thread, taken between two events.

The session folds events into its ``SessionModel`` on the asyncio loop;
prometheus_client answers scrapes on threads of its own. Reading the model
from such a thread while the loop mutates it could mix two states (a count
from before an iteration, a percentile from after it), so a scrape asks the
loop for a copy instead: ``ModelTap.capture`` schedules ``copy_model`` with
``call_soon_threadsafe`` and waits for it, with a timeout. The copy runs
between two events, so it is one state of the model, the one the UI would
draw at that moment.

Why on scrape rather than a snapshot the session publishes at the display
rate: nothing is copied while nobody scrapes (Prometheus asks every 15 s or
so; the display refreshes several times a second), the figures are of the
moment the scrape asked rather than up to one refresh old, and the loop pays
only for copying (a fraction of a millisecond at the demo's rates: see
``bench/metrics_cost.py``). The analysis that turns the copy into figures
(percentiles, energy, throttling onset) then runs on the scrape's thread,
off the loop. A loop too busy to answer within the timeout gets a scrape
that says so (``qtop_session_up 0``) instead of a stall of Prometheus's own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import time
from dataclasses import dataclass

from qtop.stats.model import ChannelStats, SessionModel
from qtop.stats.pacing import PacingFold
from qtop.stats.quantiles import RunningStats
from qtop.stats.series import Series

# Below the scrape timeouts Prometheus is usually given (4-10 s), so a stuck loop is
# reported by qtop_session_up 0 rather than by a scrape that timed out.
CAPTURE_TIMEOUT_S = 3.0


def _copy_series(series: Series) -> Series:
    # Points are never changed once made (the series replaces them when it merges),
    # so the copy can share them; view() already includes the point being filled.
    copy = Series(series.capacity)
    copy.points = series.view()
    copy.stride = series.stride
    copy.total = series.total
    return copy


def _copy_stats(stats: RunningStats) -> RunningStats:
    return RunningStats.from_dict(stats.to_dict())


def copy_model(model: SessionModel) -> SessionModel:
    """What the metrics read of ``model``, copied so that later events leave it alone.

    Events (the header, the last iteration, the channel descriptions) and the
    phase are immutable and shared; counters, statistics and series are copied.
    Parts the metrics never read (logs, markers, profiler reports) are left
    empty.
    """
    copy = SessionModel(model.series_capacity)
    copy.header = model.header
    copy.channels = dict(model.channels)
    copy.channel_stats = {
        key: ChannelStats.from_list(stats.to_list()) for key, stats in model.channel_stats.items()
    }
    copy.channel_series = {key: _copy_series(s) for key, s in model.channel_series.items()}
    copy.latency = {key: _copy_stats(stats) for key, stats in model.latency.items()}
    copy.latency_series = {key: _copy_series(s) for key, s in model.latency_series.items()}
    copy.metrics = {key: _copy_stats(stats) for key, stats in model.metrics.items()}
    copy.pacing = {key: PacingFold.from_dict(fold.to_dict()) for key, fold in model.pacing.items()}
    copy.iterations_done = dict(model.iterations_done)
    copy.iterations_failed = dict(model.iterations_failed)
    copy.last_iteration = model.last_iteration
    copy.phase = model.phase
    copy.phase_history.extend(model.phase_history)
    copy.variants = list(model.variants)
    copy.link = dataclasses.replace(model.link, gaps=list(model.link.gaps))
    copy.sample_count = model.sample_count
    copy.last_sample_seq = model.last_sample_seq
    copy.missed_ticks = model.missed_ticks
    copy.t_first = model.t_first
    copy.t_last = model.t_last
    copy.event_count = model.event_count
    copy.end = model.end
    return copy


@dataclass(frozen=True, slots=True)
class Capture:
    """A copy of the model and how long the loop spent making it."""

    model: SessionModel
    copy_s: float


class CaptureFailed(Exception):
    """No copy could be had: the loop is gone, or did not answer in time."""


class ModelTap:
    """Copies of one live model, made on the loop that owns it, for any other thread."""

    def __init__(
        self,
        model: SessionModel,
        loop: asyncio.AbstractEventLoop,
        timeout_s: float = CAPTURE_TIMEOUT_S,
    ) -> None:
        self.model = model
        self.loop = loop
        self.timeout_s = timeout_s

    def copy_on_loop(self) -> Capture:
        """The copy itself; runs on the loop's thread, between two events."""
        started = time.perf_counter()
        copy = copy_model(self.model)
        return Capture(copy, time.perf_counter() - started)

    def capture(self) -> Capture:
        """A copy of the model as it is now; call from any thread but the loop's."""
        future: concurrent.futures.Future[Capture] = concurrent.futures.Future()

        def on_loop() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(self.copy_on_loop())
            except BaseException as exc:
                future.set_exception(exc)

        try:
            self.loop.call_soon_threadsafe(on_loop)
        except RuntimeError as exc:
            raise CaptureFailed(f"the session's event loop is closed ({exc})") from None
        try:
            return future.result(self.timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise CaptureFailed(
                f"the session's event loop did not answer within {self.timeout_s:g} s"
            ) from None
