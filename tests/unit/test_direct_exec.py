"""Which commands the runner execs as their own words, and which go through `sh -c`."""

from __future__ import annotations

import pytest

from qtop.device.plan import RunOptions, _plan_sh, runs_directly
from qtop.profiles import load_profile_text


@pytest.mark.parametrize(
    "command",
    [
        "qnn-net-run --model libmodel.so --backend libQnnHtp.so --input_list inputs.txt",
        "./genie-t2t-run -c genie_config.json --profile=out/profile.json",
        "/usr/bin/true",
        "  sleep 0.5  ",
        "bench --threads=4 --affinity 0,1 --tag run@1 --ratio 50%",
    ],
)
def test_plain_words_run_directly(command):
    assert runs_directly(command)


@pytest.mark.parametrize(
    "command",
    [
        "echo one | cat",  # a pipeline
        "run >out.txt",  # a redirection
        "cd build && ./bench",  # a list
        "FOO=1 ./bench",  # an assignment
        "./bench 'a b'",  # quoting
        "./bench $HOME",  # an expansion
        "./bench ~/model.so",  # a tilde
        "./bench *.so",  # a glob
        "./bench\t--fast",  # a tab: words split on spaces only
        "./bench\n./other",  # two commands
        "exit 3",  # the shell's own command
        "cd /tmp",
        "",
    ],
)
def test_anything_a_shell_must_read_goes_through_sh(command):
    assert not runs_directly(command)


def plan_exec(run: str, options: RunOptions | None = None) -> str:
    profile = load_profile_text(f"name: p\nrun: {{iterations: 5, {run[1:]}\n", "p.yaml")
    text = _plan_sh(profile, "/bin/sh", "run", options or RunOptions())
    return next(line for line in text.splitlines() if line.startswith("QTOP_EXEC="))


def test_a_run_goes_directly_only_when_every_command_and_the_calibration_can():
    assert plan_exec("{command: ./bench --fast}") == "QTOP_EXEC=direct"
    variants = "{command: ./bench, variants: [{name: a}, {name: b, command: './bench | tee log'}]}"
    assert plan_exec(variants) == "QTOP_EXEC=sh"
    calibration = RunOptions(calibration_command="sleep 0 && true")
    assert plan_exec("{command: ./bench}", calibration) == "QTOP_EXEC=sh"
