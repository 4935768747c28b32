"""Scratch directories of a killed demo or simulator are removed at the next start."""

import os
import subprocess

import psutil

from qtop.sim.stale import OWNER_FILE, claim, remove_stale


def test_only_directories_whose_owner_process_is_gone_are_removed(tmp_path):
    dead = subprocess.Popen(["true"])
    dead_created = psutil.Process(dead.pid).create_time()
    dead.wait()
    mine = tmp_path / "qtop-demo-mine"
    mine.mkdir()
    claim(mine)
    gone = tmp_path / "qtop-demo-gone"
    gone.mkdir()
    (gone / OWNER_FILE).write_text(f"{dead.pid} {dead_created!r}\n")
    reused = tmp_path / "qtop-demo-reused"
    reused.mkdir()
    (reused / OWNER_FILE).write_text(f"{os.getpid()} 12.5\n")
    unknown = tmp_path / "qtop-demo-unknown"
    unknown.mkdir()
    other = tmp_path / "other-gone"
    other.mkdir()
    (other / OWNER_FILE).write_text(f"{dead.pid} {dead_created!r}\n")
    removed = remove_stale(tmp_path, "qtop-demo-")
    assert sorted(removed) == sorted([gone, reused])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "other-gone",
        "qtop-demo-mine",
        "qtop-demo-unknown",
    ]
