"""Summaries of sessions: what ``report``, ``replay --headless`` and ``run``/``demo
--headless`` print, all through ``summarize``.

A summary is the same ``SessionModel`` the live UI shows plus the analysis of
everything a ``Collector`` gathered from the same events. A live headless run
feeds both as the events arrive; ``summarize_recording`` feeds both from the
file in one streaming pass (no list of every event). The same events give the
same summary either way.
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from qtop.analysis.collect import Collected, Collector
from qtop.analysis.session import SessionAnalysis, analyze_collected
from qtop.events import IterationRun, LogRun, Sample
from qtop.record.reader import open_recording
from qtop.stats import batch
from qtop.stats.model import SessionModel, split_key
from qtop.stats.quantiles import RunningStats

REPORT_QUANTILES = (0.5, 0.9, 0.95, 0.99, 0.999)


@dataclass(frozen=True, slots=True)
class LatencySummary:
    """Latency of one phase of one variant, in milliseconds."""

    count: int
    mean_ms: float | None
    stdev_ms: float | None
    min_ms: float | None
    max_ms: float | None
    p50_ms: float | None
    p90_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    p999_ms: float | None
    exact: bool

    @classmethod
    def from_stats(cls, stats: RunningStats) -> LatencySummary:
        def ms(value: float) -> float | None:
            return value * 1000 if stats.count and math.isfinite(value) else None

        q = stats.quantiles(REPORT_QUANTILES)
        return cls(
            count=stats.count,
            mean_ms=ms(stats.mean),
            stdev_ms=ms(stats.stdev) if stats.count > 1 else None,
            min_ms=ms(stats.minimum),
            max_ms=ms(stats.maximum),
            p50_ms=ms(q[0.5]),
            p90_ms=ms(q[0.9]),
            p95_ms=ms(q[0.95]),
            p99_ms=ms(q[0.99]),
            p999_ms=ms(q[0.999]),
            exact=stats.is_exact,
        )


@dataclass(frozen=True, slots=True)
class VariantSummary:
    """One row of the results table: one variant of one recording."""

    recording: str
    variant: str
    measured: LatencySummary
    warmup: LatencySummary
    failed: int
    metrics: dict[str, float] = field(default_factory=dict)
    peak_memory_mb: float | None = None

    @property
    def config(self) -> str:
        return f"{self.recording}:{self.variant}" if self.variant else self.recording


@dataclass(frozen=True, slots=True)
class ChannelSummary:
    id: str
    kind: str
    unit: str
    last: float | None
    minimum: float | None
    maximum: float | None
    unavailable: int


@dataclass(frozen=True, slots=True)
class RecordingSummary:
    """Everything ``report`` says about one recording."""

    path: str
    profile: str
    device: str
    source: str
    created: str
    duration_s: float
    end_reason: str
    # Why a run that did not complete ended (the device's or qtop's words); often empty.
    end_detail: str
    complete: bool
    variants: tuple[VariantSummary, ...]
    channels: tuple[ChannelSummary, ...]
    samples: int
    missed_ticks: int
    disconnects: int
    reconnects: int
    gaps: int
    gap_seconds: float
    markers: tuple[tuple[float | None, str], ...]
    warnings: tuple[str, ...]
    analysis: SessionAnalysis | None = None

    def to_dict(self) -> dict[str, Any]:
        analysis = self.analysis
        data = asdict(replace(self, analysis=None))
        data["analysis"] = analysis.to_dict() if analysis is not None else None
        for variant in data["variants"]:
            variant["config"] = (
                f"{variant['recording']}:{variant['variant']}"
                if variant["variant"]
                else variant["recording"]
            )
        return data


def device_name(device: Mapping[str, Any]) -> str:
    """A header's device as people name it: ``hostname (soc)``, or whichever is known."""
    name = str(device.get("hostname") or device.get("host") or "")
    soc = device.get("soc")
    if soc:
        name = f"{name} ({soc})" if name else str(soc)
    return name


def _variant_names(model: SessionModel) -> list[str]:
    names = list(model.variants)
    for key in [*model.iterations_done, *model.iterations_failed]:
        _, variant = split_key(key)
        if variant not in names:
            names.append(variant)
    return names or [""]


def _peak_memory_mb(model: SessionModel) -> float | None:
    peaks = [
        model.channel_stats[c.id].maximum
        for c in model.channels_of_kind("memory")
        if c.id in model.channel_stats and model.channel_stats[c.id].maximum is not None
    ]
    return max(peaks) if peaks else None  # type: ignore[type-var]


def summarize_model(
    model: SessionModel,
    path: str,
    warnings: tuple[str, ...] = (),
    analysis: SessionAnalysis | None = None,
) -> RecordingSummary:
    """A summary of whatever the model has seen so far."""
    name = Path(path).stem if path else "session"
    variants = []
    for variant in _variant_names(model):
        metric_means: dict[str, float] = {}
        prefix = f"measure|{variant}|"
        for key, metric in model.metrics.items():
            if key.startswith(prefix) and metric.count:
                metric_means[key[len(prefix) :]] = metric.quantile(0.5)
        variants.append(
            VariantSummary(
                recording=name,
                variant=variant,
                measured=LatencySummary.from_stats(model.latency_stats("measure", variant)),
                warmup=LatencySummary.from_stats(model.latency_stats("warmup", variant)),
                failed=model.failed("measure", variant) + model.failed("warmup", variant),
                metrics=metric_means,
                peak_memory_mb=_peak_memory_mb(model),
            )
        )
    channels = tuple(
        ChannelSummary(
            id=channel.id,
            kind=channel.kind,
            unit=channel.unit,
            last=stats.last,
            minimum=stats.minimum,
            maximum=stats.maximum,
            unavailable=stats.unavailable,
        )
        for channel in model.channels.values()
        if (stats := model.channel_stats.get(channel.id)) is not None
    )
    header = model.header
    profile = header.profile.get("name", "") if header else ""
    device = device_name(header.device) if header else ""
    return RecordingSummary(
        path=path,
        profile=str(profile),
        device=device,
        source=header.source if header else "",
        created=header.created if header else "",
        duration_s=model.duration_s,
        end_reason=model.end.reason if model.end else "no end line (crashed or still running)",
        end_detail=model.end.detail if model.end else "",
        complete=model.end is not None,
        variants=tuple(variants),
        channels=channels,
        samples=model.sample_count,
        missed_ticks=model.missed_ticks,
        disconnects=model.link.disconnects,
        reconnects=model.link.reconnects,
        gaps=len(model.link.gaps),
        gap_seconds=model.link.gap_seconds,
        markers=tuple(
            (
                None if m.t is None or model.t_first is None else m.t - model.t_first,
                f"{m.label}: {m.note}" if m.label and m.note else (m.label or m.note),
            )
            for m in model.markers
        ),
        # What the probe found missing explains an empty thermal or power section.
        warnings=warnings + tuple(w for w in model.probe_warnings if w not in warnings),
        analysis=analysis,
    )


def summarize(
    model: SessionModel,
    collected: Collected | None,
    path: str,
    warnings: tuple[str, ...] = (),
) -> RecordingSummary:
    """The summary every command prints: the model's figures and the session's analysis."""
    analysis = analyze_collected(collected) if collected is not None else None
    return summarize_model(model, path, warnings, analysis)


BATCH_RUNS = 512
BATCH_SAMPLES = 512
# A fold frees what it allocates for a line with the lines after it, and makes no
# cycles; the collector's default pass every 700 new containers scans everything
# alive each time (6% of a report on a demo hour). At this many, a demo hour's
# report makes no pass at all.
FOLD_GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    threshold = gc.get_threshold()
    if threshold[0]:
        gc.set_threshold(max(threshold[0], FOLD_GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def summarize_recording(path: str | Path) -> tuple[RecordingSummary, SessionModel]:
    """Fold a recording into a fresh model and a collector in one pass, and summarise.

    Runs of iterations and of output lines, and samples, are folded in batches
    (``qtop.stats.batch``, ``SessionModel.apply_log_runs``):
    each batch goes in before any other event, so the model and the analysis
    are what one event at a time gives, for a fraction of the calls.
    """
    recording = open_recording(path)
    # The summary reads no chart series: the model keeps none.
    model = SessionModel(charts=False)
    collector = Collector()
    runs: list[IterationRun] = []
    samples: list[Sample] = []
    logs: list[LogRun] = []

    def flush() -> None:
        if logs:
            model.apply_log_runs(logs)
            logs.clear()
        if runs:
            batch.apply_iteration_runs(model, runs)
            collector.add_runs(runs)
            runs.clear()
        if samples:
            batch.apply_samples(model, samples)
            collector.add_samples(samples)
            samples.clear()

    with _few_collections():
        try:
            for item in recording.items():
                kind = type(item)
                if kind is Sample:
                    samples.append(item)  # type: ignore[arg-type]
                    if len(samples) >= BATCH_SAMPLES:
                        flush()
                elif kind is IterationRun:
                    runs.append(item)  # type: ignore[arg-type]
                    if len(runs) >= BATCH_RUNS:
                        flush()
                elif kind is LogRun:
                    # Output lines touch neither what the other batches change nor the analysis.
                    logs.append(item)  # type: ignore[arg-type]
                    if len(logs) >= BATCH_RUNS:
                        flush()
                else:
                    flush()
                    model.apply(item)  # type: ignore[arg-type]
                    collector.add(item)  # type: ignore[arg-type]
            flush()
        finally:
            recording.close()
        summary = summarize(model, collector.finish(), str(path), tuple(recording.warnings()))
    return summary, model
