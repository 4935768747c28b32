import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_streams import (
    BATTERY_POWER,
    BATTERY_STATUS,
    POWER_INFO,
    STATUS_INFO,
    back_to_back,
    phase,
    stream,
    ticks,
    write_recording,
)

from qtop.analysis.compare import Gate, parse_gate
from qtop.analysis.variability import mann_whitney
from qtop.cli import main
from qtop.errors import UsageError


def lognormal(n: int, sigma: float, seed: int, scale: float = 1.0) -> list[float]:
    rng = random.Random(seed)
    return [0.010 * scale * rng.lognormvariate(0.0, sigma) for _ in range(n)]


def recording(tmp_path, name, latencies, *, variant="", power_w=None):
    iterations = back_to_back(1.0, latencies, variant=variant)
    end = iterations[-1].end
    infos, parts = [], [iterations]
    if power_w is not None:
        infos = [POWER_INFO, STATUS_INFO]
        values = {BATTERY_POWER: power_w, BATTERY_STATUS: -1.0}
        parts.append(ticks(0.0, end + 1.0, 0.1, lambda t: values))
        parts.append([phase(0.0, "baseline"), phase(0.9, "measure", variant)])
    return str(write_recording(tmp_path / name, stream(infos, *parts)))


def test_mann_whitney_with_ties_matches_the_hand_computation():
    # Ranks of 1 2 2 3 4 5 are 1 2.5 2.5 4 5 6; NEW (2, 4, 5) has rank sum 13.5, U = 7.5.
    result = mann_whitney([1.0, 2.0, 3.0], [2.0, 4.0, 5.0])
    assert result.u == 7.5
    # Variance 3 * 3 / 12 * (7 - (2^3 - 2) / (6 * 5)) = 5.1; z = (7.5 - 4.5 - 0.5) / sqrt(5.1)
    assert result.z == pytest.approx(2.5 / math.sqrt(5.1))
    assert result.p_value == pytest.approx(math.erfc(2.5 / math.sqrt(5.1) / math.sqrt(2)))
    assert result.prob_new_slower == pytest.approx(7.5 / 9)


def test_mann_whitney_of_identical_samples_is_not_significant():
    values = lognormal(200, 0.2, 1)
    result = mann_whitney(values, list(values))
    assert result.u == 200 * 200 / 2
    assert result.p_value == 1.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 20), min_size=1, max_size=30),
    st.lists(st.integers(0, 20), min_size=1, max_size=30),
)
def test_mann_whitney_u_of_both_sides_add_up(base, new):
    forward = mann_whitney([float(v) for v in base], [float(v) for v in new])
    backward = mann_whitney([float(v) for v in new], [float(v) for v in base])
    assert forward.u + backward.u == pytest.approx(len(base) * len(new))
    assert forward.p_value == pytest.approx(backward.p_value)


def test_gates_parse_percent_and_reject_unknown_metrics():
    assert parse_gate("p95=5%") == Gate("p95", 0.05)
    assert parse_gate("energy=10") == Gate("energy", 0.10)
    assert parse_gate("P99.9=2.5%") == Gate("p999", 0.025)
    with pytest.raises(UsageError, match="expected METRIC=PERCENT"):
        parse_gate("p96=5%")
    with pytest.raises(UsageError, match="expected METRIC=PERCENT"):
        parse_gate("p95=-5%")


def test_identical_distributions_pass(tmp_path, capsys):
    latencies = lognormal(500, 0.2, 1)
    base = recording(tmp_path, "base.jsonl", latencies)
    new = recording(tmp_path, "new.jsonl", latencies)
    code = main(["compare", base, new, "--max-regression", "p95=5%", "--max-regression", "p50=1%"])
    out = capsys.readouterr().out
    assert code == 0
    assert "passed: 2 gate(s)" in out
    assert "P95 ms" in out


def test_ten_percent_p95_regression_with_enough_samples_fails(tmp_path, capsys):
    base = recording(tmp_path, "base.jsonl", lognormal(2000, 0.1, 1))
    new = recording(tmp_path, "new.jsonl", lognormal(2000, 0.1, 2, scale=1.10))
    code = main(["compare", base, new, "--max-regression", "p95=5%", "--format", "json"])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    assert data["failed"] is True
    (gate,) = data["gates"]
    assert gate["metric"] == "p95"
    assert gate["failed"] is True
    assert 0.07 < gate["change"] < 0.13
    assert gate["ci_low"] > 0.05


def test_noisy_three_percent_difference_within_the_noise_passes(tmp_path, capsys):
    latencies = lognormal(40, 0.3, 4)
    base = recording(tmp_path, "base.jsonl", latencies)
    new = recording(tmp_path, "new.jsonl", [v * 1.03 for v in latencies])
    code = main(["compare", base, new, "--max-regression", "p95=2%"])
    out = capsys.readouterr().out
    assert code == 0
    assert "+3.0%" in out
    assert "(within the noise)" in out


def test_energy_gate_fails_on_a_clear_energy_regression(tmp_path, capsys):
    latencies = [0.05] * 400
    base = recording(tmp_path, "base.jsonl", latencies, power_w=2.0)
    new = recording(tmp_path, "new.jsonl", latencies, power_w=2.5)
    code = main(["compare", base, new, "--max-regression", "energy=10%", "--format", "markdown"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("### ❌ qtop compare")
    assert "| energy/inf mJ | 100.000 | 125.000 | +25.0% | [+25.0%, +25.0%] |" in out
    assert "FAIL  energy max +10.0%" in out


def test_energy_gate_without_power_telemetry_is_a_usage_error(tmp_path, capsys):
    base = recording(tmp_path, "base.jsonl", [0.05] * 100)
    new = recording(tmp_path, "new.jsonl", [0.05] * 100)
    code = main(["compare", base, new, "--max-regression", "energy=10%"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot check the gate energy=10.0%" in err
    assert "no power telemetry" in err


def test_variants_are_matched_by_name(tmp_path, capsys):
    def two(name, first, second, scale):
        events = stream(
            [],
            back_to_back(0.0, lognormal(200, 0.1, first, scale), variant="w8a8"),
            back_to_back(100.0, lognormal(200, 0.1, second, scale), variant=name),
        )
        return str(write_recording(tmp_path / f"{name}-{scale}.jsonl", events))

    base = two("w8a16", 1, 2, 1.0)
    new = two("w4a16", 3, 4, 1.0)
    assert main(["compare", base, new, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [v["base_variant"] for v in data["variants"]] == ["w8a8"]
    assert data["only_in_base"] == ["w8a16"]
    assert data["only_in_new"] == ["w4a16"]


def test_bad_gate_and_missing_file_exit_2(tmp_path, capsys):
    base = recording(tmp_path, "base.jsonl", [0.05] * 50)
    assert main(["compare", base, base, "--max-regression", "latency=5%"]) == 2
    assert main(["compare", base, str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "expected METRIC=PERCENT" in err
    assert "no such recording" in err
