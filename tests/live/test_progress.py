"""The headless progress lines: each warm-up and measurement closes with how it went."""

import io

from qtop.events import Iteration, PhaseChange
from qtop.live.progress import ProgressPrinter, status_line
from qtop.stats.model import SessionModel


def feed(model: SessionModel, printer: ProgressPrinter, *events) -> None:
    for event in events:
        model.apply(event)
    printer(list(events))


def iteration(t: float, latency_ms: float, phase: str = "measure", variant: str = "", ok=True):
    return Iteration(
        t=t,
        phase=phase,
        variant=variant,
        start=t - latency_ms / 1000,
        end=t,
        latency_s=latency_ms / 1000,
        exit_status=0 if ok else 1,
    )


def printed(events) -> list[str]:
    model, out = SessionModel(), io.StringIO()
    printer = ProgressPrinter(model, out, tty=False)
    printer._last_print = float("inf")  # no periodic status line: only the phase lines
    feed(model, printer, *events)
    return out.getvalue().splitlines()


def test_a_short_measurement_closes_with_its_count_time_and_p50():
    lines = printed(
        [
            PhaseChange(t=100.0, phase="warmup", planned_iterations=1),
            iteration(100.5, 3.0, phase="warmup"),
            PhaseChange(t=101.0, phase="measure", planned_duration_s=5.0),
            iteration(102.0, 2.0),
            iteration(103.0, 4.0),
            iteration(104.0, 2.0, ok=False),
            PhaseChange(t=106.5, phase="done"),
        ]
    )

    assert lines == [
        "phase warmup: 1 iterations",
        "warmup ended: 1 iterations in 1s, p50 3 ms",
        "phase measure: 5s",
        "measure ended: 3 iterations in 6s, p50 3 ms, 1 failed",
        "phase done",
    ]


def test_an_interleaved_block_closes_with_the_variant_count_so_far():
    lines = printed(
        [
            PhaseChange(t=10.0, phase="measure", variant="int8", note="block 1/2"),
            iteration(11.0, 2.0, variant="int8"),
            PhaseChange(t=12.0, phase="measure", variant="fp16", note="block 1/2"),
            iteration(13.0, 5.0, variant="fp16"),
            PhaseChange(t=14.0, phase="measure", variant="int8", note="block 2/2"),
            iteration(15.0, 2.0, variant="int8"),
            PhaseChange(t=16.0, phase="cooldown"),
        ]
    )

    assert lines[1] == "measure [int8] block 1/2 ended: 1 iterations so far, p50 2 ms"
    assert lines[5] == "measure [int8] block 2/2 ended: 2 iterations so far, p50 2 ms"
    # A cooldown or a baseline has no iterations to report: nothing closes it.
    assert printed([PhaseChange(t=1.0, phase="cooldown"), PhaseChange(t=9.0, phase="done")]) == [
        "phase cooldown",
        "phase done",
    ]


def test_the_status_line_gives_no_time_spent_in_done():
    model = SessionModel()
    model.apply(PhaseChange(t=1.0, phase="cooldown"))
    model.apply(iteration(31.0, 1.0, phase="warmup"))
    assert status_line(model) == "cooldown, elapsed 30s"

    model.apply(PhaseChange(t=31.0, phase="done"))
    model.apply(iteration(40.0, 1.0, phase="warmup"))
    assert status_line(model) == "done"
