"""Shared fixtures: real stores (InMemoryStore, SqliteStore file) and the offline embeddings."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langchain_memoryos import MemoryOS, MemoryOSConfig

BASE = dt.datetime(2024, 1, 1, 9, 0, tzinfo=dt.UTC)


def at(days: float = 0, minutes: float = 0) -> dt.datetime:
    """A timestamp ``days`` and ``minutes`` after the test epoch."""
    return BASE + dt.timedelta(days=days, minutes=minutes)


@pytest.fixture(params=["memory", "sqlite"])
def make_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., MemoryOS]]:
    """Factory of MemoryOS instances on a real store (parametrized: InMemoryStore, SqliteStore)."""
    made: list[MemoryOS] = []

    def factory(config: MemoryOSConfig | None = None, **kwargs: Any) -> MemoryOS:
        if request.param == "memory":
            mem = MemoryOS(InMemoryStore(), config=config, **kwargs)
        else:
            mem = MemoryOS.from_sqlite(tmp_path / f"m{len(made)}.db", config=config, **kwargs)
        made.append(mem)
        return mem

    yield factory
    for mem in made:
        mem.close()
