"""The header's figures: the sample rate from device time, the stream's silence, plurals."""

from __future__ import annotations

import pytest

from qtop.events import Keyframe, PhaseChange
from qtop.record.reader import open_recording
from qtop.stats.model import SessionModel
from qtop.ui.panes.header import plural, sample_rate
from qtop.ui.stream_log import StreamLog
from tests.ui.helpers import GLASSES, SUSTAINED


def fold(path) -> SessionModel:
    model = SessionModel()
    for event in open_recording(path).events():
        model.apply(event)
    return model


def test_stream_log_counts_and_the_model_keeps_the_baseline_phase_across_keyframes():
    log = StreamLog(clock=lambda: 100.0)
    log.observe([PhaseChange(t=1.0, phase="baseline"), Keyframe(t=5.0, state={})])
    assert log.silent_for() == 0.0 and log.keyframes == 1 and log.batches == 1
    model = SessionModel()
    model.apply(PhaseChange(t=1.0, phase="baseline"))
    model.apply(PhaseChange(t=11.0, phase="measure"))
    assert model.phase_span("baseline", 11.0) == (1.0, 11.0)
    restored = SessionModel()
    restored.apply(Keyframe(t=11.0, state=model.snapshot()))
    assert restored.phase_span("baseline", 11.0) == (1.0, 11.0)


def test_sample_rate_follows_the_thinned_series():
    assert sample_rate(fold(SUSTAINED)) == pytest.approx(5.0)
    assert sample_rate(fold(GLASSES)) == pytest.approx(10.0)


def test_counts_are_said_in_words():
    assert plural(1, "reconnect") == "1 reconnect"
    assert plural(2, "reconnect") == "2 reconnects"
    assert plural(17, "tick") == "17 ticks"
