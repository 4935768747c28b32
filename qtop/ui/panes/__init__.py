"""One module per pane; each pane draws itself from a ``View`` on the app's refresh."""
