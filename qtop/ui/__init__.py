"""The Textual front end. ``open_ui(session)`` runs the dashboard on a session.

Importing this package does not import Textual; ``open_ui`` does, when called,
so the headless commands stay free of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qtop.session import Session


def open_ui(session: Session, *, run_outlives_qtop: bool = True) -> int:
    """Run the dashboard (live or replay, found from the session's source) until quit.

    Returns 0; an error that stopped the source is raised again once the
    terminal is restored, for the command line to print.
    """
    from qtop.ui.app import open_ui as run

    return run(session, run_outlives_qtop=run_outlives_qtop)


async def run_ui(session: Session, *, run_outlives_qtop: bool = True) -> int:
    """The same, awaited from inside a running event loop."""
    from qtop.ui.app import run_ui as run

    return await run(session, run_outlives_qtop=run_outlives_qtop)
