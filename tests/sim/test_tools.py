"""The simulated tools, run by a real shell with the board's session environment."""

from __future__ import annotations

import json
import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

from qtop.sim import SimBoard, read_ground_truth
from qtop.sim.config import GenieConfig
from qtop.sim.tools.profiling_log import read_log
from qtop.sim.tools.render_text import render_text

from .helpers import BoardShell, fixed_config

CTX_LIST = "$QTOP_SIM_ROOT/tmp/optrace-blog/ctx_list.yaml"
BACKEND_CONFIG = "$QTOP_SIM_ROOT/tmp/optrace-blog/backend_extension_config.json"
CONV = "$QTOP_SIM_ROOT/models/conv_relu"


def netrun_linting(output_dir: str, inferences: int = 5, extra: str = "") -> str:
    return (
        f"qnn-net-run --backend libQnnHtp.so --retrieve_context_list {CTX_LIST} "
        f"--config_file {BACKEND_CONFIG} --profiling_level backend "
        f"--num_inferences {inferences} --output_dir {output_dir} {extra}"
    )


def wait_for(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


def test_netrun_prints_the_real_stdout_and_sleeps_the_model_median(
    shell: BoardShell, evk_board: SimBoard, tmp_path: Path
) -> None:
    out = tmp_path / "netrun"
    result = shell.run(netrun_linting(str(out)))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("qnn-net-run pid:")
    assert lines[1:] == [
        "qnn-net-run build version: v2.45.0.260326154327_131419",
        "qnn-net-run log level is : QNN_LOG_LEVEL_ERROR",
        "Processing inference input(s):",
        "Creating context from binary file: "
        f"{evk_board.sim_root}/opt/qc-ai/models/qwen2.5-7b-local-6split/"
        "qwen2_5_7b_instruct_part_1_of_6.bin",
        "Executing Graphs",
        "Finished Executing Graphs",
    ]
    (record,) = read_ground_truth(evk_board.ground_truth_path)
    assert record["tool"] == "qnn-net-run"
    assert record["pid"] == int(lines[0].split(":")[1])
    assert record["latencies_us"] == [2271] * 5
    assert record["cdsp_state"] == [0] * 5
    assert record["outcome"] == "ok" and record["exit_status"] == 0
    assert record["planned_s"] == pytest.approx(0.005 + 5 * 0.002271 + 0.001)
    assert record["planned_s"] <= record["wall_s"] < record["planned_s"] + 0.05
    # The clock starts before the request arrives by the script's own measured overhead.
    assert record["start"] < record["end"] and record["tool_started"] < record["end"]
    assert record["profiling_logs"] == [str(out / "qnn-profiling-data-qwen_decode_0.log")]


def test_the_profiling_log_is_binary_and_rendered_by_the_viewer(
    shell: BoardShell, tmp_path: Path
) -> None:
    out = tmp_path / "netrun"
    assert shell.run(netrun_linting(str(out), inferences=3)).returncode == 0
    log = out / "qnn-profiling-data-qwen_decode_0.log"
    assert b"\0" in log.read_bytes()[:16]
    viewer = shell.run(
        f"cd {out} && qnn-profile-viewer --reader libQnnHtpProfilingReader.so "
        f"--input_log {log.name}"
    )
    assert viewer.returncode == 0, viewer.stderr
    text = viewer.stdout
    assert text.count("Execute Stat ") == 3
    assert "Execute Stat 3 (graph token_ar1_cl4096_1_of_6)" in text
    assert text.count("QNN (execute) time : 2268  us") == 3
    assert "        Wait (Scheduler) time : " in text
    assert f"Input Log File Location: {log.name}\n" in text


def test_a_second_htp_user_fails_with_the_fastrpc_error(
    shell: BoardShell, evk_board: SimBoard, tmp_path: Path
) -> None:
    first = shell.popen(
        netrun_linting(str(tmp_path / "a"), extra="").replace("--num_inferences 5", "--duration 3")
    )
    try:
        wait_for(lambda: evk_board.npu.owner is not None)
        second = shell.run(netrun_linting(str(tmp_path / "b")))
        assert second.returncode == 1
        assert second.stderr.splitlines() == [
            "fastrpc memory map for fd: 49 with length: 704643072 failed with error: 0x1",
            "Failed to map weights buffer to device! err: 1002",
            "Could not create context from binary.",
        ]
        assert not (tmp_path / "b").exists()
    finally:
        first.kill()
        first.wait()


def test_a_killed_netrun_writes_no_log_and_frees_the_npu(
    shell: BoardShell, evk_board: SimBoard, tmp_path: Path
) -> None:
    out = tmp_path / "killed"
    process = shell.popen(
        "exec " + netrun_linting(str(out)).replace("--num_inferences 5", "--duration 5")
    )
    wait_for(lambda: evk_board.npu.owner is not None)
    process.send_signal(signal.SIGKILL)
    process.wait()
    wait_for(lambda: evk_board.npu.owner is None)
    wait_for(lambda: len(read_ground_truth(evk_board.ground_truth_path)) == 1)
    (record,) = read_ground_truth(evk_board.ground_truth_path)
    assert record["outcome"] == "killed" and record["exit_status"] is None
    assert not list(out.glob("qnn-profiling-data*"))


def _genie_board(tmp_path: Path, tokens: int) -> SimBoard:
    genie = GenieConfig(
        init_ms=20.0, generated_tokens=tokens, decode_tokens_per_s=50.0, free_ms=5.0
    )
    return SimBoard(tmp_path / "genie", config=replace(fixed_config("evk"), genie=genie))


GENIE = (
    "exec genie-t2t-run -c $QTOP_SIM_ROOT/tmp/optrace-blog/genie_config_run.json "
    "--prompt_file $QTOP_SIM_ROOT/tmp/optrace-blog/prompt.txt --profile {profile}"
)


def test_genie_streams_tokens_and_writes_its_profile_at_exit(tmp_path: Path) -> None:
    profile = tmp_path / "gp.json"
    with _genie_board(tmp_path, tokens=3) as board:
        result = BoardShell(board).run(GENIE.format(profile=profile))
        truth = read_ground_truth(board.ground_truth_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Using libGenie.so version 1.17.0\n\n[BEGIN]: ready The answer[END]\n"
    events = json.loads(profile.read_text())["components"][0]["events"]
    assert [e["type"] for e in events] == [
        "GenieDialog_create",
        "GenieDialog_query",
        "GenieDialog_free",
    ]
    query = events[1]
    assert query["num-prompt-tokens"] == {"value": 8, "unit": ""}
    assert query["time-to-first-token"] == {"value": 166493, "unit": "us"}
    assert query["num-generated-tokens"] == {"value": 3, "unit": ""}
    assert query["token-generation-time"] == {"value": 60000, "unit": "us"}
    assert truth[0]["ttft_us"] == 166493 and truth[0]["generated_tokens"] == 3


def test_genie_sigterm_ends_the_query_and_still_writes_the_profile(tmp_path: Path) -> None:
    profile = tmp_path / "gp.json"
    with _genie_board(tmp_path, tokens=10_000) as board:
        process = BoardShell(board).popen(GENIE.format(profile=profile))
        wait_for(lambda: board.npu.owner is not None)
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        stdout, _ = process.communicate(timeout=10)
        (record,) = read_ground_truth(board.ground_truth_path)
    assert process.returncode == 0
    assert stdout.endswith("[END]\n")
    assert record["outcome"] == "interrupted" and record["signal"] == "TERM"
    query = json.loads(profile.read_text())["components"][0]["events"][1]
    assert 0 < query["num-generated-tokens"]["value"] == record["generated_tokens"] < 10_000


def test_a_killed_genie_leaves_no_profile(tmp_path: Path) -> None:
    profile = tmp_path / "gp.json"
    with _genie_board(tmp_path, tokens=10_000) as board:
        process = BoardShell(board).popen(GENIE.format(profile=profile))
        wait_for(lambda: board.npu.owner is not None)
        process.send_signal(signal.SIGKILL)
        process.wait()
        wait_for(lambda: len(read_ground_truth(board.ground_truth_path)) == 1)
        (record,) = read_ground_truth(board.ground_truth_path)
    assert record["outcome"] == "killed"
    assert not profile.exists()


def test_optrace_needs_its_schematic(shell: BoardShell, tmp_path: Path) -> None:
    out = tmp_path / "optrace"
    run = shell.run(
        f"qnn-net-run --backend libQnnHtp.so --retrieve_context {CONV}/qnn_model_float_optrace.bin "
        f"--input_list {CONV}/input_list_float_abs.txt --profiling_level detailed "
        f"--profiling_option optrace --num_inferences 3 --output_dir {out}"
    )
    assert run.returncode == 0, run.stderr
    log = out / "qnn-profiling-data_0.log"
    missing = shell.run(
        f"qnn-profile-viewer --reader libQnnHtpOptraceProfilingReader.so "
        f"--input_log {log} --output {tmp_path}/x.json"
    )
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        1,
        "No Valid Input Schematics\n",
        "Error printing stats.\n",
    )
    trace_path = tmp_path / "chrometrace.json"
    decoded = shell.run(
        f"qnn-profile-viewer --reader libQnnHtpOptraceProfilingReader.so --input_log {log} "
        f"--schematic {CONV}/convReluModel_schematic.bin --output {trace_path}"
    )
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout.splitlines()[-1] == f"Complete! - {trace_path}"
    trace = json.loads(trace_path.read_text())
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] != "DmaCheckpointSet"]
    assert {e["pid"] for e in ops} == {0, 2}
    assert len(ops) == 2 * 3 * 5  # duplicated on two pids, 3 executes, 5 ops


def test_backend_profiling_needs_a_level_in_the_backend_config(shell: BoardShell) -> None:
    result = shell.run(
        f"qnn-net-run --backend libQnnHtp.so --retrieve_context_list {CTX_LIST} "
        "--profiling_level backend --num_inferences 1"
    )
    assert result.returncode == 1
    assert result.stderr == (
        "[ERROR] Backend extension config file does not specify a valid profiling level.\n"
    )


def test_unknown_options_are_refused_like_the_real_tool(shell: BoardShell) -> None:
    result = shell.run("qnn-net-run --bogus 1")
    assert (result.returncode, result.stderr) == (1, "ERROR: Invalid argument passed: --bogus\n")


def test_the_tools_report_a_stopped_board(tmp_path: Path) -> None:
    board = SimBoard(tmp_path / "gone", config=fixed_config()).start()
    shell = BoardShell(board)
    env = shell.env()
    board.close()
    import subprocess

    result = subprocess.run(["qnn-net-run", "--version"], env=env, capture_output=True, text=True)
    assert result.returncode == 127
    assert "the simulated board is not running" in result.stderr


@pytest.mark.parametrize(("level", "inferences"), [("basic", 1), ("detailed", 40)])
def test_viewer_output_arrives_intact_small_or_large(
    shell: BoardShell, tmp_path: Path, level: str, inferences: int
) -> None:
    out = tmp_path / level
    run = shell.run(
        f"qnn-net-run --backend libQnnHtp.so --retrieve_context {CONV}/qnn_model_float_optrace.bin "
        f"--input_list {CONV}/input_list_float_abs.txt --profiling_level {level} "
        f"--num_inferences {inferences} --output_dir {out}"
    )
    assert run.returncode == 0, run.stderr
    log = out / "qnn-profiling-data_0.log"
    viewer = shell.run(f"qnn-profile-viewer --input_log {log}; echo status=$?")
    expected = render_text(read_log(log), str(log), linting_reader=False)
    assert viewer.stdout == expected + "status=0\n"
    assert (len(expected) > 4096) == (level == "detailed")
