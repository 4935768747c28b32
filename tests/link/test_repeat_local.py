"""run.repeat: the profile key, and a run on this machine that repeats its whole plan."""

import pytest

from qtop.analysis.compare import compare_sessions, variant_groups
from qtop.analysis.session import analyze
from qtop.device.plan import RunOptions, build_run_plan
from qtop.device.sensors import plan_sensors
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import check_profile_text
from qtop.record.reader import open_recording
from qtop.transport.local import LocalTransport
from qtop.variants import repetition_name, split_repetition

from .helpers import make_sysfs, probe_locally, profile_for
from .recording import of_kind, record

PROFILE = """\
name: rep
device: {host: board}
run:
  command: ./bench
  iterations: 50
  repeat: 3
"""


def test_repeat_is_a_whole_number_from_1_and_wants_a_cooldown():
    checked = check_profile_text(PROFILE, "rep.yaml")
    assert checked.profile is not None and checked.profile.run.repeat == 3
    (warning,) = checked.warnings
    assert (warning.key, warning.line) == ("run.repeat", 6)
    assert "each starts on the NPU the one before left hot" in warning.message
    assert "cooldown" in warning.fix
    cooled = PROFILE + "  cooldown: {below: 45}\n"
    assert check_profile_text(cooled, "rep.yaml").issues == ()
    assert check_profile_text(PROFILE.replace("repeat: 3", "repeat: 1"), "r.yaml").issues == ()
    for bad in ("0", "-2", "2.5", "many", "1001"):
        (error,) = check_profile_text(PROFILE.replace("repeat: 3", f"repeat: {bad}"), "r").errors
        assert error.key == "run.repeat"


def test_repetition_names_split_back_and_leave_other_names_alone():
    assert repetition_name("w8a8", 2) == "w8a8#2"
    assert split_repetition("w8a8#2") == ("w8a8", 2)
    assert split_repetition("#12") == ("", 12)
    for plain in ("w8a8", "", "a#", "a#0", "a#b", "a#1x"):
        assert split_repetition(plain) == (plain, None)


async def test_a_repeated_run_runs_the_whole_plan_again_and_names_each_repetition(tmp_path):
    run = (
        "{command: 'echo $V; sleep 0.02', warmup: 1, iterations: 3, repeat: 2, "
        "variants: [{name: a, env: {V: one}}, {name: b, env: {V: two}}]}"
    )
    profile = profile_for(make_sysfs(tmp_path / "sys"), tmp_path / "spool", run)
    source = LiveSource(
        profile,
        LocalTransport(),
        run_options=RunOptions(calibrations=3),
        backoff=Backoff(initial_s=0.05, maximum_s=0.2),
    )
    path = tmp_path / "rep.jsonl"
    events = await record(source, path)
    assert events[0]["profile"]["run"]["repeat"] == 2
    assert events[-1]["reason"] == "completed"
    measured = [(i["variant"], i["index"]) for i in of_kind(events, "iteration")
                if i["phase"] == "measure"]  # fmt: skip
    assert measured == [(name, k) for name in ("a#1", "b#1", "a#2", "b#2") for k in range(3)]
    phases = [(p["phase"], p["variant"]) for p in of_kind(events, "phase")]
    assert phases == [
        (phase, name) for name in ("a#1", "b#1", "a#2", "b#2") for phase in ("warmup", "measure")
    ] + [("done", "")]
    stdout = [e["text"] for e in of_kind(events, "log") if e["stream"] == "stdout"]
    assert stdout == ["one"] * 4 + ["two"] * 4 + ["one"] * 4 + ["two"] * 4
    analysis = analyze(open_recording(path).events())
    groups = variant_groups(analysis)
    assert [(g.name, [r.name for r in g.repetitions]) for g in groups] == [
        ("a", ["a#1", "a#2"]),
        ("b", ["b#1", "b#2"]),
    ]
    comparison = compare_sessions(analysis, analysis, base_variant="a", new_variant="b")
    (variant,) = comparison.variants
    assert (variant.base_repetitions, variant.new_repetitions) == (2, 2)


@pytest.mark.parametrize("repeat", [1, 2])
def test_the_plan_repeats_the_variant_list_on_the_host(tmp_path, repeat):
    run = f"{{command: 'true', iterations: 2, repeat: {repeat}, variants: [a, b, c]}}"
    profile = profile_for(make_sysfs(tmp_path / "sys"), tmp_path / "spool", run)
    probe = probe_locally("sh", profile)
    plan = build_run_plan(
        profile, probe, plan_sensors(probe, profile.device), shell="sh", run_id="r1"
    )
    names = ["a", "b", "c"] if repeat == 1 else ["a#1", "b#1", "c#1", "a#2", "b#2", "c#2"]
    assert list(plan.variants) == names
    assert sorted(f for f in plan.files if f.startswith("variant_")) == sorted(
        f"variant_{k}.sh" for k in range(1, len(names) + 1)
    )
    assert f"QTOP_VARIANTS={len(names)}\n" in plan.files["plan.sh"]
