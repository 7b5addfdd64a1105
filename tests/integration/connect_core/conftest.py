"""Fixtures of the REST server tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connect_core.rest.server import RestServer


@pytest.fixture
def servers() -> Iterator[list[RestServer]]:
    """Servers a test started, stopped after it."""
    started: list[RestServer] = []
    yield started
    for srv in started:
        srv.stop()
