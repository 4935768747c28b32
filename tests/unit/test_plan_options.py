"""--warmup, --iterations, --duration and --interval: the profile keys' rules, as typed."""

from __future__ import annotations

import pytest

from qtop.cli import build_parser, main
from qtop.live.overrides import apply_overrides
from qtop.profiles import ProfileError, builtin_profile, check_profile_text, load_profile_text
from qtop.profiles.durations import ACCEPTED_FORMS

PROFILE = """\
name: plan
device: {host: board}
run:
  command: echo hi
  warmup: 2
  iterations: 40
  variants: [a, b]
"""
FORMS = f"write {ACCEPTED_FORMS}"


def overridden(*options: str, text: str = PROFILE, warnings: list | None = None):
    args = build_parser().parse_args(["run", "plan.yaml", *options])
    on_warning = warnings.append if warnings is not None else None
    return apply_overrides(load_profile_text(text, "plan.yaml"), args, on_warning)


@pytest.mark.parametrize(
    ("options", "attribute", "value"),
    [
        (("--duration", "20"), "duration_s", 20.0),
        (("--duration", "20s"), "duration_s", 20.0),
        (("--duration", "1h30m"), "duration_s", 5400.0),
        (("--duration=0.5"), "duration_s", 0.5),
        (("--iterations", "7"), "iterations", 7),
        (("--warmup", "0"), "warmup", 0),
        (("--interval", "10ms"), "sample_interval_s", 0.01),
        (("--interval", "0.25"), "sample_interval_s", 0.25),
    ],
)
def test_options_take_what_the_profile_takes(options, attribute, value):
    options = (options,) if isinstance(options, str) else options
    profile = overridden(*options)
    section = profile.device if attribute == "sample_interval_s" else profile.run
    assert getattr(section, attribute) == value


def test_a_duration_replaces_the_profiles_iterations_and_the_other_way_round():
    assert overridden("--duration", "20").run.iterations is None
    text = PROFILE.replace("iterations: 40", "duration: 10m")
    assert overridden("--iterations", "50", text=text).run.duration_s is None


# (options, message, fix): each the same as the profile key's for the same value.
BAD = [
    (("--duration", "-5s"), "--duration: -5s is negative", f"{FORMS}, e.g. 10m"),
    (("--duration", "-5"), "--duration: -5 is negative", f"{FORMS}, e.g. 10m"),
    (("--duration", "abc"), "--duration: 'abc' is not a duration", f"{FORMS}, e.g. 10m"),
    (
        ("--duration", "0"),
        "--duration: 0 s is below the minimum, 10ms",
        "give a duration from 10ms to 7d, e.g. 10m",
    ),
    (
        ("--duration", "99999999999h"),
        "--duration: 99999999999h is above the maximum, 7d",
        "give a duration from 10ms to 7d, e.g. 10m",
    ),
    (("--duration", "nan"), "--duration: 'nan' is not a duration", f"{FORMS}, e.g. 10m"),
    (
        ("--interval", "0"),
        "--interval: 0 s is below the minimum, 10ms",
        "give a duration from 10ms to 1h, e.g. 100ms",
    ),
    (
        ("--interval", "5ms"),
        "--interval: 5ms is below the minimum, 10ms",
        "give a duration from 10ms to 1h, e.g. 100ms",
    ),
    (
        ("--iterations", "0"),
        "--iterations: 0 is below the minimum, 1",
        "write a whole number from 1 to 10000000, e.g. 200",
    ),
    (
        ("--iterations", "1e23"),
        "--iterations: '1e23' is not a whole number",
        "write a whole number from 1 to 10000000, e.g. 200",
    ),
    (
        ("--iterations", "100000000000000000000000"),
        "--iterations: 100000000000000000000000 is above the maximum, 10000000",
        "write a whole number from 1 to 10000000, e.g. 200",
    ),
    (
        ("--warmup", "-1"),
        "--warmup: -1 is below the minimum, 0",
        "write a whole number from 0 to 1000000, e.g. 10",
    ),
    (
        ("--warmup", "lots"),
        "--warmup: 'lots' is not a whole number",
        "write a whole number from 0 to 1000000, e.g. 10",
    ),
    (
        ("--iterations", "5", "--duration", "5"),
        "--iterations and --duration are both given; the run would stop at whichever comes "
        "first, which is rarely what was meant",
        "give one of them",
    ),
    (
        ("--variant", "c"),
        "--variant 'c': the profile has no such variant",
        "use one of: a, b",
    ),
    (
        ("--duration", "50ms", "--interval", "100ms"),
        "--duration: 50ms is shorter than one sampling interval (100ms): no sensor would be "
        "sampled",
        "measure for longer, or sample more often",
    ),
]


@pytest.mark.parametrize(("options", "message", "fix"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_a_bad_option_is_refused_with_the_keys_message_and_fix(options, message, fix):
    with pytest.raises(Exception) as caught:
        overridden(*options)
    assert (caught.value.problem, caught.value.fix) == (message, fix)


@pytest.mark.parametrize(
    ("option", "key", "value"),
    [
        ("--duration", "run.duration", "-5s"),
        ("--interval", "device.sample_interval", "5ms"),
        ("--iterations", "run.iterations", "0"),
        ("--warmup", "run.warmup", "-1"),
    ],
)
def test_the_option_and_the_key_say_the_same(option, key, value):
    section, name = key.split(".")
    replaced = {"duration": "iterations: 40", "iterations": "iterations: 40", "warmup": "warmup: 2"}
    if section == "device":
        text = PROFILE.replace("{host: board}", f"{{host: board, {name}: {value}}}")
    else:
        text = PROFILE.replace(replaced[name], f"{name}: {value}")
    [from_profile] = [issue for issue in check_profile_text(text, "p.yaml").errors]
    with pytest.raises(ProfileError) as caught:
        overridden(option, value)
    [from_option] = caught.value.issues
    assert (from_option.message, from_option.fix) == (from_profile.message, from_profile.fix)
    assert (from_option.key, from_profile.key) == (option, key)


def test_a_warm_up_that_swallows_every_inference_is_refused_at_its_option():
    text = builtin_profile("sim-evk").read_text()
    with pytest.raises(ProfileError) as caught:
        overridden("--warmup", "20", text=text)
    assert caught.value.problem == (
        "--warmup: 20 warm-up inferences per process leave nothing to measure: the command "
        "runs 20 per process (--num_inferences 20)"
    )
    assert caught.value.fix == "lower warmup below 20, or raise --num_inferences in the command"


def test_a_likely_unit_mistake_on_the_command_line_is_a_warning():
    warnings: list = []
    profile = overridden("--interval", "20", warnings=warnings)
    assert profile.device.sample_interval_s == 20.0
    [warning] = warnings
    assert warning.text() == (
        "--interval: 20 s is unusually long here (a number without a unit is seconds)"
    )
    assert warning.fix == "did you mean 20ms? write the unit, e.g. 100ms"


def test_fewer_iterations_than_the_minimum_warns_but_runs():
    warnings: list = []
    assert overridden("--iterations", "3", warnings=warnings).run.iterations == 3
    assert [w.text() for w in warnings] == [
        "--iterations: 3 measured iterations are fewer than min_iterations (30): reports will "
        "mark the result not valid"
    ]


@pytest.mark.parametrize("value", ["-5s", "-5", "-.5", "-1"])
def test_a_negative_value_reaches_the_check_instead_of_confusing_argparse(value):
    for command in (["run", "p.yaml"], ["demo"]):
        args = build_parser().parse_args([*command, "--duration", value, "--warmup", value])
        assert (args.duration, args.warmup) == (value, value)


def test_a_refused_plan_starts_nothing_on_the_device(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "ran"
    profile = tmp_path / "p.yaml"
    profile.write_text(
        f"device: {{spool_dir: '{tmp_path / 'spool'}'}}\n"
        f"run: {{command: 'touch {marker}', warmup: 0, iterations: 30}}\n"
    )
    for options in (["--iterations", "0"], ["--duration", "-5s"], ["--interval", "1ms"]):
        assert main(["run", str(profile), "--local", "--headless", *options]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"qtop run: error: {options[0]}: ")
        assert "\n  fix: " in err
    assert not marker.exists()
    assert not (tmp_path / "spool").exists()
    assert not (tmp_path / "recordings").exists()


def test_a_warning_about_a_value_an_option_replaces_is_not_printed(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("run: {command: 'true', warmup: 0, iterations: 5}\n")
    # The bad --interval stops the run before anything starts; the warnings come first.
    assert main(["run", str(profile), "--local", "--interval", "1ms"]) == 2
    assert f"qtop run: warning: {profile}:1: run.iterations: 5 measured" in capsys.readouterr().err
    assert main(["run", str(profile), "--local", "--iterations", "50", "--interval", "1ms"]) == 2
    assert "warning" not in capsys.readouterr().err
    assert main(["run", str(profile), "--local", "--duration", "1m", "--interval", "1ms"]) == 2
    assert "warning" not in capsys.readouterr().err
