"""Live sessions: ``LiveSource`` turns a device run into the event stream, and
``progress`` prints it headless."""
