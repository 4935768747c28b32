"""Power: the device's power now and its energy per inference."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.analysis.power_now import power_now
from qtop.ui.devices.section import Section
from qtop.ui.devices.view import DeviceView
from qtop.ui.format import MISSING, fmt
from qtop.ui.panes.power import LOUD, source_name

MUTED = "$text-muted"


def power_content(view: DeviceView) -> Content:
    model, analysis = view.model, view.analysis
    if model is None:
        return Content("")
    source = analysis.power_source if analysis is not None else None
    if source is None:
        notes = analysis.power_notes if analysis is not None else ()
        text = "no power telemetry" if notes else "looking for power telemetry"
        return Content.styled(text, "$warning" if notes else MUTED)
    now = power_now(model, source)
    parts: list[str | tuple[str, str]] = [("power ", MUTED)]
    if now is None:
        parts.append(MISSING)
    else:
        parts += [
            (f"{fmt(now.power_w, 2)} W", "bold"),
            ("  avg 10 s ", MUTED),
            f"{fmt(now.average_w, 2)} W",
            ("  peak ", MUTED),
            f"{fmt(now.peak_w, 2)} W",
        ]
    parts += [("\n", ""), (source_name(source), MUTED), ("\n", "")]
    energy = analysis.energy if analysis is not None else None
    charging = (now is not None and now.charging) or (energy is not None and energy.charging)
    if charging:
        parts.append((" CHARGING: energy figures are meaningless ", LOUD))
    elif energy is None or energy.energy_per_inference_j is None:
        parts.append(("energy/inference: waiting for a measured run", MUTED))
    else:
        parts += [("energy/inference ", MUTED),
                  (f"{energy.energy_per_inference_j * 1000:.2f} mJ", "bold $accent")]  # fmt: skip
        if not energy.valid:
            parts.append((" NOT VALID", "bold $warning"))
    return Content.assemble(*parts)


class PowerSection(Section):
    DEFAULT_CSS = "PowerSection #device-power { height: 3; }"

    def compose(self) -> ComposeResult:
        yield Static(id="device-power")

    def draw(self, view: DeviceView) -> None:
        self.put("#device-power", power_content(view))
