"""compare with repetitions (run.repeat) and across variants of one recording (FILE:VARIANT)."""

import json
import math
import random
import statistics

import pytest
from synthetic_streams import back_to_back, header, stream, write_recording

from qtop.analysis.compare import compare_sessions, variant_groups
from qtop.analysis.numeric import percentile, t_quantile
from qtop.analysis.session import analyze
from qtop.analysis.variability import SideSample, metric_interval
from qtop.cli import main


def noisy(n: int, level: float, rng: random.Random, sigma: float = 0.01) -> list[float]:
    return [0.010 * level * math.exp(rng.gauss(0.0, sigma)) for _ in range(n)]


def session(runs: list[tuple[str, list[float]]], session_id: str = "synthetic") -> list:
    """Variants (or repetitions) run one after the other, 10 s apart."""
    parts, t = [], 0.0
    for name, latencies in runs:
        parts.append(back_to_back(t, latencies, variant=name))
        t = parts[-1][-1].end + 10.0
    return stream([], *parts, head=header(session_id=session_id))


def write(tmp_path, name, runs, session_id="synthetic"):
    return str(write_recording(tmp_path / name, session(runs, session_id)))


def test_repetitions_are_put_back_together_in_order():
    rng = random.Random(1)
    runs = [(f"{v}#{k}", noisy(50, 1.0, rng)) for k in (1, 2, 3) for v in ("w8a8", "w8a16")]
    groups = variant_groups(analyze(session(runs)))
    assert [g.name for g in groups] == ["w8a8", "w8a16"]
    assert [r.name for r in groups[0].repetitions] == ["w8a8#1", "w8a8#2", "w8a8#3"]
    assert groups[0].iterations == 150
    unnamed = variant_groups(analyze(session([("#1", [0.01] * 20), ("#2", [0.01] * 20)])))
    assert [(g.name, len(g.repetitions)) for g in unnamed] == [("", 2)]


def test_with_repetitions_the_interval_is_the_t_interval_of_the_run_to_run_spread():
    rng = random.Random(2)
    base_levels, new_levels = (1.00, 1.03, 0.98, 1.01), (0.99, 1.02, 1.00, 0.97)
    base = [noisy(400, level, rng) for level in base_levels]
    new = [noisy(400, level, rng) for level in new_levels]
    sides = [SideSample(runs, 1000, random.Random(3)) for runs in (base, new)]
    interval = metric_interval(*sides, "p50", 0.95)
    # The documented formula, computed here independently.
    logs = [[math.log(percentile(sorted(r), 0.5)) for r in side] for side in (base, new)]
    pooled = (statistics.variance(logs[0]) * 3 + statistics.variance(logs[1]) * 3) / 6
    pooled_p50 = [percentile(sorted(x for r in side for x in r), 0.5) for side in (base, new)]
    change = math.log(pooled_p50[1] / pooled_p50[0])
    spread = t_quantile(0.975, 6) * math.sqrt(pooled / 4 + pooled / 4)
    assert interval.method == "between repetitions (t, 6.0 dof)"
    assert interval.low == pytest.approx(math.expm1(change - spread), rel=1e-9)
    assert interval.high == pytest.approx(math.expm1(change + spread), rel=1e-9)
    assert interval.run_sd == pytest.approx(math.expm1(math.sqrt(pooled)), rel=1e-9)


def test_a_run_without_repetitions_borrows_the_run_to_run_spread_of_the_other_side(
    tmp_path, capsys
):
    rng = random.Random(4)
    levels = (1.0, 1.02, 0.985)
    base = write(tmp_path, "base.jsonl", [(f"#{k}", noisy(300, lv, rng)) for k, lv in
                                          enumerate(levels, start=1)])  # fmt: skip
    new = write(tmp_path, "new.jsonl", [("", noisy(300, 1.0, rng))], session_id="other")
    assert main(["compare", base, new, "--format", "json"]) == 0
    (variant,) = json.loads(capsys.readouterr().out)["variants"]
    assert (variant["base_repetitions"], variant["new_repetitions"]) == (3, 1)
    p50 = variant["deltas"][0]
    assert p50["interval"] == "between repetitions (t, 2.0 dof)"
    assert 0.005 < p50["run_to_run"] < 0.03
    assert any("NEW is a single run" in note for note in variant["notes"])
    # Two degrees of freedom and the full spread on the single run: a wide interval.
    assert p50["ci_high"] - p50["ci_low"] > 4 * p50["run_to_run"]
    assert main(["compare", base, new]) == 0
    out = capsys.readouterr().out
    assert "900 vs 300 measured iterations in 3 vs 1 repetitions" in out
    assert "latency intervals: between repetitions (t, 2.0 dof)" in out
    assert "run-to-run spread (one repetition, relative): p50 " in out


def _null_coverage(seeds: int, repeated: bool) -> float:
    """Two sets of 3 runs of one configuration whose level moves from run to run by 2%."""
    covered = 0
    for seed in range(seeds):
        rng = random.Random(1000 + seed)
        sides = [[noisy(200, math.exp(rng.gauss(0.0, 0.02)), rng) for _ in range(3)]
                 for _ in range(2)]  # fmt: skip
        if not repeated:
            sides = [[[x for run in side for x in run]] for side in sides]
        samples = [SideSample(side, 300, rng) for side in sides]
        interval = metric_interval(*samples, "p50", 0.95)
        covered += interval.low <= 0 <= interval.high
    return covered / seeds


def test_repetitions_make_the_interval_hold_run_to_run_noise():
    assert _null_coverage(40, repeated=True) >= 0.88
    # The same iterations taken as one long run each: blocks cannot see the run levels.
    assert _null_coverage(40, repeated=False) < 0.75


def test_short_repetitions_do_not_count_in_the_spread(tmp_path, capsys):
    rng = random.Random(5)
    runs = [("#1", noisy(300, 1.0, rng)), ("#2", noisy(300, 1.01, rng)), ("#3", [0.01] * 4)]
    base = write(tmp_path, "base.jsonl", runs)
    new = write(tmp_path, "new.jsonl", runs, session_id="other")
    assert main(["compare", base, new, "--format", "json"]) == 0
    (variant,) = json.loads(capsys.readouterr().out)["variants"]
    assert variant["deltas"][0]["interval"].startswith("between repetitions (t, 2.0 dof)")
    assert any("1 of 3 repetitions have fewer than 10" in note for note in variant["notes"])


def sweep(tmp_path, name="sweep.jsonl"):
    rng = random.Random(6)
    runs = [("w8a8", noisy(500, 1.0, rng)), ("w8a16", noisy(500, 1.10, rng))]
    return write(tmp_path, name, runs)


def test_two_variants_of_one_recording_compare_like_two_recordings(tmp_path, capsys):
    path = sweep(tmp_path)
    code = main(["compare", f"{path}:w8a8", f"{path}:w8a16", "--max-regression", "p50=5%",
                 "--format", "json"])  # fmt: skip
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    (variant,) = data["variants"]
    assert (variant["base_variant"], variant["new_variant"]) == ("w8a8", "w8a16")
    assert data["base_label"] == f"{path}:w8a8"
    assert 0.08 < variant["deltas"][0]["change"] < 0.12
    (gate,) = data["gates"]
    assert gate["failed"] and gate["ci_low"] > 0.05
    assert gate["variant"] == "w8a8 vs w8a16"
    assert variant["notes"][0].startswith(
        "BASE and NEW are two variants of one session: w8a16 ran after w8a8"
    )
    # The other way round passes, and a variant against a whole single-variant recording.
    assert main(["compare", f"{path}:w8a16", f"{path}:w8a8", "--max-regression", "p50=5%"]) == 0
    single = write(tmp_path, "single.jsonl", [("", noisy(500, 1.0, random.Random(7)))], "x")
    assert main(["compare", single, f"{path}:w8a8", "--max-regression", "p50=5%"]) == 0
    out = capsys.readouterr().out
    assert "two variants of one session: w8a8 ran before w8a16" in out


def test_a_variant_with_its_repetitions_is_selected_whole(tmp_path, capsys):
    rng = random.Random(8)
    runs = [(f"{v}#{k}", noisy(100, 1.0, rng)) for k in (1, 2) for v in ("a", "b")]
    path = write(tmp_path, "rep.jsonl", runs)
    assert main(["compare", f"{path}:a", f"{path}:b", "--format", "json"]) == 0
    (variant,) = json.loads(capsys.readouterr().out)["variants"]
    assert (variant["base_repetitions"], variant["new_repetitions"]) == (2, 2)
    assert variant["base_iterations"] == 200


def test_a_bad_variant_is_a_usage_error_naming_the_ones_there(tmp_path, capsys):
    path = sweep(tmp_path)
    assert main(["compare", f"{path}:w4a16", f"{path}:w8a8"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:w4a16: the recording has no variant 'w4a16' (its variants: w8a8, w8a16)" in err
    assert "FILE:VARIANT" in err
    assert main(["compare", f"{path}:", path]) == 2
    assert "no variant after the colon" in capsys.readouterr().err
    assert main(["compare", f"{tmp_path}/missing.jsonl:w8a8", path]) == 2
    assert "no such recording" in capsys.readouterr().err


def test_a_file_name_with_a_colon_is_still_a_file(tmp_path, capsys):
    rng = random.Random(9)
    path = write(tmp_path, "run:2026-12-01.jsonl", [("", noisy(100, 1.0, rng))])
    assert main(["compare", path, path, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["variants"][0]["deltas"][0]["change"] == 0


def test_the_python_api_takes_the_variant_of_each_side():
    rng = random.Random(10)
    analysis = analyze(session([("a", noisy(100, 1.0, rng)), ("b", noisy(100, 1.0, rng))]))
    comparison = compare_sessions(analysis, analysis, base_variant="a", new_variant="b")
    assert [(v.base_variant, v.new_variant) for v in comparison.variants] == [("a", "b")]
