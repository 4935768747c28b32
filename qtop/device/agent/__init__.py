"""The device agent: POSIX sh scripts sent over the link (package data)."""
