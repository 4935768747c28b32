"""The simulator's latency knob: a known slowdown for checking compare's gate against."""

from __future__ import annotations

from pathlib import Path

from qtop.cli import main
from qtop.sim import SimBoard, read_ground_truth

from .helpers import BoardShell, fixed_config
from .test_tools import netrun_linting


def test_a_scaled_board_runs_every_inference_that_much_slower(tmp_path: Path) -> None:
    medians = []
    for scale in (1.0, 1.03):
        config = fixed_config("evk", median_scale=scale)
        with SimBoard(tmp_path / f"state-{scale}", config=config) as board:
            result = BoardShell(board).run(netrun_linting(str(tmp_path / f"out-{scale}")))
            assert result.returncode == 0, result.stderr
            (record,) = read_ground_truth(board.ground_truth_path)
        medians.append(record["latencies_us"])
    assert medians == [[2271] * 5, [round(2271 * 1.03)] * 5]


def test_qtop_sim_refuses_a_latency_scale_out_of_range(tmp_path: Path, capsys) -> None:
    for bad in ("0", "-1", "11"):
        code = main(["sim", "--latency-scale", bad, "--state-dir", str(tmp_path / "s")])
        assert code == 2
        err = capsys.readouterr().err
        assert f"--latency-scale must be between 0.1 and 10, got {float(bad)}" in err
        assert "1.03 for a 3% slowdown" in err
    assert not (tmp_path / "s").exists()
