"""run.stop: early on this machine: the host ends the measurement once the P90 bound is tight."""

from qtop.analysis.early_stop import minimum_queries
from qtop.analysis.session import analyze
from qtop.cli import main
from qtop.device.plan import RunOptions
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.record.reader import open_recording
from qtop.transport.local import LocalTransport

from .helpers import make_sysfs, profile_for
from .recording import of_kind, record

PLANNED = 5000


async def _run(tmp_path, run: str) -> tuple[list[dict], object]:
    profile = profile_for(make_sysfs(tmp_path / "sys"), tmp_path / "spool", run)
    source = LiveSource(
        profile,
        LocalTransport(),
        run_options=RunOptions(calibrations=3),
        backoff=Backoff(initial_s=0.05, maximum_s=0.2),
    )
    path = tmp_path / "early.jsonl"
    return await record(source, path), path


async def test_an_early_stop_ends_each_variant_cleanly_and_says_why(tmp_path, capsys):
    # A margin of 100%: the bound (at first the slowest run) need only be within 2x the P90.
    events, path = await _run(
        tmp_path,
        f"{{command: 'sleep 0.01', warmup: 1, iterations: {PLANNED}, stop: early, "
        "early_stop_margin: 100%, variants: [a, b]}",
    )
    assert events[-1]["reason"] == "completed"
    markers = of_kind(events, "marker")
    assert [(m["label"], m["variant"], m["origin"]) for m in markers] == [
        ("early stop", "a", "auto"),
        ("early stop", "b", "auto"),
    ]
    measured = [i for i in of_kind(events, "iteration") if i["phase"] == "measure"]
    for marker in markers:
        mine = [i for i in measured if i["variant"] == marker["variant"]]
        queries = int(marker["note"].split(" after ")[1].split()[0])
        assert minimum_queries() <= queries < PLANNED
        # The agent sees the request between iterations; how many ran meanwhile is how long
        # the host took to send it (a few 10 ms iterations, more on a loaded machine), far
        # from the planned count either way.
        assert queries <= len(mine) < queries + PLANNED // 10
        assert "(margin 100%)" in marker["note"]
    analysis = analyze(open_recording(path).events())
    for variant in analysis.variants:
        assert variant.stopped_early.startswith("P90 <= ")
        assert variant.early_stop is not None
        assert variant.early_stop.bound_s >= variant.early_stop.observed_p90_s
        assert variant.validity.valid, variant.validity.reasons
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("with 99% confidence (MLPerf early-stopping estimate") == 2
    assert out.count("stopped early: P90 <= ") == 2


async def test_a_run_short_of_its_presets_minimums_is_flagged(tmp_path):
    events, path = await _run(
        tmp_path, "{command: 'true', warmup: 0, iterations: 40, validity: mlperf-mobile}"
    )
    assert events[-1]["reason"] == "completed"
    (variant,) = analyze(open_recording(path).events()).variants
    assert not variant.validity.valid
    assert variant.validity.min_iterations == 1024
    assert variant.validity.min_duration_s == 60.0
    assert any("fewer than the minimum 1024" in r for r in variant.validity.reasons)
    assert any("less than the minimum 60 s" in r for r in variant.validity.reasons)
    # 40 queries give no early-stopping bound.
    assert variant.early_stop is None
