"""The default sysfs_root on a real /sys layout: the simulated tree mounted over /sys.

In a private mount namespace (``unshare -m`` as root, ``unshare -Urm`` as a
user) the simulated board's tree is bind-mounted over ``/sys``, and qtop runs
there with ``sysfs_root`` left at its default, so it reads
``/sys/class/thermal/...`` exactly as on a board. Where namespaces are not
permitted the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from qtop.device.plan import RunOptions
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.sim import SimBoard
from qtop.sim.config import default_config
from qtop.sim.sysfs import OFFLINE_MC
from qtop.transport.ssh import SSHTarget, SSHTransport

from . import helpers
from .helpers import GLASSES_SHELL
from .recording import check_complete, load, of_kind, record

UNSHARE = shutil.which("unshare") or "unshare"
# Mount the tree given as $0 over /sys, then run the rest (the glasses' PATH has no mount).
_MOUNT_THEN_EXEC = f'{shutil.which("mount") or "mount"} --bind "$0" /sys && exec "$@"'

_NAMESPACE = [UNSHARE, "-m", "--propagation", "private"] if os.geteuid() == 0 else [UNSHARE, "-Urm"]
NETRUN = (
    "qnn-net-run --backend libQnnHtp.so --retrieve_context "
    '"$QTOP_SIM_ROOT/data/local/tmp/prismml/prismml_w8a8_seq64.bin" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" '
    '--output_dir "$QTOP_SIM_ROOT/data/local/tmp/prismml/out" --num_inferences 2'
)


def namespace_problem(tree: Path) -> str | None:
    """Why /sys cannot be replaced in a private mount namespace here, or None."""
    if shutil.which(UNSHARE) is None:
        return "unshare (util-linux) is not installed"
    try:
        result = subprocess.run(
            [*_NAMESPACE, "/bin/sh", "-c", _MOUNT_THEN_EXEC, str(tree), "test", "-d", "/sys/class"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    if result.returncode != 0:
        return f"{' '.join(_NAMESPACE)} cannot mount over /sys here: {result.stderr.strip()}"
    return None


def in_namespace(tree: Path, command: list[str]) -> list[str]:
    return [*_NAMESPACE, "/bin/sh", "-c", _MOUNT_THEN_EXEC, str(tree), *command]


@pytest.fixture(params=["glasses", "evk"])
def board(request, tmp_path) -> Iterator[SimBoard]:
    with SimBoard(tmp_path / "board", variant=request.param, time_scale=20, seed=2) as started:
        problem = namespace_problem(started.sysfs_root)
        if problem:
            pytest.skip(problem)
        yield started


def default_root_profile(board: SimBoard, tmp_path: Path, run: str) -> str:
    """A profile that leaves sysfs_root at its default; EVK power from its meter under /sys."""
    meter = ""
    if board.config.meter is not None:
        meter = (
            ", power_supply: none, power_meter: [{path: /sys/class/hwmon/hwmon0/power1_input, "
            "quantity: power, unit: uW, label: ina226}]"
        )
    return (
        f"name: realsys-{board.variant}\n"
        f"device: {{spool_dir: '{tmp_path / 'spool'}', sample_interval: 50ms{meter}}}\n"
        f"run: {run}\n"
    )


def zone_types(board: SimBoard) -> list[str]:
    config = board.config
    return [raw.name for raw in config.raw_zones] + [zone.name for zone in config.zones]


def temperature_types(board: SimBoard) -> list[str]:
    offline = [raw.name for raw in board.config.raw_zones if raw.reading == "offline"]
    return offline + [zone.name for zone in board.config.zones]


def qtop_in_namespace(board: SimBoard, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **board.session_env()}
    env.pop("QTOP_SIM_SYSFS")  # nothing may find the tree but through /sys
    return subprocess.run(
        in_namespace(board.sysfs_root, [sys.executable, "-m", "qtop", *args]),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_qtop_probe_finds_every_zone_by_type_under_the_default_root(board, tmp_path):
    profile = tmp_path / "realsys.yaml"
    profile.write_text(default_root_profile(board, tmp_path, "{command: ':', iterations: 1}"))
    result = qtop_in_namespace(
        board, tmp_path, "probe", str(profile), "--local", "--json", "--window", "1"
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["sysfs_root"] == "/sys"
    zones = found["thermal_zones"]
    assert [z["type"] for z in zones] == zone_types(board)
    assert all(z["path"].startswith("/sys/class/thermal/thermal_zone") for z in zones)
    by_type = {z["type"]: z for z in zones}
    assert [t for t, z in by_type.items() if z["sampled"]] == temperature_types(board)
    for zone in board.config.zones:
        assert 20 < by_type[zone.name]["temp_c"] < 90
    if board.variant == "glasses":
        offline = by_type["mdmss-0"]
        assert offline["raw"] == str(OFFLINE_MC)
        assert offline["temp_c"] is None and offline["temperature"] and offline["sampled"]
        assert by_type["vbat"]["temperature"] is False
        (battery,) = found["power_sources"]
        assert battery["path"] == "/sys/class/power_supply/battery" and battery["sampled"]
    else:
        (meter,) = found["power_sources"]
        assert meter["path"] == "/sys/class/hwmon/hwmon0/power1_input"
        assert meter["value"] > 5 and meter["sampled"]
    cooling = [c["type"] for c in found["cooling_devices"]]
    assert cooling == [device.name for device in board.config.cooling]
    assert not [p for p in found["problems"] if p["item"] != "npu"]


def test_a_run_under_the_default_root_samples_every_zone_and_null_for_the_dead_one(board, tmp_path):
    profile = tmp_path / "realsys.yaml"
    run = "{command: '" + NETRUN + "', warmup: 1, iterations: 4}"
    profile.write_text(default_root_profile(board, tmp_path, run))
    recording = tmp_path / "realsys.jsonl"
    result = qtop_in_namespace(
        board, tmp_path, "run", str(profile), "--local", "--headless", "--record", str(recording)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    events = load(recording)
    check_complete(events, processes=5, faults=0)
    assert events[0]["device"]["sysfs_root"] == "/sys"
    assert not [e for e in of_kind(events, "log") if e["stream"] == "probe"]
    channels = {c["id"]: c for c in of_kind(events, "channels")[0]["channels"]}
    thermal = [cid for cid, c in channels.items() if c["kind"] == "temperature"]
    assert thermal == [f"thermal/{name}" for name in temperature_types(board)]
    samples = of_kind(events, "sample")
    assert samples
    for name in temperature_types(board):
        values = [s["values"][f"thermal/{name}"] for s in samples]
        if name == "mdmss-0":
            assert values == [None] * len(samples)
        else:
            assert all(v is not None and 20 < v < 120 for v in values)
    if board.variant == "evk":
        power = [s["values"]["meter/ina226/power"] for s in samples]
        assert all(p is not None and p > 5 for p in power)


@pytest.mark.sshd
@pytest.mark.skipif(not os.path.exists(helpers.SSHD), reason=f"{helpers.SSHD} is not installed")
@pytest.mark.skipif(os.geteuid() != 0, reason="sshd in a mount namespace needs root")
async def test_a_run_through_sshd_in_the_namespace_with_the_default_root(tmp_path, monkeypatch):
    config = default_config("glasses")
    with SimBoard(tmp_path / "board", config=config, time_scale=20, seed=3) as board:
        problem = namespace_problem(board.sysfs_root)
        if problem:
            pytest.skip(problem)
        wrapper = tmp_path / "sshd-in-namespace"
        wrapper.write_text(
            "#!/bin/sh\n"
            f"exec {' '.join(_NAMESPACE)} /bin/sh -c '{_MOUNT_THEN_EXEC}' "
            f"'{board.sysfs_root}' {helpers.SSHD} \"$@\"\n"
        )
        wrapper.chmod(0o755)
        monkeypatch.setattr(helpers, "SSHD", str(wrapper))
        env = {k: v for k, v in board.session_env().items() if k != "QTOP_SIM_SYSFS"}
        server = helpers.start_sshd(tmp_path / "sshd", set_env=env)
        try:
            profile = load_profile_text(
                default_root_profile(
                    board, tmp_path, "{command: '" + NETRUN + "', warmup: 1, iterations: 4}"
                )
            )
            target = SSHTarget(
                host=server.host,
                port=server.port,
                user=server.user,
                identity_file=str(server.client_key),
                known_hosts=str(server.known_hosts),
                connect_timeout_s=5.0,
                ssh_config=(),
            )
            source = LiveSource(
                profile, SSHTransport(target), run_options=RunOptions(calibrations=5)
            )
            events = await record(source, tmp_path / "run.jsonl")
        finally:
            server.stop()
    check_complete(events, processes=5, faults=0)
    header = events[0]
    assert header["source"] == "ssh" and header["device"]["sysfs_root"] == "/sys"
    assert header["device"]["shell"] == GLASSES_SHELL  # the glasses' PATH has no bash
    channels = [c["id"] for c in of_kind(events, "channels")[0]["channels"]]
    assert [c for c in channels if c.startswith("thermal/")] == [
        f"thermal/{name}" for name in temperature_types(board)
    ]
    last = of_kind(events, "sample")[-1]["values"]
    assert last["thermal/mdmss-0"] is None
    assert last["thermal/nsphvx-0"] > 20
    assert last["power/battery/voltage"] > 3
