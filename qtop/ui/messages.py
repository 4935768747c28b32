"""The messages that carry the session to the display.

Workers post them and the app's handlers own what they change (the display,
the analysis shown, the marks): a worker never touches a widget.
"""

from __future__ import annotations

from textual.message import Message

from qtop.analysis.live import LiveAnalysis
from qtop.errors import QtopError
from qtop.record.reader import Mark


class ModelChanged(Message):
    """The session model took in more events (or was restored by a seek).

    It carries nothing: the handler reads the model as it is when the message is
    handled, so a burst of these that the display could not keep up with merges
    into one in the queue.
    """

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ModelChanged)


class AnalysisReady(Message):
    """The analysis worker finished request number ``request``: the figures, or the problem."""

    def __init__(self, analysis: LiveAnalysis | None, request: int, problem: str = "") -> None:
        super().__init__()
        self.analysis = analysis
        self.request = request
        self.problem = problem


class SessionFinished(Message):
    """The session's worker returned: the source ended, or failed with ``error``."""

    def __init__(self, error: QtopError | None) -> None:
        super().__init__()
        self.error = error


class OnsetsFound(Message):
    """The whole recording was analysed in the background: its throttling onsets."""

    def __init__(self, marks: list[Mark], problem: str) -> None:
        super().__init__()
        self.marks = marks
        self.problem = problem
