"""Fixtures for the simulated board: a board without SSH, and a shell on it."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from qtop.sim import SimBoard

from .helpers import BoardShell, fixed_config


@pytest.fixture
def evk_board(tmp_path: Path) -> Iterator[SimBoard]:
    with SimBoard(tmp_path / "state", config=fixed_config("evk")) as board:
        yield board


@pytest.fixture
def shell(evk_board: SimBoard) -> BoardShell:
    return BoardShell(evk_board)


@pytest.fixture
def sysfs_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory for a sysfs tree, on tmpfs when there is one (renames are cheap there)."""
    if os.access("/dev/shm", os.W_OK):
        directory = Path(tempfile.mkdtemp(prefix="qtop-sim-test-", dir="/dev/shm"))
        yield directory / "sys"
        shutil.rmtree(directory, ignore_errors=True)
    else:
        yield tmp_path / "sys"
