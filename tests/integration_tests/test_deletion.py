"""A deletion that has started finishes: kill -9 in the middle of ``delete_user``, SQLite and PostgreSQL.

Each round imports a user of several thousand rows, starts a process that deletes it, and kills that
process at a random point of the deletion (found by watching the user's rows in the database). Then the
next access — from this process, which still holds the user in its cache, or from a fresh memory — sees
nothing of the user and leaves none of its rows; another user's rows are untouched.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from tests.conftest import bulky_export, postgres_url, wipe_postgres

WRITER = Path(__file__).with_name("writer.py")
ROOT = Path(__file__).resolve().parents[2]
MARK = "zebraquartz"
ROWS = 5000
CONFIG = MemoryOSConfig(mtm_max_segments=10_000)


class Raw:
    """The user's rows counted straight in the database, without the memory."""

    def __init__(self, backend: str, target: str) -> None:
        self.backend, self.target = backend, target

    def _query(self, sql: str, *params: str) -> list[tuple[Any, ...]]:
        if self.backend == "sqlite":
            with closing(sqlite3.connect(self.target, timeout=30)) as conn:
                return conn.execute(sql.replace("%s", "?"), params).fetchall()
        import psycopg

        with psycopg.connect(self.target, autocommit=True) as conn:
            return conn.execute(sql, params).fetchall()

    def rows(self, user: str) -> int:
        return int(self._query("SELECT count(*) FROM store WHERE prefix LIKE %s", f"memoryos.{user}.%")[0][0])

    def marked(self, user: str) -> int:
        """Rows of the user that still hold the bulky user's text."""
        sql = "SELECT count(*) FROM store WHERE prefix LIKE %s AND CAST(value AS TEXT) LIKE %s"
        return int(self._query(sql, f"memoryos.{user}.%", f"%{MARK}%")[0][0])

    def digest(self, user: str) -> str:
        sql = "SELECT prefix, key, CAST(value AS TEXT) FROM store WHERE prefix LIKE %s"
        return hashlib.sha256(repr(sorted(self._query(sql, f"memoryos.{user}.%"))).encode()).hexdigest()


@contextmanager
def _opened(backend: str, target: str) -> Iterator[MemoryOS]:
    memory = (
        MemoryOS.from_postgres(target, config=CONFIG)
        if backend == "postgres"
        else MemoryOS.from_sqlite(target, config=CONFIG)
    )
    with memory:
        yield memory


def _kill_mid_deletion(backend: str, target: str, raw: Raw, trigger: tuple[str, float]) -> None:
    """Start a process deleting ``ana`` and kill -9 it once the deletion has started (its rows changed):
    ``("share", x)`` when they fell below the share ``x`` of what they were, ``("after", s)`` ``s`` seconds
    after the first change."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), "delete", backend, target, "ana"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
    kind, value = trigger
    before = raw.rows("ana")
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        now = raw.rows("ana")
        if (kind == "after" and now != before) or (kind == "share" and now < before * value):
            break
    if kind == "after":
        time.sleep(value)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def _finish_by(name: str, backend: str, target: str, cached: MemoryOS, raw: Raw) -> None:
    """The next access to the killed deletion's user: it sees nothing of the user, and finishes the deletion."""

    def fresh() -> Any:
        return _opened(backend, target)  # a new memory, as a new process has

    if name == "check (new process)":
        with fresh() as memory:
            assert memory.check(user_id="ana") == []
            assert memory.list_pages(user_id="ana") == [] and memory.list_facts(user_id="ana") == []
    elif name == "repair (cached)":
        fixes = cached.repair(user_id="ana")
        assert len(fixes) == 1 and fixes[0].startswith("user: finished an interrupted delete_user"), fixes
    elif name == "retrieve (cached)":
        ctx = cached.retrieve(f"What about {MARK} and my bees?", user_id="ana")
        assert ctx.stm == [] and ctx.pages == [] and ctx.user_facts == [] and MARK not in ctx.to_prompt()
        assert cached.get_stm(user_id="ana") == [] and cached.stats(user_id="ana").mtm_pages == 0
    elif name == "add_turn (new process)":
        with fresh() as memory:
            memory.add_turn("A fresh start: I collect stamps.", "Nice.", user_id="ana")
            stats = memory.stats(user_id="ana")
            assert (stats.stm_pages, stats.mtm_pages, stats.user_facts) == (1, 0, 1)  # the turn's fact, at once
            assert [f.summary for f in memory.list_facts(user_id="ana")] == ["A fresh start: the user collects stamps."]
            assert [p.user_input for p in memory.get_stm(user_id="ana")] == ["A fresh start: I collect stamps."]
            assert memory.check(user_id="ana") == []
        assert raw.marked("ana") == 0 and raw.rows("ana") > 0  # only the new user's rows
        cached.delete_user(user_id="ana")  # the next round starts without it
    elif name == "delete_user again (cached)":
        cached.delete_user(user_id="ana")
    elif name == "aexport_user (new process)":
        with fresh() as memory:
            assert asyncio.run(memory.aexport_user(user_id="ana"))["items"] == []
            assert asyncio.run(memory.awrite_log(user_id="ana")) == []
    else:  # pragma: no cover
        raise AssertionError(name)
    assert raw.rows("ana") == 0 and raw.marked("ana") == 0  # nothing of the user is left in the database


FINISHERS = [
    "check (new process)",
    "repair (cached)",
    "retrieve (cached)",
    "add_turn (new process)",
    "delete_user again (cached)",
    "aexport_user (new process)",
]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_kill_9_mid_delete_user_then_the_next_access_finishes_the_deletion(backend: str, tmp_path: Path) -> None:
    target = postgres_url() if backend == "postgres" else str(tmp_path / "m.db")
    if backend == "postgres":
        wipe_postgres(target)
    raw = Raw(backend, target)
    rng = random.Random(16)
    data = bulky_export(ROWS, MARK, user_id="ana")
    left: list[int] = []
    with _opened(backend, target) as cached:
        for i in range(3):
            cached.add_turn(f"Bob's note {i}: my goat is called Pim.", "ok", user_id="bob", thread_id="b")
        bob = raw.digest("bob")
        for round_, finisher in enumerate(FINISHERS):
            cached.import_user(data, user_id="ana")
            assert raw.rows("ana") >= ROWS
            assert len(cached.list_pages(user_id="ana")) > ROWS // 3  # this process holds the user in its cache
            # right after the deletion started, when a random share of the rows is gone, a random time after the start
            trigger = ("after", 0.0) if round_ == 0 else ("after", rng.uniform(0.0, 0.3)) if round_ == 5 else None
            trigger = trigger or ("share", rng.uniform(0.1, 0.9))
            _kill_mid_deletion(backend, target, raw, trigger)
            left.append(raw.rows("ana"))
            _finish_by(finisher, backend, target, cached, raw)
            assert raw.digest("bob") == bob, f"round {round_}: another user's rows changed"
        assert [p.user_input for p in cached.get_stm(user_id="bob", thread_id="b")][
            -1
        ] == "Bob's note 2: my goat is called Pim."
        assert cached.check(user_id="bob") == []
    print(f"{backend}: rows left by each kill: {left}")
    assert sum(0 < n for n in left) >= len(FINISHERS) // 2, left  # most kills landed in the middle of a deletion


def test_delete_vacuum_on_postgres_rewrites_or_vacuums_the_store_table(tmp_path: Path) -> None:
    """``memoryos delete --postgres URL --vacuum`` runs VACUUM on the store table; ``--vacuum-full`` rewrites it."""
    import psycopg
    from typer.testing import CliRunner

    from langchain_memoryos.cli import app

    url = postgres_url()
    wipe_postgres(url)
    with MemoryOS.from_postgres(url) as memory:
        memory.import_user(bulky_export(300, MARK, user_id="ana"), user_id="ana")
        memory.add_turn("Bob keeps goats.", "ok", user_id="bob")

    def table() -> tuple[int, int]:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute(
                "SELECT pg_relation_filenode('store'), vacuum_count FROM pg_stat_user_tables WHERE relname = 'store'"
            ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    runner = CliRunner()
    node, vacuums = table()
    plain = runner.invoke(app, ["delete", "--user", "ana", "--yes", "--postgres", url, "--vacuum"])
    assert plain.exit_code == 0, plain.output
    assert "deleted" in plain.output and "ran VACUUM store" in plain.output
    for _ in range(50):  # the statistics are reported when the vacuum ends; give them a moment
        if table()[1] > vacuums:
            break
        time.sleep(0.1)
    assert table() == (node, vacuums + 1)  # vacuumed in place

    full = runner.invoke(app, ["delete", "--user", "bob", "--yes", "--postgres", url, "--vacuum-full"])
    assert full.exit_code == 0 and "ran VACUUM (FULL) store" in full.output, full.output
    assert table()[0] != node  # rewritten into a new file: the dead rows' bytes are not in it

    hint = runner.invoke(app, ["delete", "--user", "nobody", "--yes", "--postgres", url])
    assert hint.exit_code == 0 and "VACUUM" in hint.output  # without the flag, the operator is told what to run
    with MemoryOS.from_postgres(url) as memory:
        assert asyncio.run(memory.avacuum()) == "VACUUM store"
