"""How long to wait before each reconnection attempt."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

INITIAL_S = 0.5
MAXIMUM_S = 10.0
JITTER = 0.25


@dataclass(slots=True)
class Backoff:
    """Exponential backoff with jitter: 0.5 s doubling to 10 s, each +-25 %.

    Jitter keeps several qtop sessions that lost the same Wi-Fi from knocking
    on the device in lockstep.
    """

    initial_s: float = INITIAL_S
    maximum_s: float = MAXIMUM_S
    jitter: float = JITTER
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int) -> float:
        """The wait before attempt number ``attempt`` (1 for the first)."""
        base = min(self.maximum_s, self.initial_s * 2 ** max(0, attempt - 1))
        return base * (1 + self.rng.uniform(-self.jitter, self.jitter))
