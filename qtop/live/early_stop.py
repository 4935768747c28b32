"""``run.stop: early``: end a variant's measurement once its P90 bound is tight enough.

The host watches each variant's measured latencies as they arrive and, once
MLPerf's early-stopping bound on the P90 (``qtop.analysis.early_stop``) is
within ``run.early_stop_margin`` of the observed P90 and the variant has met
its minimum duration (and ``min_iterations``), asks the device agent to end the
variant (``advance.<variant>`` in the run directory, which the agent checks
between iterations; one more iteration may already have started). The moment
is recorded as an ``early stop`` marker naming the variant and the figures.

The measured time of a variant is the sum of its blocks' spans: consecutive
iterations of one variant belong to one block, so an interleaved run does not
count the other variants' blocks towards it.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtop.analysis.early_stop import EarlyStopWatch, minimums
from qtop.analysis.session import EARLY_STOP_LABEL
from qtop.events import Event, Iteration, Marker
from qtop.profiles import Profile


class EarlyStopper:
    """Per-variant latencies and measured time; says when a variant has measured enough."""

    def __init__(self, profile: Profile) -> None:
        run = profile.run
        self.enabled = run.stop == "early"
        self.margin_pct = run.early_stop_margin_pct
        self.minimum = minimums(profile.to_dict()["run"])
        self._watches: dict[str, EarlyStopWatch] = {}
        self._measured_s: dict[str, float] = {}
        self._last: tuple[str, float] | None = None
        self._stopped: set[str] = set()

    def observe(self, variant: str, events: Sequence[Event], now: float) -> Marker | None:
        """Take in a process's iterations; a marker when ``variant`` should end now."""
        if not self.enabled:
            return None
        for event in events:
            if isinstance(event, Iteration) and event.phase == "measure":
                self._take(event)
        if variant in self._stopped:
            return None
        watch = self._watches.get(variant)
        if watch is None or len(watch.ordered) < self.minimum.queries:
            return None
        measured = self._measured_s.get(variant, 0.0)
        if measured < self.minimum.duration_s:
            return None
        found = watch.estimate()
        if found is None or not found.within(self.margin_pct):
            return None
        self._stopped.add(variant)
        t = self._last[1] if self._last else None
        return Marker(
            t=t,
            host_t=now,
            label=EARLY_STOP_LABEL,
            origin="auto",
            variant=variant,
            note=(
                f"P90 <= {found.bound_s * 1e3:.4g} ms (99%) is within {found.margin:.2%} of the "
                f"observed P90 {found.observed_p90_s * 1e3:.4g} ms (margin "
                f"{self.margin_pct:g}%) after {found.queries} queries and {measured:.1f} s"
            ),
        )

    def _take(self, it: Iteration) -> None:
        name = it.variant
        if it.exit_status == 0:
            self._watches.setdefault(name, EarlyStopWatch()).add(it.latency_s)
        same_block = self._last is not None and self._last[0] == name
        since = self._last[1] if same_block and self._last is not None else it.start
        self._measured_s[name] = self._measured_s.get(name, 0.0) + max(0.0, it.end - since)
        self._last = (name, it.end)
