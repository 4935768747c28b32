"""Every action has a handler and its own keys (the help and the palette: test_replay_app)."""

from __future__ import annotations

from textual.binding import Binding

from qtop.ui.actions import ACTIONS
from qtop.ui.app import PANE_KEYS, QtopApp
from tests.ui.helpers import SIMPLE


def test_every_action_has_a_handler_and_unique_keys():
    keys = [key for spec in ACTIONS for key in spec.keys.split(",")]
    pane_keys = [b.key for *_, pane in PANE_KEYS for b in pane.BINDINGS if isinstance(b, Binding)]
    assert len(keys) == len(set(keys))
    # A pane's own keys do not shadow the app's.
    assert not set(keys) & set(pane_keys)
    for spec in ACTIONS:
        name = spec.action.partition("(")[0]
        assert callable(getattr(QtopApp, f"action_{name}", None)), name
    for *_, pane in PANE_KEYS:
        for binding in pane.BINDINGS:
            assert isinstance(binding, Binding) and binding.tooltip
            name = binding.action.partition("(")[0]
            assert callable(getattr(pane, f"action_{name}", None)), name


def test_the_bindings_are_the_action_table():
    bound = {(b.key, b.action) for b in QtopApp.BINDINGS if isinstance(b, Binding)}
    assert bound == {(spec.keys, spec.action) for spec in ACTIONS}


def test_replay_without_a_terminal_says_to_use_headless(capsys):
    from qtop.cli import main

    assert main(["replay", str(SIMPLE)]) == 2
    err = capsys.readouterr().err
    assert "needs a terminal" in err and "--headless" in err
