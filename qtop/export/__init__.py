"""Recordings turned into files other tools read: CSV tables and Perfetto traces."""
