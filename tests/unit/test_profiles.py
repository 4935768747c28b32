from pathlib import Path

import pytest

from qtop.cli import main
from qtop.profiles import (
    ProfileError,
    builtin_profile_dir,
    load_profile,
    load_profile_text,
    parse_duration,
)

MINIMAL = """\
name: tiny
device:
  host: board
run:
  command: echo hi
  iterations: 10
"""


def shipped_profiles() -> list[Path]:
    return sorted(builtin_profile_dir().glob("*.yaml"))


def test_shipped_profiles_exist():
    names = {p.stem for p in shipped_profiles()}
    assert {"iq9075-qwen-netrun", "iq9075-qwen-genie", "glasses-prismml"} <= names


@pytest.mark.parametrize("path", shipped_profiles(), ids=lambda p: p.stem)
def test_every_shipped_profile_loads(path):
    profile = load_profile(path)
    assert profile.name == path.stem
    assert profile.run.command.strip()


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
    assert profile.run.warmup == 10
    assert profile.run.latency_source == "wall"


def test_misspelt_key_names_file_line_key_and_suggests_the_fix():
    text = MINIMAL.replace("  iterations: 10", "  iterations: 10\n  warmpu: 5")
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, "tiny.yaml")
    assert caught.value.problem == "tiny.yaml:7: run.warmpu: unknown key"
    assert caught.value.fix == "did you mean 'warmup'?"


def test_bad_value_names_its_line():
    text = MINIMAL.replace("iterations: 10", "iterations: lots")
    with pytest.raises(ProfileError, match=r"tiny.yaml:6: run.iterations: expected a whole number"):
        load_profile_text(text, "tiny.yaml")


def test_invalid_yaml_names_the_line():
    with pytest.raises(ProfileError, match=r"bad.yaml:4: not valid YAML.*on line 3"):
        load_profile_text("run:\n  command: x\n  iterations: [1\n", "bad.yaml")


def test_missing_run_length_is_explained():
    with pytest.raises(ProfileError) as caught:
        load_profile_text("run:\n  command: x\n", "p.yaml")
    assert "say how long" in caught.value.problem
    assert "iterations: 200" in caught.value.fix


def test_millidegrees_are_caught():
    text = MINIMAL + "  cooldown:\n    below: 45000\n"
    with pytest.raises(ProfileError, match="not a plausible temperature"):
        load_profile_text(text, "p.yaml")


def test_variants_and_env():
    text = MINIMAL + (
        "  env: {A: '1'}\n  variants:\n    - name: w8a8\n      env: {CONTEXT: a.bin}\n    - w4a16\n"
    )
    profile = load_profile_text(text, "p.yaml")
    assert profile.run.variant_names() == ("w8a8", "w4a16")
    assert profile.run.variants[0].env == {"CONTEXT": "a.bin"}


def test_duplicate_variant_names_are_refused():
    text = MINIMAL + "  variants: [a, a]\n"
    with pytest.raises(ProfileError, match="appears twice"):
        load_profile_text(text, "p.yaml")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [(90, 90.0), ("250ms", 0.25), ("10m", 600.0), ("1h30m", 5400.0), ("1.5s", 1.5)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["10 parsecs", "m", "-5", "1h 30x"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_profiles_check_cli_exit_codes(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(MINIMAL)
    assert main(["profiles", "check", str(good)]) == 0
    assert "ok: tiny on board" in capsys.readouterr().out
    broken = tmp_path / "broken.yaml"
    broken.write_text(MINIMAL.replace("command", "comand"))
    assert main(["profiles", "check", str(broken)]) == 2
    err = capsys.readouterr().err
    assert f"{broken}:5: run.comand: unknown key" in err
    assert "Traceback" not in err


def test_profiles_list_shows_shipped_profiles(capsys):
    assert main(["profiles"]) == 0
    assert "iq9075-qwen-netrun" in capsys.readouterr().out


def test_a_trailing_newline_does_not_make_a_name_valid():
    text = MINIMAL + '  env: {"A\\n": "1"}\n'
    with pytest.raises(ProfileError, match="not a valid environment variable name"):
        load_profile_text(text, "p.yaml")
