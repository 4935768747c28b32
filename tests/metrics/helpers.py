"""Render and parse expositions the way Prometheus would read them."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterable

from fixtures.sessions import simple_session_events
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics import exposition as openmetrics_exposition
from prometheus_client.openmetrics import parser as openmetrics_parser
from prometheus_client.parser import text_string_to_metric_families

from qtop.events import Event, Iteration, PhaseChange, replace
from qtop.metrics.capture import copy_model
from qtop.metrics.families import model_families
from qtop.stats.model import SessionModel

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


class Static:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return self.families


def fold(events: Iterable[Event]) -> SessionModel:
    model = SessionModel()
    for event in events:
        model.apply(event)
    return model


def registry_of(model: SessionModel) -> CollectorRegistry:
    families, _ = model_families(copy_model(model))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Static(families))
    return registry


def text_of(model: SessionModel) -> str:
    return generate_latest(registry_of(model)).decode()


def openmetrics_of(model: SessionModel) -> str:
    return openmetrics_exposition.generate_latest(registry_of(model)).decode()


class Scrape:
    """A parsed exposition: families by name, and sample values by (name, labels)."""

    def __init__(self, text: str, openmetrics: bool = False) -> None:
        parse = (
            openmetrics_parser.text_string_to_metric_families
            if openmetrics
            else text_string_to_metric_families
        )
        self.text = text
        self.families = {family.name: family for family in parse(text)}
        self.samples: dict[tuple[str, frozenset], float] = {}
        for family in self.families.values():
            for sample in family.samples:
                key = (sample.name, frozenset(sample.labels.items()))
                assert key not in self.samples, f"duplicate series {key}"
                self.samples[key] = sample.value

    def value(self, name: str, **labels: str) -> float:
        """The one sample of ``name`` whose labels include ``labels``."""
        found = self.all(name, **labels)
        assert len(found) == 1, f"{name} {labels}: {len(found)} samples"
        return next(iter(found.values()))

    def all(self, name: str, **labels: str) -> dict[frozenset, float]:
        wanted = set(labels.items())
        return {
            key: value
            for (sample, key), value in self.samples.items()
            if sample == name and wanted <= key
        }

    def has(self, name: str, **labels: str) -> bool:
        return bool(self.all(name, **labels))

    def label_values(self, name: str, label: str) -> list[str]:
        return sorted({dict(key)[label] for key in self.all(name)})


def scrape_url(url: str, accept: str | None = None) -> str:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()


def paced_events():
    """A paced run at 10/s with a 50 ms deadline: every fourth iteration (60 ms) misses it;
    start lateness 0, 2, 4, 6, 8 ms in turn."""
    events = [e for e in simple_session_events("v1") if not isinstance(e, (PhaseChange, Iteration))]
    events[0] = replace(
        events[0], profile={"name": "paced", "run": {"rate_hz": 10.0, "deadline_s": 0.05}}
    )
    events.insert(2, PhaseChange(t=1000.0, phase="measure", variant="v1"))
    for k in range(40):
        arrival, late = 1000.0 + k * 0.1, 0.002 * (k % 5)
        latency = 0.06 if k % 4 == 3 else 0.03
        start = arrival + late
        events.append(
            Iteration(t=start + latency, seq=1000 + k, index=k, phase="measure", variant="v1",
                      start=start, end=start + latency, latency_s=latency, scheduled=arrival,
                      lateness_s=late, missed=late + latency > 0.05)
        )  # fmt: skip
    return events
