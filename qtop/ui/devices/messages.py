"""Messages from the devices' session workers and analysis threads to the combined view."""

from __future__ import annotations

from textual.message import Message

from qtop.analysis.live import LiveAnalysis
from qtop.errors import QtopError


class DeviceChanged(Message):
    """Device ``index``'s model took in more events; merges with a queued one of the same."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DeviceChanged) and message.index == self.index


class DeviceFinished(Message):
    """Device ``index``'s session ended, or failed with ``error``."""

    def __init__(self, index: int, error: QtopError | None) -> None:
        super().__init__()
        self.index = index
        self.error = error


class DeviceAnalysed(Message):
    """The analysis of device ``index`` (request ``request``): the figures, or the problem."""

    def __init__(
        self, index: int, analysis: LiveAnalysis | None, request: int, problem: str = ""
    ) -> None:
        super().__init__()
        self.index = index
        self.analysis = analysis
        self.request = request
        self.problem = problem
