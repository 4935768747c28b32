"""Finding the glasses: demo --board, the simulator's own error, the top-level help."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from qtop.profiles import builtin_profile_dir

from .helpers import GLASSES_SHELL, free_port
from .test_cli_live import qtop, records


def test_the_glasses_demo_shows_android_zones_and_battery_power(tmp_path):
    recording = tmp_path / "glasses.jsonl"
    process = qtop(
        "demo", "--board", "glasses", "--headless", "--warmup", "0", "--iterations", "3",
        "--variant", "w8a8", "--record", str(recording), cwd=tmp_path,
    )  # fmt: skip
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    assert re.search(r"^simulated board on 127\.0\.0\.1:\d+ \(glasses, ", out, re.M)
    assert out.splitlines()[-1] == "run completed"
    events = records(recording)
    header = events[0]
    assert header["profile"]["name"] == "sim-glasses"
    assert header["device"]["soc"] == "AR1" and header["device"]["shell"] == GLASSES_SHELL
    channels = {c["id"] for c in next(e for e in events if e["kind"] == "channels")["channels"]}
    assert {"thermal/nsphvx-0", "thermal/shell_front", "power/battery/power"} <= channels
    samples = [e["values"] for e in events if e["kind"] == "sample"]
    assert samples and all(s["thermal/mdmss-0"] is None for s in samples)
    assert all(0.3 < s["power/battery/power"] < 5 for s in samples)
    assert not [e for e in events if e["kind"] == "log" and e["stream"] == "probe"]


def test_the_evk_demo_takes_its_power_from_the_external_meter(tmp_path):
    recording = tmp_path / "evk.jsonl"
    process = qtop(
        "demo", "--headless", "--warmup", "0", "--iterations", "3", "--record", str(recording),
        cwd=tmp_path,
    )  # fmt: skip
    _out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    events = records(recording)
    assert events[0]["device"]["soc"] == "QCS9075"
    channels = {c["id"] for c in next(e for e in events if e["kind"] == "channels")["channels"]}
    assert {"meter/ina226/power", "meter/ina226/current", "meter/ina226/voltage"} <= channels
    assert not [c for c in channels if c.startswith("power/")]
    samples = [e["values"] for e in events if e["kind"] == "sample"]
    assert samples and all(8 < s["meter/ina226/power"] < 25 for s in samples)


@pytest.mark.parametrize("command", ["run", "probe"])
def test_a_simulator_profile_before_its_simulator_says_to_start_it(tmp_path, command):
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-m", "qtop", command, "sim-glasses"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1
    assert "sim-glasses is a profile for the simulated board (glasses)" in result.stderr
    assert "fix: start `qtop sim --variant glasses` first (in another terminal)" in result.stderr
    assert "identity_file" not in result.stderr


def test_a_simulator_that_is_not_listening_says_to_start_it(tmp_path):
    key = tmp_path / "client_ed25519"
    key.write_text("not used: nothing listens\n")
    text = (builtin_profile_dir() / "sim-evk.yaml").read_text()
    text = re.sub(r"(?m)^  port: .*$", f"  port: {free_port()}", text)
    text = re.sub(r"(?m)^  identity_file: .*$", f"  identity_file: {key}", text)
    profile = tmp_path / "sim-evk.yaml"
    profile.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "qtop", "run", str(profile), "--headless", "--no-record"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1
    assert re.search(r"and nothing answers on 127\.0\.0\.1:\d+", result.stderr)
    assert "fix: start `qtop sim` first" in result.stderr


def test_the_help_names_both_simulated_boards_and_the_first_real_board_command():
    result = subprocess.run(
        [sys.executable, "-m", "qtop", "--help"], capture_output=True, text=True, timeout=60
    )
    text = " ".join(result.stdout.split())
    assert "the simulated IQ-9075 board." not in text
    assert "a simulated board (an IQ-9075 EVK, or Snapdragon glasses with --board glasses)" in text
    assert "start with 'qtop probe PROFILE|HOST'" in text
    demo = subprocess.run(
        [sys.executable, "-m", "qtop", "demo", "--help"], capture_output=True, text=True
    )
    assert "--board {evk,glasses}" in demo.stdout


def test_the_sim_glasses_cooldown_still_matches_the_android_nsp_zones():
    from qtop.device.sensors import selected
    from qtop.profiles import load_profile
    from qtop.sim.config import default_config

    names = [zone.name for zone in default_config("glasses").zones]
    for name in ("sim-glasses", "glasses-prismml", "glasses-prismml-thermal"):
        cooldown = load_profile(builtin_profile_dir() / f"{name}.yaml").run.cooldown
        assert cooldown is not None
        for pattern in cooldown.zones:
            assert [n for n in names if selected(n, (pattern,))], (name, pattern)
    assert [n for n in names if selected(n, ("nsp*",))] == [
        "nsphvx-0", "nsphvx-1", "nsphmx-0", "nsphmx-1",
    ]  # fmt: skip
