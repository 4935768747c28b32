"""``qtop ops DEVICE --against AIHUB.json``: ops lined up by name, departures from AI Hub found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtop.cli import main

# (AI Hub layer name, compute unit, AI Hub us, AI Hub cycles, device cycles per execute).
# Overall the device spends 8,500 / 3,500 cycles = 2.43x AI Hub's figure; Softmax spends
# 5x, twice the overall ratio: it departs. The Clip is fused in AI Hub, the Resize ran on
# its CPU, and the device has a Gather AI Hub never listed.
LAYERS = [
    ("/net/conv1/Conv", "NPU", 40, 1000, 2000),
    ("/net/conv2/Conv", "NPU", 80, 2000, 4000),
    ("/net/head/Softmax", "npu", 20, 500, 2500),
]
OVERALL = 8500 / 3500


def device_linting(executes: int = 3) -> str:
    """A qnn-profile-viewer linting render whose ops carry QNN's ':OpId_n' names."""
    lines = ["Execute Stats: ", ""]
    for index in range(1, executes + 1):
        lines += [
            f"Execute Stat {index} (graph net)",
            "",
            "Accelerator (execute) time (cycles) : 9000  cycles",
        ]
        for op_id, (name, _unit, _us, _cycles, device) in enumerate(LAYERS, start=10):
            lines += [
                f"    {name}:OpId_{op_id} (cycles) : {device}  cycles",
                "        Wait (Scheduler) time : 10  cycles",
                "        Resources : HVX",
            ]
        lines += [
            "    /net/extra/Gather:OpId_40 (cycles) : 300  cycles",
            "        Wait (Scheduler) time : 5  cycles",
            "        Resources : DMA",
            "Accelerator (execute) time : 420  us",
            "Accelerator (execute excluding wait) time : 400  us",
            "",
        ]
    return "\n".join(lines) + "\n"


def hub_profile() -> dict:
    detail = [
        {"name": name, "type": name.rsplit("/", 1)[-1], "compute_unit": unit,
         "execution_time": us, "execution_cycles": cycles}
        for name, unit, us, cycles, _device in LAYERS
    ]  # fmt: skip
    detail.append({"name": "/net/act/Clip", "type": "Clip", "compute_unit": "NPU",
                   "execution_time": 0, "execution_cycles": 0})  # fmt: skip
    detail.append({"name": "/net/up/Resize", "type": "Resize", "compute_unit": "CPU",
                   "execution_time": 90})  # fmt: skip
    summary = {"estimated_inference_time": 150, "all_inference_times": [900, 150, 170, 160, 165]}
    return {"execution_summary": summary, "execution_detail": detail}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    device = tmp_path / "linting.txt"
    device.write_text(device_linting())
    hub = tmp_path / "aihub.json"
    hub.write_text(json.dumps(hub_profile()))
    return device, hub


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["ops", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_op_the_device_spends_most_beyond_ai_hub_comes_first_and_departs(capsys, files):
    device, hub = files
    code, out, err = run(capsys, str(device), "--against", str(hub), "--json")
    assert code == 0, err
    against = json.loads(out)["against"]
    assert against["unit"] == "cycles"
    assert against["overall_ratio"] == pytest.approx(OVERALL)
    matched = against["matched"]
    assert [m["key"] for m in matched] == ["net/head/Softmax", "net/conv1/Conv", "net/conv2/Conv"]
    softmax = matched[0]
    assert softmax["device"] == 2500 and softmax["hub"] == 500
    assert softmax["departure"] == pytest.approx(5 / OVERALL)
    assert softmax["excess"] == pytest.approx(2500 - 500 * OVERALL)
    assert against["departing"] == ["net/head/Softmax"]
    conv = next(m for m in matched if m["key"] == "net/conv2/Conv")
    assert conv["device_share"] == pytest.approx(4000 / 8500)
    assert conv["hub_share"] == pytest.approx(2000 / 3500)
    assert [op["key"] for op in against["device_only"]] == ["net/extra/Gather"]
    assert [layer["key"] for layer in against["hub_fused"]] == ["net/act/Clip"]
    assert [layer["key"] for layer in against["hub_off_npu"]] == ["net/up/Resize"]
    # The median of AI Hub's runs after its first (warm-up), not its headline (the fastest).
    assert against["hub_median_us"] == (160 + 165) / 2 and against["hub_estimate_us"] == 150
    assert against["device_median_us"] == 420


def test_the_text_names_departures_fallbacks_and_the_headline_trap(capsys, files):
    device, hub = files
    code, out, _ = run(capsys, str(device), "--against", str(hub))
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  /net/")}
    assert rows["/net/head/Softmax"].rstrip().endswith("DEPARTS")
    assert not rows["/net/conv1/Conv"].rstrip().endswith("DEPARTS")
    assert "1 op(s) depart: /net/head/Softmax" in out
    assert "off the NPU (not in an HTP profile): /net/up/Resize" in out
    assert "AI Hub fused 1 layer(s)" in out
    assert "only on the device: /net/extra/Gather" in out
    assert "headline estimate 150 us is the fastest run" in out


def test_files_that_share_no_op_are_refused_with_the_names_of_each(capsys, tmp_path):
    device = tmp_path / "linting.txt"
    device.write_text(device_linting())
    hub = tmp_path / "other.json"
    hub.write_text(json.dumps({"execution_detail": [
        {"name": "/other/model/Conv", "type": "Conv", "compute_unit": "NPU",
         "execution_time": 5, "execution_cycles": 50},
    ]}))  # fmt: skip
    code, _, err = run(capsys, str(device), "--against", str(hub))
    assert code == 2
    assert "no op of" in err and "net/conv1/Conv" in err and "other/model/Conv" in err
    assert "AI Hub's profile of the model the device ran" in err


def test_an_against_file_that_is_not_ai_hub_json_is_a_clean_error(capsys, files, tmp_path):
    device, _ = files
    code, _, err = run(capsys, str(device), "--against", str(device))
    assert code == 2
    assert "Traceback" not in err and str(device) in err


def test_hostile_layer_names_reach_the_terminal_escaped(capsys, tmp_path):
    device = tmp_path / "linting.txt"
    device.write_text(device_linting().replace("/net/head/Softmax", "/net/head/Soft\x1b]0;x\x07"))
    hub = tmp_path / "aihub.json"
    profile = hub_profile()
    profile["execution_detail"][2]["name"] = "/net/head/Soft\x1b]0;x\x07"
    hub.write_text(json.dumps(profile))
    code, out, _ = run(capsys, str(device), "--against", str(hub))
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "Soft\\x1b]0;x\\x07" in out
