import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qtop.transport.command import CommandError, assignment, build, exports, join, quote

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)


def echo_back(shell: str, words: list[str]) -> list[str]:
    script = "for a in " + " ".join(quote(w) for w in words) + "; do printf '%s\\0' \"$a\"; done"
    out = subprocess.run([shell, "-c", script], capture_output=True, check=True).stdout
    return out.decode("utf-8", errors="surrogateescape").split("\0")[:-1]


@given(st.lists(TEXT, min_size=1, max_size=5))
def test_quoted_words_reach_dash_unchanged(words):
    assert echo_back("/bin/dash", words) == words


@given(st.lists(TEXT, min_size=1, max_size=3))
def test_quoted_words_reach_bash_unchanged(words):
    assert echo_back("/bin/bash", words) == words


def test_safe_words_stay_bare_and_the_rest_is_single_quoted():
    assert quote("tail") == "tail"
    assert quote("+123") == "+123"
    assert quote("") == "''"
    assert quote("a b") == "'a b'"
    assert quote("it's") == "'it'\\''s'"
    assert quote("$HOME") == "'$HOME'"
    # A trailing newline would end the command line: it must be quoted like anything else.
    assert quote("0\n") == "'0\n'"
    assert quote("rm\n") == "'rm\n'"


def test_nul_bytes_are_refused_not_truncated():
    with pytest.raises(CommandError, match="NUL"):
        quote("a\x00b")


def test_build_quotes_cwd_env_and_argv():
    line = build(["ls", "-l", "my dir"], env={"A": "x y"}, cwd="/tmp/a b")
    assert line == "cd '/tmp/a b' && A='x y' ls -l 'my dir'"


def test_env_names_are_checked():
    with pytest.raises(CommandError, match="not a valid environment variable name"):
        assignment("A;rm", "x")
    assert exports({"A": "1", "B": "two words"}) == "export A=1\nexport B='two words'\n"


def test_empty_commands_are_refused():
    with pytest.raises(CommandError):
        join([])
