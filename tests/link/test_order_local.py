"""run.order: variants alternating in blocks, on this machine with the real device agent."""

import json

import pytest

from qtop.analysis.session import analyze
from qtop.cli import main
from qtop.device.plan import RunOptions
from qtop.device.schedule import rounds
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import check_profile_text
from qtop.record.reader import open_recording
from qtop.transport.local import LocalTransport

from .helpers import make_sysfs, profile_for
from .recording import of_kind, record

SWEEP = (
    "{command: 'echo $V; sleep 0.01', warmup: 1, iterations: 5, block: 2, order: %s, %s"
    "variants: [{name: a, env: {V: one}}, {name: b, env: {V: two}}, {name: c, env: {V: 3}}]}"
)


async def _run(tmp_path, order: str, extra: str = "") -> list[dict]:
    profile = profile_for(make_sysfs(tmp_path / "sys"), tmp_path / "spool", SWEEP % (order, extra))
    source = LiveSource(
        profile,
        LocalTransport(),
        run_options=RunOptions(calibrations=3),
        backoff=Backoff(initial_s=0.05, maximum_s=0.2),
    )
    return await record(source, tmp_path / f"{order}.jsonl")


def _blocks(events: list[dict]) -> list[tuple[str, list[int]]]:
    """Measured iterations as runs of one variant: (variant, indices)."""
    out: list[tuple[str, list[int]]] = []
    for it in of_kind(events, "iteration"):
        if it["phase"] != "measure":
            continue
        if out and out[-1][0] == it["variant"]:
            out[-1][1].append(it["index"])
        else:
            out.append((it["variant"], [it["index"]]))
    return out


async def test_interleaved_blocks_alternate_forwards_then_backwards(tmp_path, capsys):
    events = await _run(tmp_path, "interleaved")
    assert events[-1]["reason"] == "completed"
    # Rounds a b c, c b a, a b c: the double block at a turn is one run of iterations.
    assert _blocks(events) == [
        ("a", [0, 1]), ("b", [0, 1]), ("c", [0, 1, 2, 3]), ("b", [2, 3]),
        ("a", [2, 3, 4]), ("b", [4]), ("c", [4]),
    ]  # fmt: skip
    # Warm-up once per variant, before its first block; every block says which it is.
    phases = [(p["phase"], p["variant"], p["note"]) for p in of_kind(events, "phase")]
    warmups = [v for phase, v, _ in phases if phase == "warmup"]
    assert warmups == ["a", "b", "c"]
    measures = [(v, note) for phase, v, note in phases if phase == "measure"]
    assert measures[:4] == [("a", "block 1/3"), ("b", "block 1/3"), ("c", "block 1/3"),
                            ("c", "block 2/3")]  # fmt: skip
    assert all(p["planned_iterations"] == 5 for p in of_kind(events, "phase")
               if p["phase"] == "measure")  # fmt: skip
    stdout = [e["text"] for e in of_kind(events, "log") if e["stream"] == "stdout"]
    assert stdout.count("one") == 6 and stdout.count("two") == 6 and stdout.count("3") == 6
    # Each variant's figures are its own blocks', and compare pairs variants of the recording.
    path = tmp_path / "interleaved.jsonl"
    analysis = analyze(open_recording(path).events())
    for variant in analysis.variants:
        assert variant.measured.count == 5
        assert variant.drift is not None and variant.drift.blocks == 3
        assert variant.drift.segments == "first and last block"
        assert variant.measured.duration_s < variant.t_end - variant.t_start
        # Energy over the variant's own blocks: their summed time, not first start to last end.
        assert variant.energy.available
        assert variant.energy.span_s == pytest.approx(variant.measured.duration_s)
    assert main(["compare", f"{path}:a", f"{path}:c", "--format", "json"]) == 0
    (pair,) = json.loads(capsys.readouterr().out)["variants"]
    assert (pair["base_variant"], pair["new_variant"]) == ("a", "c")
    assert (pair["base_iterations"], pair["new_iterations"]) == (5, 5)
    assert any(note.startswith("BASE drift: P50 ") for note in pair["notes"])


async def test_randomized_order_follows_the_seeded_rounds_and_pauses_between_blocks(tmp_path):
    events = await _run(tmp_path, "randomized", "order_seed: 3, block_cooldown: 10ms, ")
    assert events[-1]["reason"] == "completed"
    profile = profile_for(make_sysfs(tmp_path / "s2"), tmp_path / "sp2",
                          SWEEP % ("randomized", "order_seed: 3, "))  # fmt: skip
    expected = [f"{'abc'[v - 1]}" for one in rounds(profile) for v in one]
    starts = [p["variant"] for p in of_kind(events, "phase") if p["phase"] == "measure"]
    assert starts == expected
    pauses = [p for p in of_kind(events, "phase") if p["phase"] == "cooldown"]
    assert len(pauses) == len(expected) - 1
    assert {p["note"] for p in pauses} == {"pause between blocks"}
    measured = [i for i in of_kind(events, "iteration") if i["phase"] == "measure"]
    for name in "abc":
        assert sorted(i["index"] for i in measured if i["variant"] == name) == list(range(5))


def test_order_needs_wall_latency_and_warns_without_variants():
    run = "  command: ./x\n  iterations: 50\n  order: interleaved\n"
    base = "name: o\ndevice: {host: b}\nrun:\n" + run
    (warning,) = check_profile_text(base, "o.yaml").warnings
    assert warning.key == "run.order" and "nothing to alternate" in warning.message
    profiler = (
        "  variants: [a, b]\n  latency_source: execute_stats\n"
        "  profiler: {kind: qnn_log, path: /tmp/out}\n"
    )
    errors = check_profile_text(base + profiler, "o.yaml").errors
    assert [e.key for e in errors] == ["run.order"]
    assert "latency_source: wall" in errors[0].fix
    for bad in ("alternate", "random"):
        (error,) = check_profile_text(base.replace("interleaved", bad), "o.yaml").errors
        assert error.key == "run.order"
