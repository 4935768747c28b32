"""A ``Comparison`` as text for a terminal or Markdown for a CI comment."""

from __future__ import annotations

from qtop.analysis.compare import Comparison, MetricDelta, VariantComparison
from qtop.analysis.pacing import PacingSummary
from qtop.analysis.render import marked
from qtop.analysis.resample import Dependence
from qtop.table import fmt, markdown_table, text_table

HEADERS = ("metric", "BASE", "NEW", "change", "CI")
_LABELS = {
    "p50": "P50 ms",
    "p90": "P90 ms",
    "p95": "P95 ms",
    "p99": "P99 ms",
    "p999": "P99.9 ms",
    "mean": "mean ms",
    "energy": "energy/inf mJ",
    "energy_net": "net energy/inf mJ",
}


def _value(value: float | None) -> str:
    """Seconds as ms, joules as mJ: both scale by 1000."""
    return fmt(value * 1e3 if value is not None else None, 3)


def _change(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1%}"


def _interval(delta: MetricDelta) -> str:
    if delta.ci_low is None or delta.ci_high is None:
        return "—"
    return f"[{delta.ci_low:+.1%}, {delta.ci_high:+.1%}]"


def _rows(variant: VariantComparison) -> list[list[str]]:
    rows = [
        [_LABELS[d.metric], marked(_value(d.base), not d.invalid_base),
         marked(_value(d.new), not d.invalid_new), _change(d.change), _interval(d)]
        for d in variant.deltas
    ]  # fmt: skip
    base_s, new_s = variant.base_stability, variant.new_stability
    stability_change = (
        f"{(new_s - base_s) * 100:+.1f} pt" if base_s is not None and new_s is not None else "—"
    )
    rows.append(
        [
            "stability",
            "—" if base_s is None else f"{base_s:.1%}",
            "—" if new_s is None else f"{new_s:.1%}",
            stability_change,
            "—",
        ]
    )
    base_b, new_b = variant.base_p90_bound_s, variant.new_p90_bound_s
    if base_b is not None or new_b is not None:
        bound_change = (
            _change(new_b / base_b - 1) if base_b is not None and new_b is not None else "—"
        )
        rows.append(["P90 bound ms", _value(base_b), _value(new_b), bound_change, "—"])
    base_o, new_o = variant.base_onset_s, variant.new_onset_s
    onset_change = f"{new_o - base_o:+.1f} s" if base_o is not None and new_o is not None else "—"
    rows.append(["onset s", fmt(base_o, 1), fmt(new_o, 1), onset_change, "—"])
    return rows + _pacing_rows(variant)


def _pacing_rows(variant: VariantComparison) -> list[list[str]]:
    """Deadline misses (change in points), achieved rate and duty cycle of paced runs."""
    base, new = variant.base_pacing, variant.new_pacing
    if base is None and new is None:
        return []

    def share(pacing: PacingSummary | None, name: str) -> float | None:
        return getattr(pacing, name) if pacing is not None else None

    rows = []
    for label, name in (("deadline misses", "miss_fraction"), ("duty cycle", "duty_cycle")):
        b, n = share(base, name), share(new, name)
        change = f"{(n - b) * 100:+.1f} pt" if b is not None and n is not None else "—"
        rows.append([label, _percent(b), _percent(n), change, "—"])
    b, n = share(base, "achieved_rate_hz"), share(new, "achieved_rate_hz")
    rows.insert(
        1,
        [
            "achieved rate /s",
            fmt(b, 3),
            fmt(n, 3),
            _change(n / b - 1 if b and n is not None else None),
            "—",
        ],
    )
    return rows


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _variant_title(variant: VariantComparison) -> str:
    counts = f"{variant.base_iterations} vs {variant.new_iterations} measured iterations"
    if variant.base_repetitions > 1 or variant.new_repetitions > 1:
        counts += f" in {variant.base_repetitions} vs {variant.new_repetitions} repetitions"
    if variant.base_variant == variant.new_variant:
        return f"variant {variant.base_variant}: {counts}" if variant.base_variant else counts
    return f"variant {variant.base_variant or '—'} vs {variant.new_variant or '—'}: {counts}"


def _dependence(dependence: Dependence | None) -> str:
    if dependence is None:
        return "—"
    return (
        f"{dependence.n_eff:.0f} of {dependence.n} (autocorrelation time "
        f"{dependence.autocorrelation_time:.1f}, blocks of {dependence.block_length})"
    )


def _details(variant: VariantComparison) -> list[str]:
    lines = [
        f"effective iterations: BASE {_dependence(variant.base_dependence)}; "
        f"NEW {_dependence(variant.new_dependence)}"
    ]
    methods: dict[str, list[str]] = {}
    for delta in variant.deltas:
        if delta.interval:
            methods.setdefault(delta.interval, []).append(delta.metric)
    if len(methods) == 1:
        lines.append(f"latency intervals: {next(iter(methods))}")
    elif methods:
        grouped = "; ".join(f"{' '.join(names)}: {how}" for how, names in methods.items())
        lines.append(f"latency intervals: {grouped}")
    spreads = [f"{d.metric} {d.run_to_run:.2%}" for d in variant.deltas if d.run_to_run is not None]
    if spreads:
        lines.append(f"run-to-run spread (one repetition, relative): {', '.join(spreads)}")
    test = variant.mann_whitney
    if test is not None:
        lines.append(
            f"Mann-Whitney U {test.u:.0f}, z {test.z:+.2f}, p = {test.p_value:.3g} "
            f"(effective n {test.n_eff_base:.0f} and {test.n_eff_new:.0f}); "
            f"P(NEW slower than BASE) = {test.prob_new_slower:.1%}"
        )
    gross = variant.delta("energy")
    for delta in variant.deltas:
        # Without a gross energy figure the net one is missing for the same reason.
        if delta.metric == "energy_net" and gross is not None and gross.change is None:
            continue
        if delta.note:
            lines.append(f"note: {delta.metric}: {delta.note}")
        if delta.invalid_reason:
            lines.append(f"not valid: {delta.metric}: {delta.invalid_reason}")
    lines += [f"note: {n}" for n in variant.notes]
    lines += [f"warning: {w}" for w in variant.warnings]
    return lines


def _gate_lines(comparison: Comparison) -> list[str]:
    lines = []
    for gate in comparison.gates:
        where = f" ({gate.variant})" if gate.variant else ""
        state = "FAIL" if gate.failed else "pass"
        lines.append(f"{state}  {gate.metric}{where} max +{gate.threshold:.1%}: {gate.verdict}")
    return lines


def _outcome(comparison: Comparison) -> str:
    if not comparison.gates:
        return "no gates given (use --max-regression METRIC=PERCENT)"
    failed = sum(1 for g in comparison.gates if g.failed)
    if failed:
        return f"FAILED: {failed} of {len(comparison.gates)} gate(s) regressed beyond the noise"
    return f"passed: {len(comparison.gates)} gate(s)"


def _heading(comparison: Comparison) -> str:
    heading = (
        f"BASE {comparison.base_label} vs NEW {comparison.new_label} "
        f"({comparison.confidence:.0%} CI of the change: block bootstrap, "
        f"{comparison.resamples} resamples, seed {comparison.seed})"
    )
    if comparison.devices is not None:
        base, new = comparison.devices
        heading += (
            f"\nacross devices: BASE on {base}, NEW on {new}; each side is timed by its own "
            "device's clock, so the changes are between devices, not between builds"
        )
    return heading


def render_comparison_text(comparison: Comparison) -> str:
    out = [_heading(comparison), ""]
    for variant in comparison.variants:
        out.append(_variant_title(variant))
        out.append(text_table(HEADERS, _rows(variant), "  "))
        out += [f"  {line}" for line in _details(variant)]
        out.append("")
    for name in comparison.only_in_base:
        out.append(f"only in BASE: variant {name}")
    for name in comparison.only_in_new:
        out.append(f"only in NEW: variant {name}")
    out += _gate_lines(comparison)
    out.append(_outcome(comparison))
    return "\n".join(out)


def render_comparison_markdown(comparison: Comparison) -> str:
    icon = "❌" if comparison.failed else "✅"
    out = [f"### {icon} qtop compare", _heading(comparison)]
    for variant in comparison.variants:
        out.append(f"#### {_variant_title(variant)}")
        out.append(markdown_table(HEADERS, _rows(variant)))
        details = _details(variant)
        if details:
            out.append("\n".join(f"- {line}" for line in details))
    missing = [f"only in BASE: variant {n}" for n in comparison.only_in_base]
    missing += [f"only in NEW: variant {n}" for n in comparison.only_in_new]
    if missing:
        out.append("\n".join(f"- {line}" for line in missing))
    gates = _gate_lines(comparison)
    if gates:
        out.append("**Gates**\n\n" + "\n".join(f"- {line}" for line in gates))
    out.append(f"**{_outcome(comparison)}**")
    return "\n\n".join(out)
