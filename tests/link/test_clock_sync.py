"""A wall clock NTP has not set yet: the probe asks, and `qtop probe` and a run say so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from qtop.device.checkup import unsynced_clock

from .helpers import SHELLS, make_sysfs, probe_locally, profile_for, shadow_command
from .recording import warnings_of_a_short_local_run

NO_SYSTEMD = (
    "#!/bin/sh\necho 'System has not been booted with systemd as init system' >&2\nexit 1\n"
)


def timedatectl_saying(answer: str) -> str:
    """timedatectl as systemd's: the one query the probe makes, answered."""
    return (
        "#!/bin/sh\n"
        '[ "$*" = \'show -p NTPSynchronized --value\' ] || { echo "unexpected: $*" >&2; exit 1; }\n'
        f"echo {answer}\n"
    )


@pytest.mark.parametrize(
    ("script", "synced"),
    [(timedatectl_saying("no"), False), (timedatectl_saying("yes"), True), (NO_SYSTEMD, None)],
    ids=["not yet", "synchronised", "no systemd"],
)
def test_the_probe_asks_whether_ntp_has_set_the_clock(tmp_path, monkeypatch, script, synced):
    shadow_command(monkeypatch, tmp_path / "bin", "timedatectl", script)
    profile = profile_for(
        make_sysfs(tmp_path / "sys"), tmp_path / "spool", "{command: 'true', iterations: 1}"
    )
    for shell in SHELLS:
        probe = probe_locally(shell, profile)
        assert probe.clock_synced is synced, shell
        assert (unsynced_clock(probe) is not None) is (synced is False), shell


def local_profile(tmp_path) -> str:
    sysfs = make_sysfs(tmp_path / "sys")
    path = tmp_path / "p.yaml"
    path.write_text(
        f"name: p\ndevice: {{sysfs_root: '{sysfs}', spool_dir: '{tmp_path / 'spool'}'}}\n"
        "run: {command: 'true', iterations: 1}\n"
    )
    return str(path)


def test_probe_says_the_clock_is_not_synchronised_with_the_fix(tmp_path, monkeypatch):
    shadow_command(monkeypatch, tmp_path / "bin", "timedatectl", timedatectl_saying("no"))
    result = subprocess.run(
        [sys.executable, "-m", "qtop", "probe", local_profile(tmp_path), "--local", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["clock"]["ntp_synchronized"] is False
    clock = [p for p in found["problems"] if p["item"] == "clock"]
    assert len(clock) == 1 and clock[0]["severity"] == "warning"
    assert "qtop takes the step off the run's own times" in clock[0]["problem"]
    assert clock[0]["fix"] == (
        "wait until timedatectl says 'System clock synchronized: yes', then start the run"
    )


async def clock_warnings_of_a_run(tmp_path) -> list[str]:
    warnings = await warnings_of_a_short_local_run(tmp_path, make_sysfs(tmp_path / "sys"))
    return [text for text in warnings if "NTPSynchronized" in text]


async def test_a_run_on_a_clock_ntp_has_not_set_records_the_warning(tmp_path, monkeypatch):
    shadow_command(monkeypatch, tmp_path / "bin", "timedatectl", timedatectl_saying("no"))
    warnings = await clock_warnings_of_a_run(tmp_path)
    assert len(warnings) == 1
    assert warnings[0].endswith(
        "fix: wait until timedatectl says 'System clock synchronized: yes', then start the run"
    )


async def test_a_run_on_a_synchronised_clock_gets_no_such_warning(tmp_path, monkeypatch):
    shadow_command(monkeypatch, tmp_path / "bin", "timedatectl", timedatectl_saying("yes"))
    assert await clock_warnings_of_a_run(tmp_path) == []
