"""How close qtop's energy figures come to the truth with a slow fuel gauge:
python bench/energy_accuracy.py [--runs N]

A synthetic gauge (tests/analysis/synthetic_gauge.py) refreshes once a second
and holds its reading; qtop samples it at 10 Hz. The board idles at a constant
0.5 W through a 20 s idle baseline, then draws 2 W (with a little reading noise)
for the measurement. Over random gauge and sampler phases this prints the
relative error (min / median / max) of the idle baseline, gross energy and net
energy, against the exact integral of the gauge's own held readings and against
the true step signal, for measurements of 60, 30 and 10 s. Run it against
another checkout (PYTHONPATH=<checkout>) to compare integrations.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "analysis"))
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from synthetic_gauge import Gauge, StepSignal, sample_times  # noqa: E402
from synthetic_streams import (  # noqa: E402
    BATTERY_POWER,
    BATTERY_STATUS,
    POWER_INFO,
    STATUS_INFO,
    back_to_back,
    phase,
    stream,
)

from qtop.analysis.session import analyze  # noqa: E402
from qtop.events import Sample  # noqa: E402

IDLE_W, BUSY_W, BASELINE_S = 0.5, 2.0, 20.0


def one_run(measure_s: float, gauge_phase: float, sample_phase: float) -> dict[str, float]:
    start = 2.0 + BASELINE_S
    signal = StepSignal((0.0, start), (IDLE_W, BUSY_W))

    def noise(update: float) -> float:
        return 0.0 if update < start else 0.05 * math.sin(update * 12.9898)

    gauge = Gauge(signal, 1.0, gauge_phase, noise)
    times = sample_times(0.0, start + measure_s + 3.0, 0.1, sample_phase)
    samples = [
        Sample(t=t, seq=k, values={BATTERY_POWER: gauge.reading(t), BATTERY_STATUS: -1.0})
        for k, t in enumerate(times)
    ]
    iterations = back_to_back(start, [0.1] * round(measure_s / 0.1))
    phases = [phase(2.0, "baseline"), phase(start, "measure")]
    events = stream([POWER_INFO, STATUS_INFO], iterations, samples, phases)
    energy = analyze(events).variants[0].energy
    a, b = iterations[0].start, iterations[-1].end
    held, true = gauge.integral(a, b), signal.integral(a, b)
    return {
        "idle": energy.idle_power_w / IDLE_W - 1,
        "gross vs held": energy.energy_j / held - 1,
        "net vs held": energy.net_energy_j / (held - IDLE_W * (b - a)) - 1,
        "gross vs true": energy.energy_j / true - 1,
        "net vs true": energy.net_energy_j / (true - IDLE_W * (b - a)) - 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="random phases per length")
    args = parser.parse_args()
    rng = random.Random(1)
    print(f"gauge 1 s, sampled at 10 Hz, idle {IDLE_W} W, busy {BUSY_W} W, {args.runs} phases")
    for measure_s in (60.0, 30.0, 10.0):
        runs = [one_run(measure_s, rng.random(), rng.random() * 0.1) for _ in range(args.runs)]
        print(f"measurement {measure_s:g} s (relative error: min / median / max)")
        for key in runs[0]:
            values = [r[key] for r in runs]
            print(
                f"  {key:<14}{min(values):+8.2%} {statistics.median(values):+8.2%} "
                f"{max(values):+8.2%}"
            )


if __name__ == "__main__":
    main()
