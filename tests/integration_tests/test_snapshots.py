"""Index snapshots and the write journal on PostgreSQL: the checks of tests/unit_tests/test_snapshots.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import postgres_url, wipe_postgres
from tests.unit_tests.test_snapshots import (
    CONFIG,
    RawWrite,
    check_a_new_process_loads_the_snapshot_as_if_rebuilt,
    check_a_snapshot_behind_the_stamp_is_brought_up_to_date,
    check_a_snapshot_copied_from_another_user_or_restamped_is_never_used,
    check_a_snapshot_row_that_does_not_parse_is_rebuilt_and_replaced,
    check_a_snapshot_the_journal_does_not_reach_is_never_used,
    check_a_torn_or_altered_snapshot_is_never_read,
    check_garbage_journal_rows_never_break_a_load,
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


def postgres_raw(url: str) -> RawWrite:
    """Write a row's value as raw JSON into LangGraph's ``store`` table (PostgreSQL keeps only JSON that parses)."""
    import psycopg

    def write(namespace: tuple[str, ...], key: str, text: str) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO store (prefix, key, value) VALUES (%s, %s, %s::jsonb) "
                "ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value",
                (".".join(namespace), key, text),
            )

    return write


def test_a_snapshot_copied_from_another_user_or_restamped_is_never_used(open_pg: Callable[[], MemoryOS]) -> None:
    check_a_snapshot_copied_from_another_user_or_restamped_is_never_used(open_pg)


def test_garbage_journal_rows_never_break_a_load(pg: str, open_pg: Callable[[], MemoryOS]) -> None:
    check_garbage_journal_rows_never_break_a_load(open_pg, postgres_raw(pg), text_json=False)


def test_a_snapshot_row_that_does_not_parse_is_rebuilt_and_replaced(pg: str, open_pg: Callable[[], MemoryOS]) -> None:
    check_a_snapshot_row_that_does_not_parse_is_rebuilt_and_replaced(open_pg, postgres_raw(pg), "5")  # not an object
