"""qtop: a terminal monitor for on-device inference runs on Qualcomm edge boards."""

__version__ = "0.1.0"
