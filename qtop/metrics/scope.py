"""What every family of one scrape shares: the model copy, the base labels, the label caps."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypeGuard

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from qtop.metrics.labels import (
    MAX_COOLING_DEVICES,
    MAX_ITERATION_METRICS,
    MAX_VARIANTS,
    MAX_ZONES,
    LabelSet,
    clean_value,
)
from qtop.stats.model import SessionModel

PREFIX = "qtop_"
BASE_LABELS = ("device", "profile")


@dataclass(slots=True)
class Budget:
    """The label sets of one scrape, and what they had to leave out."""

    zones: LabelSet = field(default_factory=lambda: LabelSet(MAX_ZONES))
    cooling: LabelSet = field(default_factory=lambda: LabelSet(MAX_COOLING_DEVICES))
    variants: LabelSet = field(default_factory=lambda: LabelSet(MAX_VARIANTS))
    iteration_metrics: LabelSet = field(default_factory=lambda: LabelSet(MAX_ITERATION_METRICS))

    def dropped(self) -> dict[str, int]:
        return {
            "zone": self.zones.dropped,
            "cooling_device": self.cooling.dropped,
            "variant": self.variants.dropped,
            "iteration_metric": self.iteration_metrics.dropped,
        }


def device_name(model: SessionModel) -> str:
    """The device as the report names it: its hostname."""
    header = model.header
    if header is None:
        return ""
    return str(header.device.get("hostname") or header.device.get("host") or "")


def profile_name(model: SessionModel) -> str:
    return str(model.header.profile.get("name", "")) if model.header else ""


def finite(value: float | None) -> TypeGuard[float]:
    return value is not None and math.isfinite(value)


class Scope:
    """One scrape's copy of the model, its ``device`` and ``profile`` labels and its caps."""

    def __init__(self, model: SessionModel) -> None:
        self.model = model
        self.budget = Budget()
        self.base = [clean_value(device_name(model)), clean_value(profile_name(model))]

    def variant(self, name: str) -> str | None:
        """The label value of a variant, None past the cap."""
        return self.budget.variants.value(name)

    def gauge(
        self, name: str, doc: str, labels: tuple[str, ...], unit: str = ""
    ) -> GaugeMetricFamily:
        return GaugeMetricFamily(PREFIX + name, doc, labels=[*BASE_LABELS, *labels], unit=unit)

    def counter(
        self, name: str, doc: str, labels: tuple[str, ...], unit: str = ""
    ) -> CounterMetricFamily:
        return CounterMetricFamily(PREFIX + name, doc, labels=[*BASE_LABELS, *labels], unit=unit)
