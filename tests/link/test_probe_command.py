"""`qtop probe` as a user runs it: against both simulated boards, this machine and real sshd."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from qtop.profiles import builtin_profile_dir
from qtop.sim import SimBoard, start_sim
from qtop.sim.config import default_config
from qtop.sim.tools.profiling_log import SDK_VERSION

from . import helpers

PYTHON = sys.executable
WINDOW = "4"


def sim_profile(sim, name: str, tmp_path: Path) -> Path:
    """The shipped simulator profile, pointed at this simulator's port, keys and a private spool."""
    text = (builtin_profile_dir() / f"{name}.yaml").read_text()
    text = re.sub(r"(?m)^  port: .*$", f"  port: {sim.port}", text)
    text = re.sub(r"(?m)^  identity_file: .*$", f"  identity_file: {sim.client_key_path}", text)
    text = re.sub(
        r"(?m)^  known_hosts: .*$",
        f"  known_hosts: {sim.known_hosts_path}\n  spool_dir: {tmp_path / 'spool'}",
        text,
    )
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


async def qtop(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The real command line, in a subprocess, while this event loop keeps serving the sim."""
    process = await asyncio.create_subprocess_exec(
        PYTHON,
        "-m",
        "qtop",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    return process.returncode or 0, out.decode(), err.decode()


def not_about_the_npu(problems: list[dict]) -> list[dict]:
    # The simulated boards share this machine's processes: another test's
    # simulated qnn-net-run may hold "the NPU" at any moment.
    return [p for p in problems if p["item"] != "npu"]


def check_zones(found: dict, sim, trips: list[tuple[str, float, float]]) -> dict[str, dict]:
    config = sim.board.config
    types = [raw.name for raw in config.raw_zones] + [zone.name for zone in config.zones]
    zones = found["thermal_zones"]
    assert [z["type"] for z in zones] == types
    root = str(sim.sysfs_root)
    assert [z["path"] for z in zones] == [
        f"{root}/class/thermal/thermal_zone{i}" for i in range(len(types))
    ]
    by_type = {z["type"]: z for z in zones}
    for zone in config.zones:
        entry = by_type[zone.name]
        assert entry["temperature"] is True and entry["quantity"] is None
        assert entry["sampled"] is True
        assert 20 < entry["temp_c"] < 80
        assert entry["temp_c"] == int(entry["raw"]) / 1000
        assert [(t["type"], t["temp_c"], t["hyst_c"]) for t in entry["trips"]] == trips
    cooling = found["cooling_devices"]
    assert [(c["type"], c["cur_state"], c["sampled"]) for c in cooling] == [
        (device.name, 0, True) for device in config.cooling
    ]
    maximum = {device.name: device.max_state for device in config.cooling}
    maximum["cdsp"] = config.thermal.cdsp_max_state
    assert {c["type"]: c["max_state"] for c in cooling} == maximum
    return by_type


def check_tools(found: dict, sim) -> None:
    tools = found["tools"]
    bin_dir = sim.board.bin_dir
    assert tools["qnn-net-run"]["path"] == f"{bin_dir}/qnn-net-run"
    assert tools["qnn-net-run"]["version"] == SDK_VERSION.removeprefix("v")
    assert tools["qnn-profile-viewer"] == {"path": f"{bin_dir}/qnn-profile-viewer"}
    assert tools["genie-t2t-run"] == {"path": f"{bin_dir}/genie-t2t-run"}
    assert tools["qnn_sdk_root"] is None


async def test_probe_json_on_the_simulated_glasses(tmp_path):
    async with start_sim(tmp_path / "sim", variant="glasses", time_scale=1, seed=4) as sim:
        profile = sim_profile(sim, "sim-glasses", tmp_path)
        status, out, err = await qtop("probe", str(profile), "--json", "--window", WINDOW)
    assert status == 0, err
    found = json.loads(out)
    assert (found["format"], found["version"], found["can_run"]) == ("qtop-probe", 1, True)
    assert found["target"] == {
        "profile": "sim-glasses",
        "host": "127.0.0.1",
        "transport": f"ssh 127.0.0.1:{sim.port}",
    }
    assert found["device"]["soc"] == "AR1"
    assert found["device"]["model"].startswith("Snapdragon AR1 Gen 1 smart glasses")
    # Android-like: no bash, no python3, so the agent runs in sh (mksh, 32-bit
    # arithmetic, where installed: Android's own) and setsid starts the run.
    mksh = shutil.which("mksh")
    assert found["shell"] == {
        "agent": "sh",
        "sh": os.path.realpath(mksh or "/bin/sh"),
        "bash": None,
        "launcher": "setsid",
        "sigint": "ignored",
        "setsid": True,
        "python3": False,
        "arith_bits": 32 if mksh else 64,
    }
    assert found["clock"]["runner"] == "date" and found["clock"]["runner_resolution_s"] == 1e-6
    assert found["clock"]["sampler"] == "uptime" and found["clock"]["sampler_resolution_s"] == 0.01
    # Android has no systemd: nothing says whether NTP has set the clock, and nothing is warned.
    assert found["clock"]["ntp_synchronized"] is None
    assert not [p for p in found["problems"] if p["item"] == "clock"]
    assert found["spool"] == {"path": str(tmp_path / "spool"), "writable": True, "error": None}
    assert found["sysfs_root"] == str(sim.sysfs_root)

    by_type = check_zones(
        found, sim, [("passive", 95.0, 5.0), ("passive", 105.0, 5.0), ("critical", 125.0, 1.0)]
    )
    assert by_type["mdmss-0"] == {
        "path": f"{sim.sysfs_root}/class/thermal/thermal_zone3",
        "type": "mdmss-0",
        "raw": "-273000",
        "temp_c": None,
        "temperature": True,
        "quantity": None,
        "trips": [],
        "sampled": True,
    }
    # 100 - the battery's state of charge: 87 % at the start, a fraction less by now.
    assert 13 <= int(by_type["socd"]["raw"]) <= 15
    assert by_type["socd"]["quantity"] == "battery state-of-charge drop, %"
    assert 3800 < int(by_type["vbat"]["raw"]) < 4400
    assert by_type["vbat"]["quantity"] == "battery voltage, mV"
    assert by_type["ibat-lvl0"]["quantity"] == "battery current, mA"
    assert not any(by_type[name]["sampled"] for name in ("socd", "vbat", "ibat-lvl0"))

    (battery,) = found["power_sources"]
    assert battery["kind"] == "supply" and battery["name"] == "battery"
    assert battery["type"] == "Battery" and battery["sampled"] is True
    assert battery["path"] == f"{sim.sysfs_root}/class/power_supply/battery"
    readings = battery["readings"]
    assert readings["status"] == {"raw": "Discharging", "value": "Discharging"}
    current = int(readings["current_now"]["raw"])
    assert readings["current_now"]["value"] == current / 1e6
    assert 0.1 < abs(current / 1e6) < 0.2
    assert 3.8 < readings["voltage_now"]["value"] < 4.4
    if current < 0:
        assert battery["current_sign"] == "negative while discharging (the kernel ABI)"
    else:
        assert battery["current_sign"].startswith("positive while discharging (inverted")
    refresh = battery["refresh"]
    assert refresh["file"] == f"{battery['path']}/current_now"
    assert refresh["changes"] >= 2 and 0.6 <= refresh["period_s"] <= 1.6
    assert refresh["note"].startswith("refreshes about every")
    assert found["hwmon"] == []
    (policy,) = sim.board.config.cpufreq
    (cpufreq,) = found["cpufreq"]
    assert cpufreq == {
        "path": f"{sim.sysfs_root}/devices/system/cpu/cpufreq/policy0",
        "name": "policy0",
        "cur_mhz": cpufreq["cur_mhz"],
        "sampled": True,
    }
    # Idle, or still at the busy clock the probe's own `qnn-net-run --version` raised:
    # the simulated governor lowers it at its next 50 ms step, later on a loaded machine.
    assert cpufreq["cur_mhz"] in (policy.idle_khz / 1000, policy.busy_khz / 1000)
    check_tools(found, sim)
    assert found["npu"]["processes_scanned"] > 0
    assert not_about_the_npu(found["problems"]) == []


async def test_probe_json_on_the_simulated_evk_shows_its_meter(tmp_path):
    async with start_sim(tmp_path / "sim", variant="evk", time_scale=20, seed=4) as sim:
        profile = sim_profile(sim, "sim-evk", tmp_path)
        status, out, err = await qtop("probe", str(profile), "--json", "--window", WINDOW)
    assert status == 0, err
    found = json.loads(out)
    assert found["can_run"] is True and found["device"]["soc"] == "QCS9075"
    assert found["shell"]["agent"].startswith("bash 5")
    assert found["shell"]["launcher"] == "bash job control + setsid"
    assert found["shell"]["sigint"] == "default"
    assert (found["clock"]["runner"], found["clock"]["sampler"]) == ("epoch", "epoch")
    # The EVK runs systemd, whose timedatectl says NTP has set its clock.
    assert found["clock"]["ntp_synchronized"] is True
    check_zones(
        found, sim, [("passive", 105.0, 5.0), ("passive", 115.0, 5.0), ("critical", 125.0, 1.0)]
    )
    hwmon = f"{sim.sysfs_root}/class/hwmon/hwmon0"
    assert found["hwmon"] == [
        {
            "path": hwmon,
            "name": "ina226",
            "inputs": ["curr1_input", "in0_input", "in1_input", "power1_input"],
        }
    ]
    meters = found["power_sources"]
    assert [(m["kind"], m["name"], m["quantity"], m["unit"]) for m in meters] == [
        ("meter", "ina226", "power", "uW"),
        ("meter", "ina226", "current", "mA"),
        ("meter", "ina226", "voltage", "mV"),
    ]
    assert [m["path"] for m in meters] == [
        f"{hwmon}/power1_input",
        f"{hwmon}/curr1_input",
        f"{hwmon}/in1_input",
    ]
    assert [m["profile_path"] for m in meters] == [
        "/sys/class/hwmon/hwmon0/power1_input",
        "/sys/class/hwmon/hwmon0/curr1_input",
        "/sys/class/hwmon/hwmon0/in1_input",
    ]
    assert all(m["sampled"] for m in meters)
    power, current, voltage = (m["value"] for m in meters)
    assert power == pytest.approx(int(meters[0]["raw"]) / 1e6) and 8 < power < 20
    assert 11.5 < voltage <= 12.0
    # One conversion, three files: read a few ms apart, they agree to the meter's noise.
    assert power == pytest.approx(current * voltage, rel=0.05)
    assert meters[0]["refresh"]["period_s"] <= 0.3
    check_tools(found, sim)
    assert not_about_the_npu(found["problems"]) == []


async def test_an_evk_whose_clock_ntp_has_not_set_is_warned_of_over_ssh(tmp_path):
    config = replace(default_config("evk"), ntp_synchronized=False)
    async with start_sim(tmp_path / "sim", config=config, time_scale=20, seed=4) as sim:
        profile = sim_profile(sim, "sim-evk", tmp_path)
        status, out, err = await qtop("probe", str(profile), "--json", "--window", "0")
    assert status == 0, err
    found = json.loads(out)
    assert found["clock"]["ntp_synchronized"] is False
    (clock,) = [p for p in found["problems"] if p["item"] == "clock"]
    assert clock["severity"] == "warning" and "NTPSynchronized=no" in clock["problem"]
    assert found["can_run"] is True


async def test_a_running_htp_tool_is_reported_as_holding_the_npu(tmp_path):
    async with start_sim(tmp_path / "sim", variant="glasses", time_scale=20, seed=4) as sim:
        profile = sim_profile(sim, "sim-glasses", tmp_path)
        netrun = subprocess.Popen(
            [
                str(sim.board.bin_dir / "qnn-net-run"),
                "--backend",
                "libQnnHtp.so",
                "--retrieve_context",
                f"{sim.sim_root}/data/local/tmp/prismml/prismml_w8a8_seq64.bin",
                "--input_list",
                f"{sim.sim_root}/data/local/tmp/prismml/inputs.txt",
                "--output_dir",
                str(tmp_path / "out"),
                "--num_inferences",
                "1000000",
            ],
            env={**os.environ, **sim.session_env()},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            status, out, err = await qtop("probe", str(profile), "--json", "--window", "0")
        finally:
            os.killpg(netrun.pid, signal.SIGKILL)
            netrun.wait()
    assert status == 0, err
    found = json.loads(out)
    assert found["npu"]["busy"] is True
    assert {"pid": netrun.pid, "command": "qnn-net-run", "reason": "tool"} in found["npu"][
        "holders"
    ]
    problem = next(p for p in found["problems"] if f"process {netrun.pid} " in p["problem"])
    assert problem["severity"] == "warning" and problem["item"] == "npu"
    assert problem["fix"] == f"wait for it to finish, or stop it (kill {netrun.pid})"
    assert found["can_run"] is True


async def test_probe_text_shows_the_verdict_sections_and_fixes(tmp_path):
    async with start_sim(tmp_path / "sim", variant="glasses", time_scale=20, seed=4) as sim:
        profile = sim_profile(sim, "sim-glasses", tmp_path)
        status, out, err = await qtop("probe", str(profile), "--window", "2")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == f"qtop probe: profile sim-glasses over ssh 127.0.0.1:{sim.port}"
    assert lines[1].startswith("qtop can run here")
    assert any(line.startswith("shell     agent runs in sh (") for line in lines)
    assert any("mdmss-0" in line and "reads -273000 (offline or failing)" in line for line in lines)
    assert any(
        "vbat" in line and "not a temperature: battery voltage, mV" in line for line in lines
    )
    assert any(line.strip().startswith("current sign: ") for line in lines)
    assert "thermal zones: 18 temperature(s), 3 other" in lines


def test_probe_refuses_to_guess_without_a_target(tmp_path):
    result = subprocess.run(
        [PYTHON, "-m", "qtop", "probe"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "name a PROFILE or a HOST to probe (or --local for this machine)" in result.stderr


def test_device_text_cannot_reach_the_terminal(tmp_path):
    root = tmp_path / "sys"
    zone = root / "class/thermal/thermal_zone0"
    zone.mkdir(parents=True)
    (zone / "type").write_text("evil\x1b[2J\x07zone\n")
    (zone / "temp").write_text("41000\n")
    profile = tmp_path / "evil.yaml"
    profile.write_text(
        "name: evil\n"
        f"device: {{sysfs_root: '{root}', spool_dir: '{tmp_path / 'spool'}', "
        "cooling_devices: none, power_supply: none}\n"
        "run: {command: ':', iterations: 1}\n"
    )
    result = subprocess.run(
        [PYTHON, "-m", "qtop", "probe", str(profile), "--local", "--window", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "evil\\x1b[2J\\x07zone" in result.stdout


@pytest.mark.sshd
@pytest.mark.skipif(not os.path.exists(helpers.SSHD), reason=f"{helpers.SSHD} is not installed")
def test_probe_a_host_by_its_ssh_config_alias_and_a_profile_through_it(tmp_path):
    with SimBoard(tmp_path / "board", variant="glasses", time_scale=20, seed=5) as board:
        server = helpers.start_sshd(tmp_path / "sshd", set_env=board.session_env())
        try:
            home = tmp_path / "home"
            (home / ".ssh").mkdir(parents=True)
            (home / ".ssh/config").write_text(
                "Host glassboard\n"
                f"  HostName {server.host}\n"
                f"  Port {server.port}\n"
                f"  User {server.user}\n"
                f"  IdentityFile {server.client_key}\n"
            )
            (home / ".ssh/known_hosts").write_text(server.host_key_line + "\n")
            env = {**os.environ, "HOME": str(home)}
            bare = subprocess.run(
                [PYTHON, "-m", "qtop", "probe", "glassboard", "--json", "--window", "0"],
                capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
            )  # fmt: skip
            profile = tmp_path / "glasses-over-sshd.yaml"
            profile.write_text(
                "name: glasses-over-sshd\n"
                "device: {host: glassboard, sysfs_root: $QTOP_SIM_SYSFS, "
                f"spool_dir: '{tmp_path / 'spool'}'}}\n"
                "run: {command: 'qnn-net-run --version', iterations: 1}\n"
            )
            named = subprocess.run(
                [PYTHON, "-m", "qtop", "probe", str(profile), "--json", "--window", "0"],
                capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
            )  # fmt: skip
        finally:
            server.stop()
    assert bare.returncode == 0, bare.stderr
    found = json.loads(bare.stdout)
    # A bare host gets the default device settings: /sys itself, the per-user spool under
    # the board's own TMPDIR.
    assert found["target"] == {
        "profile": None,
        "host": "glassboard",
        "transport": "ssh glassboard",
    }
    assert found["sysfs_root"] == "/sys"
    assert found["spool"]["path"] == f"{board.sim_root}/tmp/qtop-{os.getuid()}"
    assert found["tools"]["qnn-net-run"]["path"] == f"{board.bin_dir}/qnn-net-run"

    assert named.returncode == 0, named.stderr
    found = json.loads(named.stdout)
    assert found["target"]["profile"] == "glasses-over-sshd"
    assert found["sysfs_root"] == str(board.sysfs_root)
    types = [z["type"] for z in found["thermal_zones"]]
    assert types[:4] == ["socd", "vbat", "ibat-lvl0", "mdmss-0"] and "nsphvx-0" in types
    assert found["shell"]["bash"] is None and found["shell"]["agent"] == "sh"
    assert not_about_the_npu(found["problems"]) == []


@pytest.mark.skipif(shutil.which("mksh") is None, reason="mksh is not installed")
def test_a_32_bit_sh_without_bash_is_said_by_probe_and_runs(tmp_path):
    """mksh, Android's sh, computes in 32 bits: the agent keeps its times as text and runs."""
    from qtop.sim.board import install_android_tools

    tools = tmp_path / "bin"
    install_android_tools(tools)
    (tools / "sh").unlink()
    (tools / "sh").symlink_to(shutil.which("mksh"))
    root = helpers.make_sysfs(tmp_path / "sys")
    profile = tmp_path / "mksh.yaml"
    profile.write_text(
        "name: mksh\n"
        f"device: {{sysfs_root: '{root}', spool_dir: '{tmp_path / 'spool'}'}}\n"
        "run: {command: ':', iterations: 2}\n"
    )
    env = {"PATH": str(tools), "HOME": str(tmp_path)}
    probe = subprocess.run(
        [PYTHON, "-m", "qtop", "probe", str(profile), "--local", "--json", "--window", "0"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert found["shell"]["arith_bits"] == 32 and found["shell"]["bash"] is None
    assert found["can_run"] is True
    assert [p for p in found["problems"] if p["severity"] == "error"] == []
    run = subprocess.run(
        [PYTHON, "-m", "qtop", "run", str(profile), "--local", "--headless", "--no-record"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "run completed" in run.stdout + run.stderr
