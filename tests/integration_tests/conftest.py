"""Fixtures of the integration tests: the PostgreSQL test server (``MEMORYOS_TEST_POSTGRES``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import memory_factory


@pytest.fixture(params=["postgres"])
def make_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., MemoryOS]]:
    """Factory of MemoryOS instances on the PostgreSQL test server, emptied first.

    It takes the place of the unit tests' ``make_memory`` (InMemoryStore, SQLite) for the backend tests
    that tests/integration_tests/test_postgres_backend.py runs again on PostgreSQL.
    """
    with memory_factory(request.param, tmp_path) as factory:
        yield factory
