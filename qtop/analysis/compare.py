"""Two runs side by side: deltas, confidence intervals that know runs drift, gates.

A gate such as ``p95=5%`` fails only when the regression exceeds its threshold
beyond the measurement's own noise: when the lower end of the confidence
interval of the relative change is above the threshold. A noisy difference
that merely looks larger than the threshold passes, and says so.

The noise is a run's, not an iteration's: iterations are resampled in blocks
as long as their autocorrelation reaches, and when a profile repeats its runs
(``run.repeat``) the spread between repetitions widens the interval
(``qtop.analysis.variability``). Either side may be one variant of a
recording, so two variants of one session compare like two recordings.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from qtop.analysis.drift import drift_note
from qtop.analysis.energy import EnergyAnalysis
from qtop.analysis.numeric import fsum
from qtop.analysis.pacing import PacingSummary
from qtop.analysis.plain import to_plain
from qtop.analysis.resample import Dependence
from qtop.analysis.session import SessionAnalysis, VariantAnalysis
from qtop.analysis.variability import (
    FEW_SAMPLES,
    LATENCY_METRICS,
    MannWhitney,
    SideSample,
    change_interval,
    mann_whitney,
    metric_interval,
)
from qtop.errors import UsageError
from qtop.textsafe import plain
from qtop.variants import split_repetition

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
GATE_METRICS: tuple[str, ...] = (*LATENCY_METRICS, "mean", "energy", "energy_net")
_GATE = re.compile(r"^\s*(?P<metric>[a-z0-9_.]+)\s*=\s*(?P<value>[0-9]+(?:\.[0-9]+)?)\s*%?\s*$")


@dataclass(frozen=True, slots=True)
class Gate:
    """Fail when ``metric`` regresses by more than ``threshold`` (a fraction) beyond noise."""

    metric: str
    threshold: float


def parse_gate(text: str) -> Gate:
    """``p95=5%`` (or ``p95=5``) -> Gate("p95", 0.05); p99.9 is accepted for p999."""
    match = _GATE.match(text.lower())
    metric = match["metric"].replace("p99.9", "p999") if match else ""
    if match is None or metric not in GATE_METRICS:
        raise UsageError(
            f"--max-regression {text!r}: expected METRIC=PERCENT with METRIC one of "
            f"{', '.join(GATE_METRICS)}",
            "for example --max-regression p95=5%",
        )
    return Gate(metric, float(match["value"]) / 100)


@dataclass(frozen=True, slots=True)
class MetricDelta:
    """One metric of both runs; change = new / base - 1, with its confidence interval."""

    metric: str
    base: float | None
    new: float | None
    change: float | None
    ci_low: float | None
    ci_high: float | None
    note: str = ""
    # How the interval was obtained (block bootstrap, or between repetitions).
    interval: str = ""
    # Run-to-run spread of the figure (relative), when repetitions measured it.
    run_to_run: float | None = None
    # Which side's figure is there but not valid (too few sensor readings), with why.
    invalid_base: bool = False
    invalid_new: bool = False
    invalid_reason: str = ""


@dataclass(frozen=True, slots=True)
class GateResult:
    variant: str
    metric: str
    threshold: float
    change: float | None
    ci_low: float | None
    failed: bool
    verdict: str


@dataclass(frozen=True, slots=True)
class VariantComparison:
    base_variant: str
    new_variant: str
    base_iterations: int
    new_iterations: int
    deltas: tuple[MetricDelta, ...]
    mann_whitney: MannWhitney | None
    base_stability: float | None
    new_stability: float | None
    base_onset_s: float | None
    new_onset_s: float | None
    warnings: tuple[str, ...]
    base_repetitions: int = 1
    new_repetitions: int = 1
    base_dependence: Dependence | None = None
    new_dependence: Dependence | None = None
    notes: tuple[str, ...] = ()
    # Paced runs: deadline misses, achieved rate and duty cycle of each side's first repetition.
    base_pacing: PacingSummary | None = None
    new_pacing: PacingSummary | None = None
    # MLPerf's early-stopping P90 bound (99%) of each side's first repetition.
    base_p90_bound_s: float | None = None
    new_p90_bound_s: float | None = None

    def delta(self, metric: str) -> MetricDelta | None:
        return next((d for d in self.deltas if d.metric == metric), None)


@dataclass(frozen=True, slots=True)
class Comparison:
    base_label: str
    new_label: str
    confidence: float
    resamples: int
    seed: int
    variants: tuple[VariantComparison, ...]
    only_in_base: tuple[str, ...]
    only_in_new: tuple[str, ...]
    gates: tuple[GateResult, ...] = field(default=())
    # BASE's and NEW's devices, when they are not the same device (side-by-side runs).
    devices: tuple[str, str] | None = None

    @property
    def failed(self) -> bool:
        return any(g.failed for g in self.gates)

    def to_dict(self) -> dict[str, Any]:
        out = to_plain(self)
        out["failed"] = self.failed
        return out


def bootstrap_ratio(
    blocks: Sequence[tuple[float, int]], resamples: int, rng: random.Random
) -> list[float]:
    """sum(energy) / sum(inferences) over blocks resampled with replacement."""
    out = []
    for _ in range(resamples):
        chosen = rng.choices(blocks, k=len(blocks))
        inferences = sum(c for _, c in chosen)
        if inferences:
            out.append(fsum([e for e, _ in chosen]) / inferences)
    return out


def _energy_delta(
    metric: str,
    base: VariantAnalysis,
    new: VariantAnalysis,
    confidence: float,
    resamples: int,
    rng: random.Random,
) -> MetricDelta:
    net = metric == "energy_net"
    values = []
    for side in (base, new):
        energy = side.energy
        value = energy.net_energy_per_inference_j if net else energy.energy_per_inference_j
        values.append(value)
    base_value, new_value = values
    if base_value is None or new_value is None:
        missing = [
            label for label, value in (("BASE", base_value), ("NEW", new_value)) if value is None
        ]
        reasons = {_missing_energy_reason(side.energy, net) for side in (base, new)}
        reasons.discard("")
        why = "; ".join(sorted(reasons)) or "no energy figure"
        return MetricDelta(
            metric, base_value, new_value, None, None, None, f"{' and '.join(missing)}: {why}"
        )
    change = new_value / base_value - 1 if base_value > 0 else None
    note = ""
    interval = None
    flags = [(s.energy.net_valid if net else s.energy.valid) is False for s in (base, new)]
    invalid = sorted(
        {
            f"{label}: {reason}"
            for label, side, bad in (("BASE", base, flags[0]), ("NEW", new, flags[1]))
            if bad
            for reason in side.energy.invalid_reasons
        }
    )
    # The idle baseline has no noise model, so net energy gets no interval.
    if not net and base.energy.blocks and new.energy.blocks:
        interval = change_interval(
            bootstrap_ratio(base.energy.blocks, resamples, rng),
            bootstrap_ratio(new.energy.blocks, resamples, rng),
            confidence,
        )
    elif not net:
        note = "too few power readings for a confidence interval"
    if any(flags):
        sides = " and ".join(
            label for label, bad in zip(("BASE", "NEW"), flags, strict=True) if bad
        )
        note = f"{sides}: figure not valid" + (f"; {note}" if note else "")
    return MetricDelta(
        metric,
        base_value,
        new_value,
        change,
        interval[0] if interval else None,
        interval[1] if interval else None,
        note,
        invalid_base=flags[0],
        invalid_new=flags[1],
        invalid_reason="; ".join(invalid),
    )


def _missing_energy_reason(energy: EnergyAnalysis, net: bool) -> str:
    if not energy.available:
        return "no power telemetry"
    if energy.charging:
        return "battery charging during the measurement"
    if energy.energy_j is None:
        return "no energy figure"
    if net and energy.net_energy_j is None:
        return "no idle baseline" if energy.idle_power_w is None else "no net energy figure"
    return ""


@dataclass(frozen=True, slots=True)
class VariantGroup:
    """One variant of a session with its repetitions (one entry without ``run.repeat``)."""

    name: str
    repetitions: tuple[VariantAnalysis, ...]

    @property
    def first(self) -> VariantAnalysis:
        return self.repetitions[0]

    @property
    def iterations(self) -> int:
        return sum(r.measured.count for r in self.repetitions)

    @property
    def t_start(self) -> float | None:
        return min((r.t_start for r in self.repetitions if r.t_start is not None), default=None)


def variant_groups(session: SessionAnalysis) -> list[VariantGroup]:
    """The session's variants, each repetition ``name#k`` put back under ``name`` in order."""
    grouped: dict[str, list[tuple[int, VariantAnalysis]]] = {}
    for variant in session.variants:
        name, repetition = split_repetition(variant.name)
        grouped.setdefault(name, []).append((repetition or 0, variant))
    return [
        VariantGroup(name, tuple(v for _, v in sorted(members, key=lambda m: m[0])))
        for name, members in grouped.items()
    ]


def _latency_delta(
    metric: str, base: SideSample, new: SideSample, confidence: float
) -> MetricDelta:
    base_value, new_value = base.value(metric), new.value(metric)
    if base_value is None or new_value is None:
        return MetricDelta(metric, None, None, None, None, None, "no successful iterations")
    change = new_value / base_value - 1 if base_value > 0 else None
    interval = metric_interval(base, new, metric, confidence)
    if interval is None:
        return MetricDelta(metric, base_value, new_value, change, None, None)
    return MetricDelta(
        metric,
        base_value,
        new_value,
        change,
        interval.low,
        interval.high,
        interval=interval.method,
        run_to_run=interval.run_sd,
    )


def compare_variants(
    base: VariantGroup,
    new: VariantGroup,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    rng: random.Random,
    block_length: int | None = None,
) -> VariantComparison:
    """Every metric of two variants (each with its repetitions), with intervals and a U test."""
    sides = [
        SideSample([r.latencies_s for r in group.repetitions], resamples, rng, block_length)
        for group in (base, new)
    ]
    deltas = [_latency_delta(m, sides[0], sides[1], confidence) for m in (*LATENCY_METRICS, "mean")]
    # Energy per inference is taken from each side's first repetition (docs/analysis.md).
    deltas += [
        _energy_delta(m, base.first, new.first, confidence, resamples, rng)
        for m in ("energy", "energy_net")
    ]
    warnings, notes = _side_warnings(base, new, sides)
    base_thermal, new_thermal = base.first.thermal, new.first.thermal
    base_dep, new_dep = sides[0].dependence, sides[1].dependence
    return VariantComparison(
        base_variant=base.name,
        new_variant=new.name,
        base_iterations=base.iterations,
        new_iterations=new.iterations,
        deltas=tuple(deltas),
        mann_whitney=mann_whitney(
            sides[0].pooled,
            sides[1].pooled,
            base_dep.autocorrelation_time if base_dep else 1.0,
            new_dep.autocorrelation_time if new_dep else 1.0,
        ),
        base_stability=_stability(base.first),
        new_stability=_stability(new.first),
        base_onset_s=base_thermal.onset_offset_s if base_thermal else None,
        new_onset_s=new_thermal.onset_offset_s if new_thermal else None,
        warnings=tuple(warnings),
        base_repetitions=len(base.repetitions),
        new_repetitions=len(new.repetitions),
        base_dependence=base_dep,
        new_dependence=new_dep,
        notes=tuple(notes + order_notes(base.first, new.first)),
        base_pacing=base.first.pacing,
        new_pacing=new.first.pacing,
        base_p90_bound_s=base.first.early_stop.bound_s if base.first.early_stop else None,
        new_p90_bound_s=new.first.early_stop.bound_s if new.first.early_stop else None,
    )


def order_notes(base: VariantAnalysis, new: VariantAnalysis) -> list[str]:
    """The drift each side saw and why a side stopped early: what qualifies the deltas."""
    notes = [drift_note("BASE", base.drift), drift_note("NEW", new.drift)]
    for side, variant in (("BASE", base), ("NEW", new)):
        if variant.stopped_early:
            notes.append(f"{side} stopped early: {variant.stopped_early}")
    return [note for note in notes if note]


def _side_warnings(
    base: VariantGroup, new: VariantGroup, sides: Sequence[SideSample]
) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    notes: list[str] = []
    for label, group, side in (("BASE", base, sides[0]), ("NEW", new, sides[1])):
        if side.count < FEW_SAMPLES:
            warnings.append(
                f"{label} has only {side.count} successful iterations: "
                "confidence intervals are unreliable"
            )
        for repetition in group.repetitions:
            where = f" ({repetition.name})" if len(group.repetitions) > 1 else ""
            warnings += [f"{label}{where}: {reason}" for reason in repetition.validity.reasons]
        short = len(group.repetitions) - len(side.used_repetitions())
        if len(group.repetitions) > 1 and short:
            notes.append(
                f"{label}: {short} of {len(group.repetitions)} repetitions have fewer than "
                f"{FEW_SAMPLES} successful iterations and do not count in the run-to-run spread"
            )
    repeated = [len(side.used_repetitions()) >= 2 for side in sides]
    if any(repeated) and not all(repeated):
        single = "NEW" if repeated[0] else "BASE"
        notes.append(
            f"{single} is a single run: the run-to-run spread measured by the other side's "
            "repetitions is applied to it too"
        )
    if len(base.repetitions) > 1 or len(new.repetitions) > 1:
        notes.append(
            "energy, stability and onset are those of each side's first repetition; "
            "latency pools every repetition"
        )
    return warnings, notes


def _stability(variant: VariantAnalysis) -> float | None:
    thermal = variant.thermal
    return thermal.stability.ratio if thermal and thermal.stability else None


def _select(groups: list[VariantGroup], wanted: str | None, label: str) -> list[VariantGroup]:
    if wanted is None:
        return groups
    chosen = [g for g in groups if g.name == wanted]
    if not chosen:
        names = ", ".join(g.name or "(unnamed)" for g in groups) or "none"
        raise UsageError(
            f"{label}: the recording has no variant {wanted!r} (its variants: {names})",
            "write FILE:VARIANT with one of those names",
        )
    return chosen


def pair_variants(
    base: Sequence[VariantGroup], new: Sequence[VariantGroup]
) -> tuple[list[tuple[VariantGroup, VariantGroup]], list[str], list[str]]:
    """Variants matched by name; two single-variant sides are matched whatever their names."""
    if len(base) == 1 and len(new) == 1:
        return [(base[0], new[0])], [], []
    new_by_name = {g.name: g for g in new}
    base_names = {g.name for g in base}
    pairs = [(g, new_by_name[g.name]) for g in base if g.name in new_by_name]
    only_base = [g.name for g in base if g.name not in new_by_name]
    only_new = [g.name for g in new if g.name not in base_names]
    return pairs, only_base, only_new


def _one_session_note(
    base: SessionAnalysis, new: SessionAnalysis, pairs: list[tuple[VariantGroup, VariantGroup]]
) -> str | None:
    """Two variants of one session ran at different times; say so, with the order."""
    if not base.session_id or base.session_id != new.session_id or len(pairs) != 1:
        return None
    ((b, n),) = pairs
    if b.name == n.name or b.t_start is None or n.t_start is None:
        return None
    order = "after" if n.t_start > b.t_start else "before"
    return (
        f"BASE and NEW are two variants of one session: {n.name or '(unnamed)'} ran {order} "
        f"{b.name or '(unnamed)'}, so unless the run interleaved them or cooled down between "
        "them, thermal drift is part of the difference"
    )


def evaluate_gate(gate: Gate, comparison: VariantComparison, confidence: float) -> GateResult:
    """Fail when the lower confidence bound of the regression exceeds the threshold."""
    delta = comparison.delta(gate.metric)
    base, new = comparison.base_variant, comparison.new_variant
    # Variant names come from the device: the error is printed, so never raw.
    name = plain(f"{base} vs {new}" if base and new and base != new else new or base)
    if delta is None or delta.change is None:
        why = delta.note if delta is not None and delta.note else "the metric is missing"
        raise UsageError(
            f"cannot check the gate {gate.metric}={gate.threshold:.1%}"
            f"{f' for variant {name}' if name else ''}: {why}",
            f"drop --max-regression {gate.metric}=... or record both runs with that figure",
        )
    if delta.invalid_base or delta.invalid_new:
        sides = " and ".join(
            label
            for label, bad in (("BASE", delta.invalid_base), ("NEW", delta.invalid_new))
            if bad
        )
        raise UsageError(
            f"cannot check the gate {gate.metric}={gate.threshold:.1%}"
            f"{f' for variant {name}' if name else ''}: the {gate.metric} figure of {sides} is "
            f"not valid ({delta.invalid_reason or 'too few power readings'})",
            "record the runs long enough for the power sensor (docs/analysis.md, 'Validity'), "
            f"or drop --max-regression {gate.metric}=...",
        )
    low = delta.ci_low
    if low is None:
        failed = delta.change > gate.threshold
        verdict = (
            f"{delta.change:+.1%} vs limit {gate.threshold:.1%} "
            "(no confidence interval: point values compared)"
        )
    elif low > gate.threshold:
        failed = True
        verdict = (
            f"regression {delta.change:+.1%}, at least {low:+.1%} at {confidence:.0%} "
            f"confidence: exceeds {gate.threshold:.1%}"
        )
    else:
        failed = False
        within = " (within the noise)" if delta.change > gate.threshold else ""
        verdict = f"{delta.change:+.1%}, lower bound {low:+.1%} <= {gate.threshold:.1%}{within}"
    return GateResult(name, gate.metric, gate.threshold, delta.change, low, failed, verdict)


def compare_sessions(
    base: SessionAnalysis,
    new: SessionAnalysis,
    gates: Sequence[Gate] = (),
    *,
    base_label: str = "BASE",
    new_label: str = "NEW",
    base_variant: str | None = None,
    new_variant: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    block_length: int | None = None,
) -> Comparison:
    """Compare every common variant (or the one each side names) and evaluate the gates.

    ``block_length`` fixes the bootstrap's block length in iterations (1: the
    iterations taken as independent); by default it follows each side's
    autocorrelation.
    """
    if not 0 < confidence < 1:
        raise UsageError(f"confidence {confidence} is not between 0 and 1", "use e.g. 0.95")
    if resamples < 100:
        raise UsageError(f"{resamples} bootstrap resamples are too few", "use at least 1000")
    pairs, only_base, only_new = pair_variants(
        _select(variant_groups(base), base_variant, base_label),
        _select(variant_groups(new), new_variant, new_label),
    )
    if not pairs:

        def names(variants: list[str]) -> str:
            return ", ".join(name or "(unnamed)" for name in variants) or "none"

        raise UsageError(
            f"{base_label} and {new_label} have no variant in common "
            f"({names(only_base)} vs {names(only_new)})",
            "compare recordings of the same variants, or name one on each side: FILE:VARIANT",
        )
    rng = random.Random(seed)
    variants = [
        compare_variants(
            b, n, confidence=confidence, resamples=resamples, rng=rng, block_length=block_length
        )
        for b, n in pairs
    ]
    note = _one_session_note(base, new, pairs)
    if note:
        variants[0] = replace(variants[0], notes=(note, *variants[0].notes))
    results = [evaluate_gate(gate, v, confidence) for v in variants for gate in gates]
    return Comparison(
        base_label=base_label,
        new_label=new_label,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        variants=tuple(variants),
        only_in_base=tuple(only_base),
        only_in_new=tuple(only_new),
        gates=tuple(results),
    )
