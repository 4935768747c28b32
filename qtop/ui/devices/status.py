"""Status: where the device's run is (phase, progress, ETA), its link, and its recording."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.stats.model import SessionModel
from qtop.textsafe import clean
from qtop.ui.devices.section import Section
from qtop.ui.devices.view import DeviceView
from qtop.ui.panes.header import LINK_DOWN, link_history, phase_chip

LOUD = "bold reverse $error"


def link_text(model: SessionModel) -> tuple[str, str]:
    """The link as this device's event stream describes it, with its history."""
    link = model.link
    history = link_history(model)
    more = "".join(f" · {item}" for item in history)
    if link.state in LINK_DOWN and model.end is None:
        return f"link {link.state.upper()}{more}", LOUD
    return f"link ok{more}", "bold $warning" if history else "$success"


def status_content(view: DeviceView) -> Content:
    model = view.model
    problem = (view.error or "?").splitlines()[0]
    if model is None:
        return Content.styled(clean(f"did not start: {problem}"), LOUD)
    phase, phase_style = phase_chip(model)
    link, link_style = link_text(model)
    # One line each, so that at 100x30 (two columns of 50) neither is cut.
    parts: list[str | tuple[str, str]] = [(phase, phase_style), "\n", (link, link_style)]
    if view.error is not None:
        parts += ["\n", (clean(f"stopped: {problem}"), LOUD)]
    elif view.recording is not None and not view.replay:
        parts += ["\n", (clean(f"recording {view.recording.name}"), "$text-muted")]
    elif view.finished and view.replay:
        parts += ["\n", ("end of the recording", "$text-muted")]
    else:
        parts += ["\n", ("not recorded" if not view.replay else "", "$text-muted")]
    return Content.assemble(*parts)


class StatusSection(Section):
    DEFAULT_CSS = "StatusSection #device-status { height: 3; }"

    def compose(self) -> ComposeResult:
        yield Static(id="device-status")

    def draw(self, view: DeviceView) -> None:
        self.put("#device-status", status_content(view))
