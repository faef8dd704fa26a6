"""Fixtures of the unit tests: offline and in this process (InMemoryStore and SQLite files only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import memory_factory


@pytest.fixture(params=["memory", "sqlite"])
def make_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., MemoryOS]]:
    """Factory of MemoryOS instances on a real store (parametrized: InMemoryStore, SqliteStore).

    The same tests run on PostgreSQL in tests/integration_tests/test_postgres_backend.py.
    """
    with memory_factory(request.param, tmp_path) as factory:
        yield factory
