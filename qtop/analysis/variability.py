"""How far a latency figure would move if the run were done again.

Two sources, both used by ``compare``:

- within a run: a circular block bootstrap of its iterations in the order they
  ran (``qtop.analysis.resample``), so that a run that drifts with temperature
  is not taken for thousands of independent draws;
- between runs: when a profile repeats its plan (``run.repeat``), the spread
  of the figure from one repetition to the next, which also sees what no
  single run can: a different start temperature, other load on the board.

And a Mann-Whitney U test whose null variance is widened by each side's
autocorrelation time, so that its p-value is not absurd for correlated
series. docs/analysis.md gives every formula.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from qtop.analysis.latency import QUANTILES
from qtop.analysis.numeric import mean, normal_two_sided_p, percentile, t_quantile
from qtop.analysis.resample import BlockBootstrap, Dependence

LATENCY_METRICS: dict[str, float] = dict(QUANTILES)
# A repetition with fewer successful iterations than this says little about its figure.
FEW_SAMPLES = 10


class SideSample:
    """One side of a comparison: its repetitions' latencies (each in run order) and resamples."""

    def __init__(
        self,
        repetitions: Sequence[Sequence[float]],
        resamples: int,
        rng: random.Random,
        block_length: int | None = None,
    ) -> None:
        self.repetitions = [list(r) for r in repetitions if r]
        self.pooled = list(itertools.chain.from_iterable(self.repetitions))
        self.sorted = sorted(self.pooled)
        self.dependence: Dependence | None = None
        self.draws: dict[str, list[float]] = {}
        if self.pooled:
            bootstrap = BlockBootstrap(self.pooled, block_length)
            self.dependence = bootstrap.dependence
            quantile_draws, mean_draws = bootstrap.draws(
                tuple(LATENCY_METRICS.values()), resamples, rng
            )
            self.draws = dict(zip(LATENCY_METRICS, quantile_draws, strict=True))
            self.draws["mean"] = mean_draws

    @property
    def count(self) -> int:
        return len(self.pooled)

    def value(self, metric: str) -> float | None:
        if not self.pooled:
            return None
        if metric == "mean":
            return mean(self.pooled)
        return percentile(self.sorted, LATENCY_METRICS[metric])

    def used_repetitions(self) -> list[list[float]]:
        """The repetitions with enough iterations to enter the between-run spread."""
        return [r for r in self.repetitions if len(r) >= FEW_SAMPLES]

    def repetition_logs(self, metric: str) -> list[float]:
        """log of the figure in each used repetition (positive figures only)."""
        out = []
        for values in self.used_repetitions():
            if metric == "mean":
                figure = mean(values)
            else:
                figure = percentile(sorted(values), LATENCY_METRICS[metric])
            if figure > 0:
                out.append(math.log(figure))
        return out


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval of new / base - 1 and how it was obtained."""

    low: float
    high: float
    method: str
    run_sd: float | None = None


def change_interval(
    base_draws: Sequence[float], new_draws: Sequence[float], confidence: float
) -> tuple[float, float] | None:
    """Percentile interval of new / base - 1 over paired bootstrap draws."""
    changes = sorted(n / b - 1 for b, n in zip(base_draws, new_draws, strict=False) if b > 0)
    if len(changes) < 2:
        return None
    tail = (1 - confidence) / 2
    return percentile(changes, tail), percentile(changes, 1 - tail)


def _log_variance(draws: Sequence[float]) -> float:
    logs = [math.log(d) for d in draws if d > 0]
    if len(logs) < 2:
        return 0.0
    centre = mean(logs)
    return math.fsum((v - centre) ** 2 for v in logs) / (len(logs) - 1)


def between_runs(base: SideSample, new: SideSample, metric: str) -> tuple[float, int]:
    """The pooled variance of log(figure) between repetitions of one side, and its dof.

    Run-to-run spread is a property of the device and the set-up, not of the
    change under test, so both sides' repetitions estimate it together (as a
    pooled two-sample t-test does); a side with one run contributes nothing.
    """
    squares = 0.0
    dof = 0
    for side in (base, new):
        logs = side.repetition_logs(metric)
        if len(logs) >= 2:
            centre = mean(logs)
            squares += math.fsum((v - centre) ** 2 for v in logs)
            dof += len(logs) - 1
    return (squares / dof if dof else 0.0), dof


def metric_interval(
    base: SideSample, new: SideSample, metric: str, confidence: float
) -> Interval | None:
    """The interval of the change of ``metric``: block bootstrap, widened by run-to-run spread.

    Without repetitions it is the percentile interval of the paired block
    bootstrap draws. With them, each side's variance of log(figure) is the
    larger of its bootstrap variance and (run-to-run variance) / (its
    repetitions), and the interval is log(new / base) +- t * standard error,
    t from Student's distribution with Satterthwaite's degrees of freedom: the
    run terms share the pooled estimate's, a bootstrap term counts as exact.
    """
    base_value, new_value = base.value(metric), new.value(metric)
    if base_value is None or new_value is None or base_value <= 0 or new_value <= 0:
        return None
    run_variance, run_dof = between_runs(base, new, metric)
    if run_dof == 0:
        bounds = change_interval(base.draws[metric], new.draws[metric], confidence)
        return None if bounds is None else Interval(bounds[0], bounds[1], "block bootstrap")
    total = from_runs = 0.0
    for side in (base, new):
        within = _log_variance(side.draws[metric])
        between = run_variance / max(1, len(side.used_repetitions()))
        total += max(within, between)
        if between >= within:
            from_runs += between
    # Both sides' run terms rest on the one pooled estimate: together they carry its dof.
    dof = total**2 * run_dof / from_runs**2 if from_runs > 0 else math.inf
    spread = t_quantile((1 + confidence) / 2, dof) * math.sqrt(total)
    change = math.log(new_value / base_value)
    if from_runs > 0:
        method = f"between repetitions (t, {dof:.1f} dof)"
    else:
        method = "block bootstrap, normal (more than the run-to-run spread)"
    return Interval(
        math.expm1(change - spread),
        math.expm1(change + spread),
        method,
        math.expm1(math.sqrt(run_variance)),
    )


@dataclass(frozen=True, slots=True)
class MannWhitney:
    """Two-sided Mann-Whitney U test, its null variance widened for autocorrelation."""

    u: float
    z: float
    p_value: float
    prob_new_slower: float
    n_base: int
    n_new: int
    n_eff_base: float
    n_eff_new: float


def mann_whitney(
    base: Sequence[float], new: Sequence[float], tau_base: float = 1.0, tau_new: float = 1.0
) -> MannWhitney | None:
    """U of the new run (pairs where new > base, ties count half) and its two-sided p.

    U is a sum of each iteration's placement among the other side's, a
    monotone function of its value, so its variance under dependence is the
    independent one with each side's n replaced by n / tau: the null variance
    (tie-corrected) is multiplied by (n_new tau_base + n_base tau_new) / (n_base + n_new).
    """
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
    tau_base, tau_new = max(1.0, tau_base), max(1.0, tau_new)
    inflation = (n2 * tau_base + n1 * tau_new) / total
    variance = n1 * n2 / 12 * ((total + 1) - tie_term / (total * (total - 1))) * inflation
    if variance <= 0:
        z, p = 0.0, 1.0
    else:
        shift = u_new - centre
        corrected = max(abs(shift) - 0.5, 0.0)
        z = math.copysign(corrected / math.sqrt(variance), shift)
        p = normal_two_sided_p(z)
    return MannWhitney(
        u=u_new,
        z=z,
        p_value=p,
        prob_new_slower=u_new / (n1 * n2),
        n_base=n1,
        n_new=n2,
        n_eff_base=n1 / tau_base,
        n_eff_new=n2 / tau_new,
    )
