"""Two runs side by side: deltas, bootstrap confidence intervals, Mann-Whitney, gates.

A gate such as ``p95=5%`` fails only when the regression exceeds its threshold
beyond the measurement's own noise: when the lower end of the bootstrap
confidence interval of the relative change is above the threshold. A noisy
difference that merely looks larger than the threshold passes, and says so.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from qtop.analysis.energy import EnergyAnalysis
from qtop.analysis.latency import QUANTILES
from qtop.analysis.numeric import fsum, mean, normal_two_sided_p, percentile, stdev
from qtop.analysis.plain import to_plain
from qtop.analysis.session import SessionAnalysis, VariantAnalysis
from qtop.errors import UsageError

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
FEW_SAMPLES = 10
LATENCY_METRICS: dict[str, float] = dict(QUANTILES)
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
    # Which side's figure is there but not valid (too few sensor readings), with why.
    invalid_base: bool = False
    invalid_new: bool = False
    invalid_reason: str = ""


@dataclass(frozen=True, slots=True)
class MannWhitney:
    """Two-sided Mann-Whitney U test (normal approximation, tie and continuity corrected)."""

    u: float
    z: float
    p_value: float
    prob_new_slower: float
    n_base: int
    n_new: int


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

    @property
    def failed(self) -> bool:
        return any(g.failed for g in self.gates)

    def to_dict(self) -> dict[str, Any]:
        out = to_plain(self)
        out["failed"] = self.failed
        return out


def bootstrap_quantile(
    ordered: Sequence[float], q: float, resamples: int, rng: random.Random
) -> list[float]:
    """The q-quantile of ``resamples`` bootstrap resamples of sorted data.

    Sorting n draws with replacement is the same as mapping n sorted uniforms
    through the empirical quantile function, and the k-th smallest of n
    uniforms is Beta(k, n + 1 - k); the next one lies above it like the
    smallest of the remaining n - k. So the two order statistics the
    interpolated quantile needs are drawn directly, in microseconds each.
    """
    n = len(ordered)
    if n == 1:
        return [ordered[0]] * resamples
    position = q * (n - 1)
    k = math.floor(position)
    fraction = position - k
    out = []
    for _ in range(resamples):
        u_low = rng.betavariate(k + 1, n - k)
        low = ordered[min(int(n * u_low), n - 1)]
        if fraction and k + 1 < n:
            remaining = n - k - 1
            u_high = u_low + (1 - u_low) * (1 - rng.random() ** (1 / remaining))
            high = ordered[min(int(n * u_high), n - 1)]
            out.append(low + (high - low) * fraction)
        else:
            out.append(low)
    return out


def bootstrap_mean(values: Sequence[float], resamples: int, rng: random.Random) -> list[float]:
    """Bootstrap means from their normal approximation N(mean, s^2 / n)."""
    centre, error = mean(values), stdev(values) / math.sqrt(len(values))
    return [rng.gauss(centre, error) for _ in range(resamples)]


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


def change_interval(
    base_draws: Sequence[float], new_draws: Sequence[float], confidence: float
) -> tuple[float, float] | None:
    """Percentile interval of new / base - 1 over paired bootstrap draws."""
    changes = sorted(n / b - 1 for b, n in zip(base_draws, new_draws, strict=False) if b > 0)
    if len(changes) < 2:
        return None
    tail = (1 - confidence) / 2
    return percentile(changes, tail), percentile(changes, 1 - tail)


def mann_whitney(base: Sequence[float], new: Sequence[float]) -> MannWhitney | None:
    """U of the new run (pairs where new > base, ties count half) and its two-sided p."""
    n1, n2 = len(base), len(new)
    if n1 == 0 or n2 == 0:
        return None
    combined = sorted([(v, 0) for v in base] + [(v, 1) for v in new])
    total = n1 + n2
    rank_sum_new = 0.0
    tie_term = 0.0
    i = 0
    while i < total:
        j = i
        while j + 1 < total and combined[j + 1][0] == combined[i][0]:
            j += 1
        average_rank = (i + j) / 2 + 1
        ties = j - i + 1
        tie_term += ties**3 - ties
        rank_sum_new += average_rank * sum(1 for _, side in combined[i : j + 1] if side)
        i = j + 1
    u_new = rank_sum_new - n2 * (n2 + 1) / 2
    centre = n1 * n2 / 2
    variance = n1 * n2 / 12 * ((total + 1) - tie_term / (total * (total - 1)))
    if variance <= 0:
        z, p = 0.0, 1.0
    else:
        shift = u_new - centre
        corrected = max(abs(shift) - 0.5, 0.0)
        z = math.copysign(corrected / math.sqrt(variance), shift)
        p = normal_two_sided_p(z)
    return MannWhitney(
        u=u_new, z=z, p_value=p, prob_new_slower=u_new / (n1 * n2), n_base=n1, n_new=n2
    )


def _latency_delta(
    metric: str,
    base: Sequence[float],
    new: Sequence[float],
    confidence: float,
    resamples: int,
    rng: random.Random,
) -> MetricDelta:
    if not base or not new:
        return MetricDelta(metric, None, None, None, None, None, "no successful iterations")
    if metric == "mean":
        base_value, new_value = mean(base), mean(new)
        base_draws = bootstrap_mean(base, resamples, rng)
        new_draws = bootstrap_mean(new, resamples, rng)
    else:
        q = LATENCY_METRICS[metric]
        base_sorted, new_sorted = sorted(base), sorted(new)
        base_value, new_value = percentile(base_sorted, q), percentile(new_sorted, q)
        base_draws = bootstrap_quantile(base_sorted, q, resamples, rng)
        new_draws = bootstrap_quantile(new_sorted, q, resamples, rng)
    interval = change_interval(base_draws, new_draws, confidence)
    change = new_value / base_value - 1 if base_value > 0 else None
    return MetricDelta(
        metric,
        base_value,
        new_value,
        change,
        interval[0] if interval else None,
        interval[1] if interval else None,
    )


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
    reasons = sorted(
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
        invalid_reason="; ".join(reasons),
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


def compare_variants(
    base: VariantAnalysis,
    new: VariantAnalysis,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    rng: random.Random,
) -> VariantComparison:
    deltas = [
        _latency_delta(m, base.latencies_s, new.latencies_s, confidence, resamples, rng)
        for m in (*LATENCY_METRICS, "mean")
    ]
    deltas += [
        _energy_delta(m, base, new, confidence, resamples, rng) for m in ("energy", "energy_net")
    ]
    warnings = []
    for label, side in (("BASE", base), ("NEW", new)):
        if len(side.latencies_s) < FEW_SAMPLES:
            warnings.append(
                f"{label} has only {len(side.latencies_s)} successful iterations: "
                "confidence intervals are unreliable"
            )
        warnings += [f"{label}: {reason}" for reason in side.validity.reasons]
    base_thermal, new_thermal = base.thermal, new.thermal
    return VariantComparison(
        base_variant=base.name,
        new_variant=new.name,
        base_iterations=base.measured.count,
        new_iterations=new.measured.count,
        deltas=tuple(deltas),
        mann_whitney=mann_whitney(base.latencies_s, new.latencies_s),
        base_stability=_stability(base),
        new_stability=_stability(new),
        base_onset_s=base_thermal.onset_offset_s if base_thermal else None,
        new_onset_s=new_thermal.onset_offset_s if new_thermal else None,
        warnings=tuple(warnings),
    )


def _stability(variant: VariantAnalysis) -> float | None:
    thermal = variant.thermal
    return thermal.stability.ratio if thermal and thermal.stability else None


def pair_variants(
    base: SessionAnalysis, new: SessionAnalysis
) -> tuple[list[tuple[VariantAnalysis, VariantAnalysis]], list[str], list[str]]:
    """Variants matched by name; two single-variant runs are matched whatever their names."""
    if len(base.variants) == 1 and len(new.variants) == 1:
        return [(base.variants[0], new.variants[0])], [], []
    new_names = {v.name for v in new.variants}
    base_names = {v.name for v in base.variants}
    pairs = [(v, new.variant(v.name)) for v in base.variants if v.name in new_names]
    only_base = [v.name for v in base.variants if v.name not in new_names]
    only_new = [v.name for v in new.variants if v.name not in base_names]
    return [(b, n) for b, n in pairs if n is not None], only_base, only_new


def evaluate_gate(gate: Gate, comparison: VariantComparison, confidence: float) -> GateResult:
    """Fail when the lower confidence bound of the regression exceeds the threshold."""
    delta = comparison.delta(gate.metric)
    name = comparison.new_variant or comparison.base_variant
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
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """Compare every common variant and evaluate the gates on each."""
    if not 0 < confidence < 1:
        raise UsageError(f"confidence {confidence} is not between 0 and 1", "use e.g. 0.95")
    if resamples < 100:
        raise UsageError(f"{resamples} bootstrap resamples are too few", "use at least 1000")
    pairs, only_base, only_new = pair_variants(base, new)
    if not pairs:

        def names(variants: list[str]) -> str:
            return ", ".join(name or "(unnamed)" for name in variants) or "none"

        raise UsageError(
            f"{base_label} and {new_label} have no variant in common "
            f"({names(only_base)} vs {names(only_new)})",
            "compare recordings of the same variants, or single-variant recordings",
        )
    rng = random.Random(seed)
    variants = [
        compare_variants(b, n, confidence=confidence, resamples=resamples, rng=rng)
        for b, n in pairs
    ]
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
