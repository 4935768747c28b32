"""Every action has a key, a line in the ? help and an entry in the command palette."""

from __future__ import annotations

from fixtures.sessions import simple_session_events
from textual.binding import Binding
from textual.widgets import Static

from qtop.session import Session
from qtop.ui.actions import ACTIONS, key_text, keys_text
from qtop.ui.app import PANE_KEYS, STACKED, QtopApp
from qtop.ui.screens.help import HelpScreen
from tests.ui.helpers import SIMPLE, SUSTAINED, FedSource, make_app, replayed, settled, until


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


async def test_help_lists_every_binding_the_panes_own_too():
    async with replayed(SIMPLE, (120, 60), to_end=False, onsets=False) as (app, pilot, _source):
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.query_one("#help-text", Static).render().plain
        for spec in ACTIONS:
            assert spec.help in text
            assert key_text(spec) in text
        for title, key, pane in PANE_KEYS:
            assert f"{title}  (when it has the focus: {key}, or click it)" in text
            for binding in pane.BINDINGS:
                assert isinstance(binding, Binding)
                assert f"{keys_text(binding.key, binding.key_display)}" in text
                assert binding.tooltip in text
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
        assert "Ops pane: Sort [o]" in titles and "Device log: Follow [f]" in titles


async def test_live_palette_has_stop_but_no_replay_controls():
    app = make_app(Session(FedSource(simple_session_events()[1:])))
    async with app.run_test(size=(160, 48)):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert "Stop run [s]" in titles
        assert not any(title.startswith(("Faster", "Next mark", "Step")) for title in titles)


async def test_a_palette_command_runs_its_action():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (_app, pilot, source):
        source.set_speed(1.0)
        await pilot.press("ctrl+p")
        await pilot.press(*"Faster")
        await pilot.pause()
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


async def test_on_a_small_terminal_the_panes_take_turns_under_the_latency():
    async with replayed(SUSTAINED, (80, 24), onsets=False) as (app, pilot, _source):
        shown = [pane.id for pane in app.panes if pane.display and pane.id in STACKED]
        assert shown == ["thermal"]
        assert app.query_one("#latency").display and app.query_one("#pane-tabs").display
        await pilot.press("5")
        await settled(pilot)
        shown = [pane.id for pane in app.panes if pane.display and pane.id in STACKED]
        assert shown == ["ops"] and app.query_one("#pane-tabs").active == "tab-ops"
        # The table has room for its rows, not one.
        assert app.query_one("#ops-table").size.height >= 5
        await pilot.click("#tab-decay")
        await settled(pilot)
        assert app.query_one("#decay").display and not app.query_one("#ops").display
        # Wide enough again, all six are on screen.
        await pilot.resize_terminal(100, 30)
        await settled(pilot)
        assert all(pane.display for pane in app.panes)
        assert not app.query_one("#pane-tabs").display


def test_replay_without_a_terminal_says_to_use_headless(capsys):
    from qtop.cli import main

    assert main(["replay", str(SIMPLE)]) == 2
    err = capsys.readouterr().err
    assert "needs a terminal" in err and "--headless" in err
