import subprocess
import sys

import pytest

from qtop.cli import COMMANDS, main


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert f"usage: qtop {command}" in capsys.readouterr().out


def test_design_section_4_commands_are_all_registered():
    assert set(COMMANDS) == {
        "demo", "run", "probe", "replay", "report", "compare", "ops", "export", "sim", "profiles",
    }  # fmt: skip


def test_bad_usage_exits_2_with_a_fix(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["report"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "the following arguments are required: FILE" in err
    assert "fix: see 'qtop report --help'" in err


def test_unknown_command_exits_2(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["frobnicate"])
    assert exited.value.code == 2


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "qtop demo" in capsys.readouterr().out


def test_console_script_runs():
    result = subprocess.run(
        [sys.executable, "-m", "qtop", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stdout.startswith("qtop ")
