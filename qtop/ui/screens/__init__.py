"""Modal screens: help, a marker's note, a yes/no question."""
