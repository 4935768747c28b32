"""A device without the sensors the profile asked for: said in the stream, headless and after."""

from __future__ import annotations

import json

from qtop.record.reader import open_recording
from qtop.stats.model import PROBE_STREAM, SessionModel

from .recording import load
from .test_cli_live import qtop


def bare_tree(tmp_path):
    """A sysfs root with the class directories a kernel always has, and nothing in them."""
    root = tmp_path / "sys"
    for name in ("thermal", "power_supply", "hwmon"):
        (root / "class" / name).mkdir(parents=True)
    return root


def test_a_run_without_zones_cooling_or_power_says_so_with_the_fix(tmp_path):
    root = bare_tree(tmp_path)
    profile = tmp_path / "bare.yaml"
    profile.write_text(
        "name: bare\n"
        f"device: {{sysfs_root: '{root}', spool_dir: '{tmp_path / 'spool'}', "
        "sample_interval: 50ms}\n"
        "run: {command: 'sleep 0.01', warmup: 0, iterations: 3}\n"
    )
    recording = tmp_path / "bare.jsonl"
    process = qtop(
        "run", str(profile), "--local", "--headless", "--record", str(recording), cwd=tmp_path
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err

    expected = [
        f"device.thermal_zones: no thermal zone with a temperature in {root}/class/thermal; the "
        f"run records no temperatures; fix: check 'ls {root}/class/thermal' on the device "
        "(thermal drivers not loaded, or the directory hidden from this user or container); "
        "set thermal_zones: none to run without temperatures",
        f"device.cooling_devices: no cooling device in {root}/class/thermal; throttling (cdsp "
        f"cur_state) cannot be seen; fix: check 'ls -d {root}/class/thermal/cooling_device*' "
        "on the device; set cooling_devices: none on a board that has none",
        "device.power_supply: no power source: no supply of type Battery in "
        f"{root}/class/power_supply (found: none) and no power_meter; energy per inference "
        "cannot be measured; fix: add a power_meter (an INA2xx hwmon power*_input: 'qtop "
        "probe' lists the hwmon devices), or set power_supply: none on a board without power "
        "telemetry",
    ]
    lines = out.splitlines()
    # Headless: each as it arrives, and again in the summary.
    for text in expected:
        assert f"warning: [probe] {text}" in lines
        assert f"  warning: {text}" in lines

    events = load(recording)
    logged = [e for e in events if e["kind"] == "log" and e["stream"] == PROBE_STREAM]
    assert [(e["level"], e["text"]) for e in logged] == [("warning", t) for t in expected]

    # A replay folds the same warnings into the model, and keyframes keep them.
    model = SessionModel()
    for event in open_recording(recording).events():
        model.apply(event)
    assert model.probe_warnings == expected
    restored = SessionModel()
    restored.restore(json.loads(json.dumps(model.snapshot())))
    assert restored.probe_warnings == expected

    report = qtop("report", str(recording), cwd=tmp_path)
    report_out, report_err = report.communicate(timeout=60)
    assert report.returncode == 0, report_err
    for text in expected:
        assert f"  warning: {text}" in report_out.splitlines()


def test_a_device_with_what_was_asked_gets_no_probe_warning(tmp_path):
    from .helpers import make_sysfs

    root = make_sysfs(tmp_path / "sys")
    profile = tmp_path / "full.yaml"
    profile.write_text(
        "name: full\n"
        f"device: {{sysfs_root: '{root}', spool_dir: '{tmp_path / 'spool'}', "
        "sample_interval: 50ms}\n"
        "run: {command: 'sleep 0.01', warmup: 0, iterations: 2}\n"
    )
    recording = tmp_path / "full.jsonl"
    process = qtop(
        "run", str(profile), "--local", "--headless", "--record", str(recording), cwd=tmp_path
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "[probe]" not in out
    events = load(recording)
    assert not [e for e in events if e["kind"] == "log" and e["stream"] == PROBE_STREAM]
