import json
from pathlib import Path

import pytest

from qtop.cli import main
from qtop.profiles import (
    ProfileError,
    builtin_profile,
    builtin_profile_dir,
    check_profile_text,
    format_duration,
    load_profile,
    load_profile_text,
    parse_duration,
    resolve,
)
from qtop.profiles.loader import MAX_PROFILE_BYTES, MAX_VALUES

MINIMAL = """\
name: tiny
device:
  host: board
run:
  command: echo hi
  iterations: 40
"""


def shipped_profiles() -> list[Path]:
    return sorted(builtin_profile_dir().glob("*.yaml"))


def test_shipped_profiles_exist():
    names = {p.stem for p in shipped_profiles()}
    assert {"iq9075-qwen-netrun", "iq9075-qwen-genie", "glasses-prismml", "sim-evk"} <= names


@pytest.mark.parametrize("path", shipped_profiles(), ids=lambda p: p.stem)
def test_every_shipped_profile_loads_without_a_warning(path):
    warnings = []
    profile = load_profile(path, on_warning=warnings.append)
    assert profile.name == path.stem
    assert profile.run.command.strip()
    assert warnings == []


def test_glasses_profile_is_the_seed_workflow():
    profile = load_profile(builtin_profile_dir() / "glasses-prismml.yaml")
    assert [v.name for v in profile.run.variants] == ["w8a8", "w8a16", "w4a16"]
    assert 10 <= profile.run.warmup <= 20
    assert profile.run.min_iterations >= 200
    # Long enough for a 1 s fuel gauge: 20 readings measured, 10 in the idle baseline.
    assert profile.run.duration_s >= 20 and profile.run.idle_baseline_s >= 10
    assert profile.device.power_supply == "battery"
    thermal = load_profile(builtin_profile_dir() / "glasses-prismml-thermal.yaml")
    assert thermal.run.duration_s == 600 and thermal.run.idle_baseline_s >= 10
    simulated = load_profile(builtin_profile_dir() / "sim-glasses.yaml")
    assert simulated.run.duration_s >= 20 and simulated.run.idle_baseline_s >= 10


def test_minimal_profile_gets_documented_defaults():
    profile = load_profile_text(MINIMAL, "tiny.yaml")
    assert profile.device.sample_interval_s == 0.1
    assert profile.device.thermal_zones == "all"
    assert profile.device.sysfs_root == "/sys"
    assert profile.run.warmup == 10
    assert profile.run.latency_source == "wall"
    assert profile.source == "tiny.yaml"


def test_the_name_defaults_to_the_file_name():
    profile = load_profile_text(MINIMAL.replace("name: tiny\n", ""), "dir/my-board.yaml")
    assert profile.name == "my-board"


def test_misspelt_key_names_file_line_key_and_suggests_the_fix():
    text = MINIMAL.replace("  iterations: 40", "  iterations: 40\n  warmpu: 5")
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, "tiny.yaml")
    assert caught.value.problem == "tiny.yaml:7: run.warmpu: unknown key"
    assert caught.value.fix == "did you mean 'warmup'?"


def test_every_error_is_reported_at_once_in_file_order():
    text = (
        "name: a/b\n"
        "device:\n"
        "  sample_interval: 5ms\n"
        "  env: {PATH: ''}\n"
        "run:\n"
        "  comand: x\n"
        "  iterations: 1e23\n"
        "  warmup: 1.0e+29\n"
        "  timeout: .nan\n"
    )
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, "p.yaml")
    issues = caught.value.issues
    assert [(issue.line, issue.key) for issue in issues] == [
        (1, "name"),
        (3, "device.sample_interval"),
        (4, "device.env.PATH"),
        (6, "run.comand"),
        (7, "run.iterations"),
        (8, "run.warmup"),
        (9, "run.timeout"),
    ]
    assert all(issue.fix for issue in issues)
    problem = caught.value.problem.splitlines()
    assert problem[0] == "p.yaml: 7 errors"
    assert problem[1] == "  p.yaml:1: name: 'a/b' is not a usable profile name"
    assert problem[2].startswith("    fix: use letters, digits")
    assert "  p.yaml:6: run.comand: unknown key" in problem
    assert "    fix: did you mean 'command'?" in problem
    assert caught.value.fix is None


def test_a_misspelt_required_key_is_one_error_not_two():
    checked = check_profile_text(MINIMAL.replace("command", "comand"), "p.yaml")
    assert [issue.text() for issue in checked.errors] == ["p.yaml:5: run.comand: unknown key"]


def test_a_cross_key_rule_waits_for_the_keys_it_reads_to_be_valid():
    text = MINIMAL.replace("  iterations: 40", "  iterations: 0\n  duration: 10m")
    checked = check_profile_text(text, "p.yaml")
    assert [issue.key for issue in checked.errors] == ["run.iterations"]


def test_invalid_yaml_names_the_line():
    with pytest.raises(ProfileError, match=r"bad.yaml:4: not valid YAML.*on line 3"):
        load_profile_text("run:\n  command: x\n  iterations: [1\n", "bad.yaml")


@pytest.mark.parametrize(
    ("text", "message", "fix"),
    [
        (
            "run:\n  command: x\n",
            "p.yaml:1: run: say how long to measure",
            "add 'iterations: 200' (a count) or 'duration: 10m' (a sustained run)",
        ),
        (
            "run:\n  command: x\n  iterations: 40\n  duration: 10m\n",
            "p.yaml:4: run.duration: 'iterations' and 'duration' are both set; the run would "
            "stop at whichever comes first, which is rarely what was meant",
            "keep one of them",
        ),
        (
            "run:\n  command: qnn-net-run --num_inferences 20\n  iterations: 40\n"
            "  warmup: 20\n  latency_source: execute_stats\n"
            "  profiler: {kind: qnn_log, path: /o}\n",
            "p.yaml:4: run.warmup: 20 warm-up inferences per process leave nothing to "
            "measure: the command runs 20 per process (--num_inferences 20)",
            "lower warmup below 20, or raise --num_inferences in the command",
        ),
        (
            "run:\n  command: x\n  iterations: 40\n  latency_source: execute_stats\n",
            "p.yaml:4: run.latency_source: 'execute_stats' reads qnn-net-run's profiling log, "
            "but no qnn_log (or optrace) profiler output is set",
            "add 'profiler: {kind: qnn_log, path: <the --output_dir of the command>}'",
        ),
        (
            "device: {sample_interval: 2s}\nrun:\n  command: x\n  duration: 1s\n",
            "p.yaml:4: run.duration: 1s is shorter than one sampling interval (2s): no sensor "
            "would be sampled",
            "measure for longer, or sample more often",
        ),
    ],
)
def test_plans_that_cannot_measure_anything_are_refused(text, message, fix):
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, "p.yaml")
    assert (caught.value.problem, caught.value.fix) == (message, fix)


def test_duplicate_keys_are_errors_but_merge_keys_may_be_overridden():
    text = MINIMAL + "  iterations: 50\n"
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, "p.yaml")
    assert caught.value.problem == (
        "p.yaml:7: run.iterations: appears twice (first on line 6); YAML would keep the last "
        "one unseen"
    )
    merged = (
        "defaults: &defaults {command: x, iterations: 40, warmup: 2}\n"
        "run:\n  <<: *defaults\n  warmup: 5\n"
    )
    checked = check_profile_text(merged, "m.yaml")
    # The anchor's holder is not a key of a profile; the merge itself is fine.
    assert [issue.key for issue in checked.errors] == ["defaults"]
    merged_only = "run:\n  <<: {command: x, iterations: 40, warmup: 2}\n  warmup: 5\n"
    assert load_profile_text(merged_only, "m.yaml").run.warmup == 5


def laughs(levels: int, key: str) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + f"\nrun:\n  command: x\n  iterations: 40\n  {key}: *a{levels - 1}\n"


@pytest.mark.parametrize(
    "key", ["latency_source", "profiler:\n    kind", "profiler:\n    path", "command"]
)
def test_a_billion_laughs_is_refused_before_it_is_expanded(key):
    checked = check_profile_text(laughs(10, key), "bomb.yaml")
    [issue] = checked.errors
    assert issue.message == (
        f"the YAML holds more than {MAX_VALUES} values once its aliases (*name) are expanded"
    )
    assert issue.fix.startswith("a profile needs a few hundred values")


def test_a_merge_key_bomb_is_refused_too():
    lines = ["m0: &m0 {a: 1, b: 2, c: 3}"]
    for level in range(1, 12):
        lines.append(f"m{level}: &m{level} {{<<: [{', '.join([f'*m{level - 1}'] * 9)}]}}")
    text = "\n".join(lines) + "\nrun: {command: x, iterations: 40, <<: *m11}\n"
    [issue] = check_profile_text(text, "merge.yaml").errors
    assert "aliases (*name) are expanded" in issue.message


def test_an_alias_that_contains_itself_is_refused():
    [issue] = check_profile_text("run: &r\n  command: x\n  more: *r\n", "loop.yaml").errors
    assert issue.text() == (
        "loop.yaml:1: an alias refers to the value that contains it, which would never end"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("run: " + "[" * 100_000 + "]" * 100_000 + "\n", 1),
        (
            "run:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 60)) + "  " * 60 + "x: 1\n",
            40,
        ),
    ],
    ids=["flow", "block"],
)
def test_deep_nesting_is_refused_cleanly(text, line):
    [issue] = check_profile_text(text, "deep.yaml").errors
    assert issue.text() == f"deep.yaml:{line}: the YAML is nested more than 40 levels deep"
    assert issue.fix == "a profile is at most a few levels deep: check the indentation"


def test_an_oversized_profile_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text(MINIMAL + "#" * MAX_PROFILE_BYTES)
    with pytest.raises(ProfileError) as caught:
        load_profile(big)
    assert caught.value.problem == f"{big}: more than 256 KiB, more than a profile can be"


def test_a_number_with_thousands_of_digits_is_a_clean_error():
    [issue] = check_profile_text(
        "run: {command: x, iterations: " + "9" * 5000 + "}\n", "p.yaml"
    ).errors
    assert issue.text() == (
        "p.yaml:1: a value cannot be read: a number of 5000 characters is longer than any "
        "value here"
    )


def test_unreadable_files_are_clean_errors(tmp_path):
    with pytest.raises(ProfileError, match="no such profile file"):
        load_profile(tmp_path / "nope.yaml")
    with pytest.raises(ProfileError, match="is a directory"):
        load_profile(tmp_path)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ProfileError, match="not UTF-8 text"):
        load_profile(latin)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        (90, 90.0), ("90", 90.0), ("0.5", 0.5), ("250ms", 0.25), ("10m", 600.0),
        ("10min", 600.0), ("1h30m", 5400.0), ("1h 30m", 5400.0), ("1.5s", 1.5), ("2d", 172800.0),
        ("0", 0.0),
    ],
)  # fmt: skip
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10 parsecs", "'10 parsecs' is not a duration"),
        ("m", "'m' is not a duration"),
        ("-5", "-5 is negative"),
        ("-5s", "-5s is negative"),
        (-5, "-5 s is negative"),
        ("1h 30x", "'1h 30x' is not a duration"),
        (float("nan"), ".nan is not a number"),
        (float("inf"), ".inf is not a finite duration"),
        ("9" * 400, f"{'9' * 400} s is not a finite duration"),
        (True, "expected a duration, got true"),
    ],
)
def test_bad_durations_show_the_accepted_forms(text, message):
    with pytest.raises(ValueError) as caught:
        parse_duration(text, "10m")
    assert str(caught.value) == message
    assert caught.value.fix == (
        "write seconds (90, 0.5) or a number with a unit (250ms, 30s, 10m, 1h30m, 2d), e.g. 10m"
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.01, "10ms"), (0.1, "100ms"), (1.5, "1.5s"), (600, "10m"), (5400, "1h30m"),
     (604800, "7d"), (0, "0s")],
)  # fmt: skip
def test_durations_are_written_back_the_way_people_write_them(seconds, text):
    assert format_duration(seconds) == text
    assert parse_duration(text) == seconds


def test_profiles_check_prints_every_error_and_exits_2(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(MINIMAL)
    assert main(["profiles", "check", str(good)]) == 0
    assert capsys.readouterr().out == (
        f"{good}: ok: tiny on board, warm-up 10, 40 iterations, one configuration\n"
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text(MINIMAL.replace("command", "comand").replace("40", "0"))
    assert main(["profiles", "check", str(broken)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"qtop profiles: error: {broken}:5: run.comand: unknown key\n"
        "  fix: did you mean 'command'?\n"
        f"qtop profiles: error: {broken}:6: run.iterations: 0 is below the minimum, 1\n"
        "  fix: write a whole number from 1 to 10000000, e.g. 200\n"
    )
    assert captured.out == f"{broken}: 2 errors\n"


def test_profiles_check_exits_0_with_warnings(tmp_path, capsys):
    warned = tmp_path / "warned.yaml"
    warned.write_text(MINIMAL.replace("  host: board", "  host: board\n  sample_interval: 100"))
    assert main(["profiles", "check", str(warned)]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(
        f"qtop profiles: warning: {warned}:4: device.sample_interval: 100 s is unusually long"
    )
    assert "  fix: did you mean 100ms? write the unit, e.g. 100ms\n" in captured.err
    assert captured.out.endswith(f"{warned}: 1 warning\n")


def test_profiles_check_json_is_for_editors_and_ci(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(MINIMAL)
    broken = tmp_path / "broken.yaml"
    broken.write_text(MINIMAL.replace("warmup", "x").replace("  iterations: 40", "  warmpu: 3"))
    assert main(["profiles", "check", "--json", str(good), str(broken)]) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False
    assert [f["ok"] for f in document["files"]] == [True, False]
    assert document["files"][0]["profile"] == "tiny"
    issues = document["files"][1]["issues"]
    assert issues == [
        {
            "severity": "error",
            "file": str(broken),
            "line": 4,
            "key": "run",
            "message": "say how long to measure",
            "fix": "add 'iterations: 200' (a count) or 'duration: 10m' (a sustained run)",
        },
        {
            "severity": "error",
            "file": str(broken),
            "line": 6,
            "key": "run.warmpu",
            "message": "unknown key",
            "fix": "did you mean 'warmup'?",
        },
    ]
    assert main(["profiles", "check", "--json", str(good)]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_profiles_list_shows_shipped_profiles(capsys):
    assert main(["profiles"]) == 0
    assert "iq9075-qwen-netrun" in capsys.readouterr().out


def test_a_trailing_newline_does_not_make_a_name_valid():
    text = MINIMAL + '  env: {"A\\n": "1"}\n'
    with pytest.raises(ProfileError, match="not a valid environment variable name"):
        load_profile_text(text, "p.yaml")


def test_a_name_says_which_file_it_resolved_to_and_what_it_hides(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    shipped = builtin_profile("sim-evk")
    assert resolve("sim-evk").describe() == f"profile sim-evk: {shipped}"
    (tmp_path / "profiles").mkdir()
    local = tmp_path / "profiles" / "sim-evk.yaml"
    local.write_text(MINIMAL)
    resolved = resolve("sim-evk")
    assert resolved.path == Path("profiles/sim-evk.yaml").absolute()
    assert resolved.describe() == f"profile sim-evk: {resolved.path} (it hides {shipped})"
    assert builtin_profile("sim-evk") == shipped
