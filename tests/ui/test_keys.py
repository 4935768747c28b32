"""Every action has a key, a line in the ? help and an entry in the command palette."""

from __future__ import annotations

from fixtures.sessions import simple_session_events
from textual.widgets import Static

from qtop.ui.actions import ACTIONS, key_text
from qtop.ui.app import QtopApp
from qtop.ui.screens.help import HelpScreen
from tests.ui.helpers import SIMPLE, ScriptedSource, replayed, until


def test_every_action_has_a_handler_and_unique_keys():
    keys = [key for spec in ACTIONS for key in spec.keys.split(",")]
    assert len(keys) == len(set(keys))
    for spec in ACTIONS:
        name = spec.action.partition("(")[0]
        assert callable(getattr(QtopApp, f"action_{name}", None)), name


def test_the_bindings_are_the_action_table():
    bound = {(b.key, b.action) for b in QtopApp.BINDINGS}
    assert bound == {(spec.keys, spec.action) for spec in ACTIONS}


async def test_help_lists_every_binding():
    async with replayed(SIMPLE, (120, 60), to_end=False, onsets=False) as (app, pilot, _source):
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.query_one("#help-text", Static).render().plain
        for spec in ACTIONS:
            assert spec.help in text
            assert key_text(spec) in text
        # A replay cannot be stopped or recorded, and the help says why.
        assert "(live runs only)" in text and "(when recording)" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_the_palette_offers_every_action_that_applies():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (app, _pilot, _source):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        for spec in ACTIONS:
            entry = f"{spec.label} [{spec.key_display or spec.keys.split(',')[0]}]"
            assert (entry in titles) == (spec.needs not in ("recorder", "stoppable")), entry


async def test_live_palette_has_stop_but_no_replay_controls():
    source = ScriptedSource(simple_session_events()[1:])
    from qtop.session import Session

    app = QtopApp(Session(source))
    async with app.run_test(size=(160, 48)):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert "Stop run [s]" in titles
        assert not any(title.startswith(("Faster", "Next mark", "Step")) for title in titles)


async def test_a_palette_command_runs_its_action():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (_app, pilot, source):
        source.set_speed(1.0)
        await pilot.press("ctrl+p")
        await pilot.press(*"Faster")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: source.speed == 2.0)


async def test_number_keys_focus_panes_and_z_zooms():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (app, pilot, _source):
        await pilot.press("6")
        assert app.focused is not None and app.focused.id == "log-lines"
        await pilot.press("z")
        assert app.screen.maximized is not None and app.screen.maximized.id == "log"
        await pilot.press("z")
        assert app.screen.maximized is None
        await pilot.press("1")
        assert app.focused is not None and app.focused.id == "latency"


def test_replay_without_a_terminal_says_to_use_headless(capsys):
    from qtop.cli import main

    assert main(["replay", str(SIMPLE)]) == 2
    err = capsys.readouterr().err
    assert "needs a terminal" in err and "--headless" in err
