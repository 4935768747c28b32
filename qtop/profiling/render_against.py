"""The text of ``qtop ops DEVICE --against AIHUB.json``: where the device parts from AI Hub.

Every name came from a file and goes through ``plain``.
"""

from __future__ import annotations

from qtop.profiling.against import DEPARTURE, HubLayer, OpsAgainstHub
from qtop.profiling.render import number, percent
from qtop.table import MISSING, text_table
from qtop.textsafe import plain

LISTED = 8


def _times(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}x"


def _names(layers: tuple[HubLayer, ...]) -> str:
    shown = ", ".join(plain(layer.name) for layer in layers[:LISTED])
    return shown + (f" (+{len(layers) - LISTED} more)" if len(layers) > LISTED else "")


def render_against(result: OpsAgainstHub, device_source: str, hub_source: str, top: int) -> str:
    unit = result.unit
    lines = [f"{plain(device_source)} against AI Hub's {plain(hub_source)}"]
    headline = f"its headline estimate {number(result.hub_estimate_us, 1)} us"
    if result.hub_estimate_us is not None and result.hub_estimate_us == result.hub_min_us:
        headline += " is the fastest run"
    lines.append(
        f"  one inference: device median {number(result.device_median_us, 1)} us (accelerator); "
        f"AI Hub median of its measured runs {number(result.hub_median_us, 1)} us ({headline})"
    )
    if not result.matched:
        lines.append("  no op both sides measured in the same unit")
    else:
        lines.append(
            f"  {len(result.matched)} ops lined up by name, compared in {unit}; the device spends "
            f"{_times(result.overall_ratio)} AI Hub's figure over them; an op departs at "
            f"{DEPARTURE:g}x that ratio or 1/{DEPARTURE:g} of it"
        )
        shown = result.matched if top <= 0 else result.matched[:top]
        rows = [
            [
                plain(match.device_name),
                number(match.device, 1),
                number(match.hub, 1),
                percent(match.device_share),
                percent(match.hub_share),
                _times(match.departure),
                number(match.excess, 1),
                plain(match.compute_unit),
                "DEPARTS" if match.departs else "",
            ]
            for match in shown
        ]
        headers = [
            "op", f"device {unit}", f"AI Hub {unit}", "device share", "AI Hub share",
            "vs overall", f"excess {unit}", "unit", "",
        ]  # fmt: skip
        lines.append(
            f"  ops by excess over AI Hub's estimate ({len(shown)} of {len(result.matched)}):"
        )
        lines.append(text_table(headers, rows, indent="  "))
        departing = result.departing
        lines.append(
            f"  {len(departing)} op(s) depart: "
            + (", ".join(plain(m.device_name) for m in departing[:LISTED]) or "none")
        )
    if result.hub_off_npu:
        lines.append(
            f"  AI Hub ran {len(result.hub_off_npu)} layer(s) off the NPU (not in an HTP "
            f"profile): {_names(result.hub_off_npu)}"
        )
    if result.hub_fused:
        lines.append(f"  AI Hub fused {len(result.hub_fused)} layer(s) (0 us, 0 cycles)")
    if result.hub_only:
        lines.append(f"  only in AI Hub: {_names(result.hub_only)}")
    if result.device_only:
        names = ", ".join(plain(op.name) for op in result.device_only[:LISTED])
        more = len(result.device_only) - LISTED
        lines.append(f"  only on the device: {names}{f' (+{more} more)' if more > 0 else ''}")
    lines += [f"  note: {plain(note)}" for note in result.notes]
    return "\n".join(lines) + "\n"
