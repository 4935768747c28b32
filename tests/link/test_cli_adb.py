"""`qtop demo --adb`, `qtop run --adb SERIAL` and `qtop sim --adb` as a user runs them."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess

from adb_support import adb_sim, needs_adb, no_adb_server_started

from .test_cli_live import PYTHON, qtop, records

pytestmark = needs_adb


def test_demo_over_adb_runs_headless_through_the_real_adb_client(tmp_path):
    with no_adb_server_started():
        process = qtop(
            "demo", "--adb", "--headless", "--warmup", "0", "--iterations", "3", "--record",
            str(tmp_path / "demo.jsonl"), cwd=tmp_path,
        )  # fmt: skip
        out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert re.search(r"simulated board on adb server 127\.0\.0\.1:\d+, device QTOPSIM0001", out)
    assert "started on adb QTOPSIM0001" in out
    assert out.splitlines()[-1] == "run completed"
    events = records(tmp_path / "demo.jsonl")
    header = events[0]
    assert header["device"]["transport"] == "adb QTOPSIM0001"
    device = header["profile"]["device"]
    assert (device["transport"], device["serial"], device["host"]) == ("adb", "QTOPSIM0001", None)
    iterations = [e for e in events if e["kind"] == "iteration"]
    assert len(iterations) == 3 and all(i["exit_status"] == 0 for i in iterations)


async def test_run_with_adb_takes_an_ssh_profile_over_adb_and_pushes_its_payload(tmp_path):
    payload = tmp_path / "artifacts"
    payload.mkdir()
    (payload / "model.bin").write_bytes(b"\x01\x02" * 5000)
    (payload / "inputs.txt").write_text("in.raw\n")
    device_dir = tmp_path / "device" / "prismml"
    async with adb_sim(tmp_path / "sim", variant="glasses", time_scale=20) as sim:
        ssh = sim.device_overrides()
        profile = tmp_path / "glasses.yaml"
        profile.write_text(
            "name: cliadb\n"
            "device:\n"
            f"  host: {ssh['host']}\n"
            f"  port: {ssh['port']}\n"
            f"  adb_server: '{sim.adb.address}'\n"
            "  sysfs_root: $QTOP_SIM_SYSFS\n"
            f"  spool_dir: {ssh['spool_dir']}\n"
            "  sample_interval: 50ms\n"
            "run:\n"
            f"  command: cat {device_dir}/inputs.txt\n"
            "  warmup: 0\n"
            "  iterations: 3\n"
            "  min_iterations: 3\n"
            f"  push: [{{from: artifacts/, to: {device_dir}/}}]\n"
        )

        def run_qtop(record: str) -> tuple[int, str, str]:
            process = qtop(
                "run", str(profile), "--adb", sim.adb.serial, "--headless", "--record",
                str(tmp_path / record), cwd=tmp_path,
            )  # fmt: skip
            out, err = process.communicate(timeout=120)
            return process.returncode, out, err

        status, out, err = await asyncio.to_thread(run_qtop, "first.jsonl")
        assert status == 0, err
        assert "started on adb QTOPSIM0001" in out
        assert (device_dir / "model.bin").read_bytes() == (payload / "model.bin").read_bytes()
        notes = [e["text"] for e in records(tmp_path / "first.jsonl") if e["kind"] == "log"]
        assert any(n.startswith("push: 2 file(s) copied (10.0 kB, adb push)") for n in notes)
        status, out, err = await asyncio.to_thread(run_qtop, "second.jsonl")
        assert status == 0, err
        notes = [e["text"] for e in records(tmp_path / "second.jsonl") if e["kind"] == "log"]
        assert any(n.startswith("push: 0 file(s) copied (0 B), 2 already") for n in notes)
        stdout = [e["text"] for e in records(tmp_path / "second.jsonl") if e["kind"] == "log"]
        assert "in.raw" in stdout


def test_sim_with_adb_serves_the_real_client_until_ctrl_c(tmp_path):
    with no_adb_server_started():
        process = subprocess.Popen(
            [PYTHON, "-m", "qtop", "sim", "--adb", "--adb-port", "0", "--port", "0",
             "--state-dir", str(tmp_path / "state")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        )  # fmt: skip
        try:
            lines = []
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line)
                if line.startswith("Ctrl-C stops"):
                    break
            announced = r"simulated adb server on 127\.0\.0\.1:(\d+), device (\S+)"
            found = re.search(announced, "".join(lines))
            assert found, "".join(lines)
            port, serial = found.groups()
            listed = subprocess.run(
                ["adb", "-H", "127.0.0.1", "-P", port, "devices"],
                capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert f"{serial}\tdevice" in listed.stdout
        finally:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=60)
    assert process.returncode == 0
    assert "profile snippet (adb):\ndevice:\n  transport: adb\n" in "".join(lines)
