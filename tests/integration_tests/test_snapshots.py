"""Index snapshots and the write journal on PostgreSQL: the checks of tests/unit_tests/test_snapshots.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import postgres_url, wipe_postgres
from tests.unit_tests.test_snapshots import (
    CONFIG,
    check_a_new_process_loads_the_snapshot_as_if_rebuilt,
    check_a_snapshot_behind_the_stamp_is_brought_up_to_date,
    check_a_snapshot_the_journal_does_not_reach_is_never_used,
    check_a_torn_or_altered_snapshot_is_never_read,
    check_kill_9_mid_write_never_leaves_a_torn_snapshot,
    check_reads_beside_a_writer_process_never_use_a_stale_snapshot,
)


@pytest.fixture()
def pg() -> str:
    url = postgres_url()
    wipe_postgres(url)
    return url


@pytest.fixture()
def open_pg(pg: str) -> Callable[[], MemoryOS]:
    return lambda: MemoryOS.from_postgres(pg, config=CONFIG)


def test_a_new_process_loads_the_snapshot_as_if_rebuilt(open_pg: Callable[[], MemoryOS]) -> None:
    check_a_new_process_loads_the_snapshot_as_if_rebuilt(open_pg)


def test_a_snapshot_behind_the_stamp_is_brought_up_to_date(open_pg: Callable[[], MemoryOS]) -> None:
    check_a_snapshot_behind_the_stamp_is_brought_up_to_date(open_pg)


def test_a_snapshot_the_journal_does_not_reach_is_never_used(open_pg: Callable[[], MemoryOS]) -> None:
    check_a_snapshot_the_journal_does_not_reach_is_never_used(open_pg)


def test_a_torn_or_altered_snapshot_is_never_read(open_pg: Callable[[], MemoryOS]) -> None:
    check_a_torn_or_altered_snapshot_is_never_read(open_pg)


def test_reads_beside_a_writer_process_never_use_a_stale_snapshot(pg: str, open_pg: Callable[[], MemoryOS]) -> None:
    check_reads_beside_a_writer_process_never_use_a_stale_snapshot(pg, "postgres", open_pg)


def test_kill_9_mid_write_never_leaves_a_torn_snapshot(pg: str, open_pg: Callable[[], MemoryOS]) -> None:
    check_kill_9_mid_write_never_leaves_a_torn_snapshot(pg, "postgres", open_pg)
