"""``delete_user``: a deletion that has started finishes, and the deleted text leaves the SQLite files.

The interruption is a real store of each backend whose batches start failing after the first batch
that deleted rows (as when the process dies or the database goes away in the middle of a deletion):
InMemoryStore and SQLite here, PostgreSQL in tests/integration_tests/test_postgres_backend.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.store.filelocks import FileLocks
from tests.conftest import at, bulky_export

MARK = "zebraquartz"
ROWS = 2500  # three batches of deletions
CONFIG = MemoryOSConfig(mtm_max_segments=10_000)


class FailsMidDeletion:
    """Mixed into a real store: once ``deletions_left`` batches that delete rows have run, such batches fail."""

    deletions_left: int | None = None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if self.deletions_left is not None and any(isinstance(op, PutOp) and op.value is None for op in ops):
            if self.deletions_left == 0:
                raise OSError("injected: the database went away in the middle of a deletion")
            self.deletions_left -= 1
        return super().batch(ops)  # type: ignore[misc, no-any-return]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, ops)


class FailingInMemoryStore(FailsMidDeletion, InMemoryStore):
    pass


class FailingSqliteStore(FailsMidDeletion, SqliteStore):
    pass


@dataclass
class Setup:
    """A memory on a failing store, another memory on the same database (its own cache, as another
    process has), and a way to count a user's rows straight in the database."""

    memory: MemoryOS
    store: FailsMidDeletion
    other: MemoryOS
    backend: str
    target: str

    def rows(self, user: str, *, marked: bool = False) -> int:
        if self.backend == "memory":
            items = self.memory.store.search(("memoryos", user), limit=100_000)
            return sum(1 for it in items if not marked or MARK in str(it.value))
        sql = "SELECT count(*) FROM store WHERE prefix LIKE %s" + (" AND CAST(value AS TEXT) LIKE %s" if marked else "")
        params = (f"memoryos.{user}.%", f"%{MARK}%")[: 2 if marked else 1]
        if self.backend == "sqlite":
            with closing(sqlite3.connect(self.target)) as conn:
                return int(conn.execute(sql.replace("%s", "?"), params).fetchone()[0])
        import psycopg

        with psycopg.connect(self.target) as pg:
            row = pg.execute(sql, params).fetchone()
        assert row is not None
        return int(row[0])


@pytest.fixture(scope="module")
def bulky() -> dict[str, Any]:
    return bulky_export(ROWS, MARK, user_id="ana")


@pytest.fixture(params=["memory", "sqlite"])
def setup(request: pytest.FixtureRequest, tmp_path: Path, bulky: dict[str, Any]) -> Iterator[Setup]:
    """The bulky user "ana" and Bob on a failing store (tests/integration_tests has the PostgreSQL one)."""
    closers: list[Any] = []
    if request.param == "memory":
        store: Any = FailingInMemoryStore()
        memory = MemoryOS(store, config=CONFIG)
        other, target = memory, ""  # one process only: no other cache
    else:
        target = str(tmp_path / "m.db")
        conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        store = FailingSqliteStore(conn)
        store.setup()
        locks = FileLocks(f"{target}.locks")
        memory = MemoryOS(store, process_locks=locks, config=CONFIG)
        other = MemoryOS.from_sqlite(target, config=CONFIG)
        closers += [other.close, locks.close, conn.close]
    yield fill(Setup(memory, store, other, request.param, target), bulky)
    for close in closers:
        close()


def fill(s: Setup, bulky: dict[str, Any]) -> Setup:
    """Import the bulky user "ana" and give Bob one turn."""
    s.memory.import_user(bulky, user_id="ana")
    s.memory.add_turn("Bob's goat is called Pim.", "ok", user_id="bob", timestamp=at(0))
    return s


def _interrupted_delete(s: Setup, *, use_async: bool = False) -> None:
    """Cache the user in both memories, then delete it with a store that fails after the first deleting batch."""
    assert len(s.memory.list_pages(user_id="ana")) > ROWS // 3 and len(s.other.list_pages(user_id="ana")) > ROWS // 3
    s.store.deletions_left = 1
    with pytest.raises(OSError, match="injected"):
        if use_async:
            asyncio.run(s.memory.adelete_user(user_id="ana"))
        else:
            s.memory.delete_user(user_id="ana")
    s.store.deletions_left = None
    assert 0 < s.rows("ana", marked=True) < ROWS  # half deleted: the situation the next access must handle


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_an_interrupted_deletion_is_finished_by_the_next_access(setup: Setup, use_async: bool) -> None:
    s = setup
    bob = s.rows("bob")
    _interrupted_delete(s, use_async=use_async)
    # another cache of the user (another process) sees nothing of it, and its read finishes the deletion
    if use_async:
        ctx = asyncio.run(s.other.aretrieve(f"{MARK} bees?", user_id="ana"))
    else:
        ctx = s.other.retrieve(f"{MARK} bees?", user_id="ana")
    assert ctx.stm == [] and ctx.pages == [] and ctx.user_facts == [] and MARK not in ctx.to_prompt()
    assert s.rows("ana") == 0
    assert s.memory.stats(user_id="ana").mtm_pages == 0 and s.memory.check(user_id="ana") == []
    # the next write starts the user afresh
    s.memory.add_turn("A fresh start: I collect stamps.", "Nice.", user_id="ana", timestamp=at(1))
    assert [p.user_input for p in s.other.get_stm(user_id="ana")] == ["A fresh start: I collect stamps."]
    assert s.other.stats(user_id="ana").mtm_pages == 0  # and only the new turn's own fact, written with it
    assert [f.summary for f in s.other.list_facts(user_id="ana")] == ["A fresh start: the user collects stamps."]
    assert s.rows("ana", marked=True) == 0
    assert s.rows("bob") == bob and [p.user_input for p in s.other.get_stm(user_id="bob")] == [
        "Bob's goat is called Pim."
    ]


def _first_access(name: str, memory: MemoryOS) -> None:
    """One access to a half-deleted user: it shows an empty user."""
    if name == "get_stm":
        assert memory.get_stm(user_id="ana") == []
    elif name == "list_pages":
        assert memory.list_pages(user_id="ana") == [] and memory.list_segments(user_id="ana") == []
    elif name == "list_facts":
        assert asyncio.run(memory.alist_facts(user_id="ana")) == []
    elif name == "get_persona":
        assert memory.get_persona(user_id="ana").user_profile == {}
    elif name == "stats":
        stats = asyncio.run(memory.astats(user_id="ana"))
        assert (stats.stm_pages, stats.mtm_pages, stats.segments, stats.user_facts) == (0, 0, 0, 0)
    elif name == "export_user":
        assert memory.export_user(user_id="ana")["items"] == []
    elif name == "write_log":
        assert memory.write_log(user_id="ana") == []
    elif name == "check":
        assert memory.check(user_id="ana") == []
    elif name == "repair":
        fixes = asyncio.run(memory.arepair(user_id="ana"))
        assert len(fixes) == 1 and fixes[0].startswith("user: finished an interrupted delete_user ("), fixes
    elif name == "add_fact":
        assert [e.action for e in memory.add_fact("I'm vegan.", user_id="ana")] == ["stored"]
        assert [f.summary for f in memory.list_facts(user_id="ana")] == ["The user is vegan."]
    elif name == "aadd_turn":
        asyncio.run(memory.aadd_turn("New here.", "Welcome.", user_id="ana", timestamp=at(1)))
        assert memory.stats(user_id="ana").stm_pages == 1 and memory.list_pages(user_id="ana") == []
    elif name == "import_user":
        row = {"namespace": ["persona"], "key": "persona", "value": {"agent_profile": "A stamp expert."}}
        assert memory.import_user({"format": "langchain-memoryos/1", "user_id": "ana", "items": [row]}) == 1
    else:  # pragma: no cover
        raise AssertionError(name)


#: the first access after the interruption, through the memory whose deletion failed or through another one
ACCESSES = [
    ("get_stm", "other memory"),
    ("list_pages", "same memory"),
    ("list_facts", "other memory"),
    ("get_persona", "same memory"),
    ("stats", "other memory"),
    ("export_user", "same memory"),
    ("write_log", "other memory"),
    ("check", "other memory"),
    ("repair", "same memory"),
    ("add_fact", "other memory"),
    ("aadd_turn", "same memory"),
    ("import_user", "other memory"),
]


@pytest.mark.parametrize("setup", ["sqlite"], indirect=True)
@pytest.mark.parametrize(("access", "via"), ACCESSES)
def test_every_access_to_a_half_deleted_user_sees_it_empty_and_finishes_it(setup: Setup, access: str, via: str) -> None:
    s = setup
    _interrupted_delete(s)
    _first_access(access, s.memory if via == "same memory" else s.other)
    assert s.rows("ana", marked=True) == 0  # nothing of the deleted user is left
    assert s.memory.export_user(user_id="ana") == s.other.export_user(user_id="ana")  # both memories agree
    assert s.rows("bob") > 0 and s.memory.check(user_id="bob") == []


# -- the deleted text leaves the SQLite files -------------------------------------------------------------


@pytest.mark.parametrize("opened", ["from_sqlite", "own store, secure_delete off, async"])
def test_deleted_text_is_in_neither_the_sqlite_file_nor_its_wal(tmp_path: Path, opened: str) -> None:
    """No copy of a deleted user's text in the database file (overwritten, even on an SQLite built with
    ``secure_delete`` off) or in its write-ahead log (checkpointed with TRUNCATE)."""
    secret, kept = "quokkaxylophone", "marmaladewalrus"
    path = tmp_path / "m.db"
    wal = Path(f"{path}-wal")

    def found(word: str) -> tuple[bool, bool]:
        data = path.read_bytes()
        log = wal.read_bytes() if wal.exists() else b""
        return word.encode() in data, word.encode() in log

    config = MemoryOSConfig(stm_capacity=2)
    if opened == "from_sqlite":
        memory = MemoryOS.from_sqlite(path, config=config)
    else:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA secure_delete=OFF")  # the default of most SQLite builds (Debian's is on)
        store = SqliteStore(conn)
        store.setup()
        memory = MemoryOS(store, config=config)
        memory._closers.append(conn.close)
    with memory:
        for i in range(8):
            memory.add_turn(f"My locker code is {secret} {i}.", "Noted.", user_id="ana", timestamp=at(0, i))
        memory.add_turn(f"Bob here: {kept}.", "ok", user_id="bob", timestamp=at(0))
        with closing(sqlite3.connect(path)) as other:  # as an automatic checkpoint would: the text reaches the file
            other.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        memory.add_turn(f"Again: {secret}.", "Noted.", user_id="ana", timestamp=at(1))
        assert found(secret) == (True, True)  # in the file and in the log before the deletion
        if opened == "from_sqlite":
            assert memory.delete_user(user_id="ana") > 0
        else:
            assert asyncio.run(memory.adelete_user(user_id="ana")) > 0
        assert found(secret) == (False, False)  # read while the memory is open (closing checkpoints as well)
        assert any(found(kept))  # another user's text is untouched
        assert [p.user_input for p in memory.get_stm(user_id="bob")] == [f"Bob here: {kept}."]
