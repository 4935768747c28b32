"""The ground-truth log: what the simulator really did, for tests to check qtop against.

JSON Lines, one record per tool invocation, appended when the invocation
ends (cleanly, with an error, interrupted or killed). Times are on the
device monotonic clock, which on the simulated board is this machine's
``time.monotonic``. See docs/simulator.md for the fields.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any


class GroundTruthLog:
    """Thread-safe appender; each record is flushed as soon as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file = path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":"), sort_keys=True)
        with self._lock:
            if self._file.closed:
                return
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def read_ground_truth(path: Path) -> list[dict[str, Any]]:
    """All records of a ground-truth log, oldest first."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
