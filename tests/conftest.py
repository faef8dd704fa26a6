"""Shared helpers: the test clock, the PostgreSQL test server, bulky users and memories on real stores."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langchain_memoryos import MemoryOS, MemoryOSConfig

BASE = dt.datetime(2024, 1, 1, 9, 0, tzinfo=dt.UTC)


def at(days: float = 0, minutes: float = 0) -> dt.datetime:
    """A timestamp ``days`` and ``minutes`` after the test epoch."""
    return BASE + dt.timedelta(days=days, minutes=minutes)


def postgres_url() -> str:
    """The test server's URL (``make test`` starts one with ``scripts/test-postgres.sh`` and exports it)."""
    url = os.environ.get("MEMORYOS_TEST_POSTGRES", "")
    if not url:
        pytest.fail(
            "MEMORYOS_TEST_POSTGRES is not set: run the tests with `make test` (it starts a local PostgreSQL), "
            "or export MEMORYOS_TEST_POSTGRES=$(scripts/test-postgres.sh)"
        )
    return url


def wipe_postgres(url: str) -> None:
    """Empty the store's table, so that each test starts from nothing."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('public.store')").fetchone() != (None,):
            conn.execute("TRUNCATE store")


def bulky_export(rows: int, marker: str, *, user_id: str = "bulky") -> dict[str, Any]:
    """An export of a consistent user of ``rows`` rows, built fast (import it with ``import_user``).

    A few real turns and a fact (STM, MTM pages, segments, persona, log) are
    written to an in-memory store; then one MTM page is copied (each copy with
    its own id and text naming ``marker``, all listed by the page's segment) and
    one log event is copied, until the export has ``rows`` items.
    """
    memory = MemoryOS(InMemoryStore(), config=MemoryOSConfig(stm_capacity=2))
    for i in range(5):
        memory.add_turn(f"{marker}: I keep bees, hive {i}.", "Lovely.", user_id=user_id, timestamp=at(0, i))
    memory.add_fact(f"I'm allergic to {marker} pollen.", user_id=user_id)
    data = memory.export_user(user_id=user_id)
    items: list[dict[str, Any]] = data["items"]
    page = next(r for r in items if r["namespace"] == ["pages"])
    segment = next(r for r in items if r["namespace"] == ["segments"] and r["key"] == page["value"]["segment_id"])
    event = next(r for r in items if r["namespace"] == ["log"])
    extra = rows - len(items)
    assert extra >= 0, f"a bulky user has at least {len(items)} rows"
    for i in range(extra // 2):
        key = f"p_bulk{i:08d}"
        items.append(
            {"namespace": ["pages"], "key": key, "value": {**page["value"], "id": key, "user_input": f"{marker} {i}"}}
        )
        segment["value"]["page_ids"].append(key)
    for i in range(extra - extra // 2):
        items.append({"namespace": ["log"], "key": f"9{i:011d}", "value": event["value"]})
    return data


@contextmanager
def memory_factory(backend: str, tmp_path: Path) -> Iterator[Callable[..., MemoryOS]]:
    """A factory of MemoryOS instances on a real store of ``backend``, all closed on exit.

    ``backend`` is ``"memory"`` (InMemoryStore), ``"sqlite"`` (a SqliteStore file in ``tmp_path``) or
    ``"postgres"`` (the test server, emptied first). The ``make_memory`` fixture of tests/unit_tests
    is parametrized over the first two, the one of tests/integration_tests over PostgreSQL.
    """
    made: list[MemoryOS] = []
    if backend == "postgres":
        wipe_postgres(postgres_url())

    def factory(config: MemoryOSConfig | None = None, **kwargs: Any) -> MemoryOS:
        if backend == "memory":
            mem = MemoryOS(InMemoryStore(), config=config, **kwargs)
        elif backend == "sqlite":
            mem = MemoryOS.from_sqlite(tmp_path / f"m{len(made)}.db", config=config, **kwargs)
        elif backend == "postgres":
            mem = MemoryOS.from_postgres(postgres_url(), config=config, **kwargs)
        else:
            raise ValueError(f"unknown backend {backend!r}")
        made.append(mem)
        return mem

    try:
        yield factory
    finally:
        for mem in made:
            mem.close()
