"""Shared fixtures: small deterministic sessions and recordings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from adb_support import needs_adb
from fixtures.sessions import simple_session_events

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def simple_events() -> list:
    return simple_session_events()


@pytest.fixture(params=["ssh", pytest.param("adb", marks=needs_adb)])
def transport_kind(request: pytest.FixtureRequest) -> str:
    """A live test that takes this runs over SSH and again over adb (the real adb client)."""
    return request.param
