"""What a device's column draws from, one per refresh."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qtop.analysis.live import LiveAnalysis
from qtop.stats.model import SessionModel


@dataclass(frozen=True, slots=True, eq=False)
class DeviceView:
    """One device as of a display refresh.

    ``model`` is None for a device that never started (``error`` says why).
    ``charts`` says whether the chart redraws this time or only the figures.
    """

    name: str
    model: SessionModel | None
    variant: str
    analysis: LiveAnalysis | None
    charts: bool
    replay: bool
    finished: bool
    error: str | None
    recording: Path | None


def shown_variant(model: SessionModel) -> str:
    """The variant running now, else the last one seen (as the dashboard shows it)."""
    if model.phase.variant or not model.variants:
        return model.phase.variant
    return model.variants[-1]
