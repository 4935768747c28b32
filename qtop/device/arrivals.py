"""When a paced run's iterations arrive: a fixed period, or a Poisson process.

The device's shell has no portable source of random numbers and may count in
32 bits, so the host draws a Poisson schedule's gaps from the run's seed and
sends them in the plan as whole seconds and microseconds (``arrivals``, one
gap a line); the agent adds them up. Iteration 0 of every phase arrives when
the phase starts, iteration k after the first k gaps, so every phase and
variant of a run, and every run with the same seed, sees the same arrivals.
"""

from __future__ import annotations

import math
import random

from qtop.profiles import Profile

# A longer schedule is read again from its top: a plan file of about 600 kB.
MAX_ARRIVALS = 50_000


def poisson_gaps_us(rate_hz: float, seed: int, count: int) -> list[int]:
    """``count`` exponential gaps of mean 1/``rate_hz`` seconds, in whole microseconds."""
    draw = random.Random(seed).random
    # 1 - u is in (0, 1]: the logarithm is always defined.
    return [round(-math.log(1.0 - draw()) / rate_hz * 1e6) for _ in range(count)]


def gaps_needed(profile: Profile) -> int:
    """Gaps that cover the longest phase (warm-up or measurement) of one variant."""
    run = profile.run
    if run.iterations is not None:
        # Without a wall latency a process is one arrival, and there are at most this many.
        return max(1, min(MAX_ARRIVALS, run.warmup + run.iterations))
    if run.duration_s is not None and run.rate_hz is not None:
        # The arrival just past the end still starts an iteration; a few more in reserve.
        return max(1, min(MAX_ARRIVALS, math.ceil(run.duration_s * run.rate_hz * 1.2) + 10))
    return MAX_ARRIVALS


def arrivals_file(profile: Profile) -> str | None:
    """The ``arrivals`` plan file of a Poisson schedule (``None`` for any other run)."""
    run = profile.run
    if run.rate_hz is None or run.schedule != "poisson":
        return None
    gaps = poisson_gaps_us(run.rate_hz, run.arrival_seed, gaps_needed(profile))
    return "".join(f"{gap // 1_000_000} {gap % 1_000_000}\n" for gap in gaps)
