"""Report lines for the early-stopping estimate and the drift a variant saw."""

from __future__ import annotations

from qtop.analysis.drift import Drift
from qtop.analysis.early_stop import minimum_queries
from qtop.analysis.session import AnalysisParameters, VariantAnalysis


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e3:.4g}"


def early_stop_lines(variant: VariantAnalysis, parameters: AnalysisParameters) -> list[str]:
    """``P90 <= X ms (99% confidence, MLPerf early stopping)`` and why a run stopped early."""
    found = variant.early_stop
    lines = []
    if found is None:
        if variant.measured.count:
            lines.append(
                f"P90 bound: none, {variant.measured.count} iterations are fewer than the "
                f"{minimum_queries()} MLPerf's early-stopping estimate needs"
            )
    else:
        lines.append(
            f"P90 <= {_ms(found.bound_s)} ms with 99% confidence (MLPerf early-stopping "
            f"estimate over {found.queries} queries, {found.discarded} highest discarded): "
            f"{found.margin:+.2%} over the observed P90 {_ms(found.observed_p90_s)} ms"
        )
    if variant.stopped_early:
        lines.append(f"stopped early: {variant.stopped_early}")
    if parameters.validity_preset != "custom":
        lines.append(f"validity: {parameters.validity_preset} minimums")
    return lines


def drift_lines(drift: Drift | None) -> list[str]:
    """The variant's start against its end: latency, temperature, slope."""
    if drift is None or drift.first_p50_s is None:
        return []
    blocks = f"{drift.blocks} blocks, " if drift.blocks > 1 else ""
    change = drift.change
    text = (
        f"drift ({blocks}{drift.segments}): P50 {_ms(drift.first_p50_s)} -> "
        f"{_ms(drift.last_p50_s)} ms" + (f" ({change:+.1%})" if change is not None else "")
    )
    if drift.first_temperature_c is not None and drift.last_temperature_c is not None:
        text += f", {drift.first_temperature_c:.1f} -> {drift.last_temperature_c:.1f} C"
    if drift.slope_per_min is not None:
        text += f", slope {drift.slope_per_min:+.2%}/min"
    return [text]
