"""The order in which a sweep's variants take turns, as the device agent follows it.

With ``run.order: interleaved`` or ``randomized`` the agent runs blocks of
``run.block`` iterations, variant after variant, round after round, until each
variant has its iterations (or its measured time). The host decides the order
and writes it into the plan as rounds of variant numbers, relative to one
repetition of the plan (1 is its first variant); the agent cycles through the
rounds and skips a variant once it is done. ``interleaved`` alternates forwards
and backwards (a b c, c b a): under a drift that is linear in time, each variant
then sits at the same mean position. ``randomized`` draws each round from a
seeded generator, so the order is known again from the recorded seed.
"""

from __future__ import annotations

import math
import random

from qtop.profiles import Profile

# Randomized rounds the plan carries at most; the agent cycles through them.
MOST_RANDOM_ROUNDS = 256


def uses_blocks(profile: Profile) -> bool:
    return profile.run.order != "sequential"


def blocks_per_variant(profile: Profile) -> int | None:
    """How many blocks each variant takes when it runs to its count (None: a duration run)."""
    run = profile.run
    if run.iterations is None:
        return None
    return math.ceil(run.iterations / run.block_size)


def rounds(profile: Profile) -> list[list[int]]:
    """The rounds of blocks: each a list of variant numbers within one repetition (from 1)."""
    run = profile.run
    group = len(run.variants) or 1
    forwards = list(range(1, group + 1))
    if run.order == "interleaved":
        return [forwards, forwards[::-1]] if group > 1 else [forwards]
    generator = random.Random(run.order_seed)
    count = min(blocks_per_variant(profile) or MOST_RANDOM_ROUNDS, MOST_RANDOM_ROUNDS)
    out = []
    for _ in range(count):
        shuffled = list(forwards)
        generator.shuffle(shuffled)
        out.append(shuffled)
    return out


def rounds_text(profile: Profile) -> str:
    """The rounds as the agent reads them: ``1,2,3 3,2,1``."""
    return " ".join(",".join(map(str, one)) for one in rounds(profile))
