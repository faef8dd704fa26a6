"""Index snapshots and the write journal (store/snapshot.py): a user loaded from them is the user rebuilt.

Every check compares a state loaded from the snapshot (and the journal) with the
same user rebuilt from its records by a repository that ignores snapshots: the
records, every FAISS matrix, BM25 and chain-window scores, and whole contexts.
The PostgreSQL versions are in tests/integration_tests/test_snapshots.py.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langgraph.store.base import BaseStore

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.index.chain import ChainWindows
from langchain_memoryos.index.lexical import LexicalIndex, page_tokens, tokenize
from langchain_memoryos.kernel.effects import run_sync
from langchain_memoryos.schema import DialoguePage
from langchain_memoryos.store.snapshot import JOURNAL, SNAPSHOT, LazyRecords
from langchain_memoryos.store.state import UserState

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "tests" / "integration_tests" / "writer.py"
T0 = dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)
TOPICS = ["hiking in the Alps", "baking sourdough", "learning Norwegian", "fixing my bike", "jazz piano practice"]
QUERIES = ["What bread did I bake?", "Where did I go hiking?", "Which language am I learning?", "bike repair"]
CONFIG = MemoryOSConfig(mtm_max_segments=10_000)  # as tests/integration_tests/writer.py
USER = "ana"


def build(memory: MemoryOS, turns: int, start: int = 0, thread: str = "t") -> None:
    """Add ``turns`` turns about rotating topics (all but the last 7 reach MTM)."""
    for i in range(start, start + turns):
        topic = TOPICS[(i // 3) % len(TOPICS)]
        memory.add_turn(
            f"Note {i}: today I spent an hour {topic}, and I am Ana.",
            f"Good to hear about {topic} (note {i}).",
            user_id=USER,
            thread_id=thread,
            timestamp=T0 + dt.timedelta(minutes=7 * i),
            turn_id=f"{USER}:{i}",
        )


def loaded(memory: MemoryOS) -> UserState:
    """The user's state as ``memory`` loads it now (its cache dropped first, as in a new process), under the lock."""
    memory.repository.evict(USER)
    with memory.repository.locked(USER):
        return run_sync(memory.repository.load(USER), memory._services)


def rebuilt(memory: MemoryOS) -> UserState:
    """The user's state rebuilt from its records, as ``memory``'s store holds them (no lock: the caller's)."""
    reference = MemoryOS(
        memory.store, config=CONFIG, namespace_prefix=memory.namespace_prefix, agent_id=memory.agent_id
    )
    reference.repository.shared = True
    reference.repository.snapshots = False
    return run_sync(reference.repository.load(USER), reference._services)


def fingerprint(state: UserState, memory: MemoryOS) -> dict[str, Any]:
    """Everything a read or a write uses from a state: records, vectors, BM25 and chain-window scores."""
    gap = memory.config.chain_gap_seconds
    qvecs = [np.asarray(v, dtype=np.float32) for v in memory.embeddings.embed_documents(QUERIES)]

    def vectors(index: Any) -> dict[str, bytes]:
        keys, mat = index.arrays()
        return {key: mat[i].tobytes() for i, key in enumerate(keys)}

    def scored(pairs: Any) -> dict[str, float]:
        return {key: round(score, 6) for key, score in pairs}

    chain = state.chain(gap)
    return {
        "version": state.version,
        "pages": {k: p.to_dict() for k, p in state.pages.items()},
        "segments": {k: s.to_dict() for k, s in state.segments.items()},
        "facts": {kind: {k: r.to_dict() for k, r in state.facts[kind].items()} for kind in ("user", "agent")},
        "stm": {t: [p.to_dict() for p in pages] for t, pages in state.stm.items() if pages},
        "persona": state.persona.to_dict(),
        "meta": state.meta,
        "vectors": {
            name: vectors(index)
            for name, index in [
                ("pages", state.page_index),
                ("segments", state.segment_index),
                ("stm", state.stm_index),
                *[(f"facts/{k}", v) for k, v in state.fact_index.items()],
            ]
        },
        "stm_vectors": {k: v.tobytes() for k, v in state.stm_vectors.items()},
        "bm25": [scored(state.lexicon.search(tokenize(q), 1000)) for q in QUERIES],
        # each window's cosine and BM25 score (the fused ranks would also compare how ties are ordered)
        "chain": [
            {
                size: (
                    scored(chain._vectors[size].search(qv, 100_000)),
                    scored(chain._lexicons[size].search(tokenize(q), 100_000)),
                )
                for size in (2, 3)
            }
            for q, qv in zip(QUERIES, qvecs, strict=True)
        ],
        "windows": {size: dict(chain._members[size]) for size in (2, 3)},
    }


def assert_as_rebuilt(memory: MemoryOS) -> UserState:
    """The user as ``memory`` loads it equals the user rebuilt from the records (at the same version)."""
    with memory.repository.locked(USER):
        memory.repository.evict(USER)
        state = run_sync(memory.repository.load(USER), memory._services)
        reference = rebuilt(memory)
        assert fingerprint(state, memory) == fingerprint(reference, memory)
    return state


def contexts(memory: MemoryOS) -> list[tuple[str, list[tuple[str, float]]]]:
    """The contexts of the queries: the prompt, and the pages with their scores in order (ties too: by key)."""
    out = []
    for q in QUERIES:
        ctx = memory.retrieve(q, user_id=USER, thread_id="t", touch=False)
        out.append((ctx.to_prompt(), [(hit.page.id, hit.score) for hit in ctx.pages]))
    return out


# -- the checks, on any shared store (SQLite here, PostgreSQL in the integration tests) ------------------


def check_a_new_process_loads_the_snapshot_as_if_rebuilt(open_memory: Callable[[], MemoryOS]) -> None:
    with open_memory() as writer:
        writer.repository.snapshot_every = 1  # every flush writes a snapshot: the stamp always matches it
        build(writer, 30)
        expected = contexts(writer)
    with open_memory() as memory:
        state = assert_as_rebuilt(memory)
        assert isinstance(state.pages, LazyRecords) and state.journal == []  # from the snapshot alone
        assert contexts(memory) == expected


def check_a_snapshot_behind_the_stamp_is_brought_up_to_date(open_memory: Callable[[], MemoryOS]) -> None:
    with open_memory() as writer:
        build(writer, 12)  # the first flush wrote a snapshot; the next ones journal rows
        writer.retrieve("Where did I go hiking?", user_id=USER, thread_id="t")  # a read's visits are journaled too
    with open_memory() as reader:
        cached = loaded(reader)
        with open_memory() as other:
            build(other, 20, start=12)  # another process goes on writing
            other.set_agent_profile("A patient coach.", user_id=USER)
            expected = contexts(other)
        # a process that holds the user brings its cache up to date with the journal
        with reader.repository.locked(USER):
            state = run_sync(reader.repository.load(USER), reader._services)
            assert state is cached and fingerprint(state, reader) == fingerprint(rebuilt(reader), reader)
    with open_memory() as memory:  # a new process: the snapshot, then the journal
        state = assert_as_rebuilt(memory)
        assert isinstance(state.pages, LazyRecords) and len(state.journal) > 20
        assert contexts(memory) == expected


def check_a_snapshot_the_journal_does_not_reach_is_never_used(open_memory: Callable[[], MemoryOS]) -> None:
    with open_memory() as writer:
        build(writer, 15)
        store: BaseStore = writer.store
        journal = (*writer.repository.namespace(USER), JOURNAL)
        rows = store.search(journal, limit=1000)
        assert len(rows) == 14
        store.delete(rows[5].namespace, rows[5].key)  # a link of the chain is gone
    with open_memory() as memory:
        state = assert_as_rebuilt(memory)
        assert not isinstance(state.pages, LazyRecords)  # rebuilt from the records
        build(memory, 3, start=15)  # the rebuild's first flush wrote a new snapshot and deleted the stale rows
        store = memory.store
        assert sorted(row.key for row in store.search(journal, limit=1000)) == sorted(loaded(memory).journal)
        assert len(loaded(memory).journal) == 2
        # a write that bypasses the memory stamps the user: the snapshot no longer matches, nor any journal row
        store.put(memory.repository.namespace(USER, "version"), "v", {"v": "written-by-hand"})
        page = store.search(memory.repository.namespace(USER, "pages"), limit=1)[0]
        store.put(page.namespace, page.key, {**page.value, "user_input": "Edited by hand."})
    with open_memory() as memory:
        state = assert_as_rebuilt(memory)
        assert not isinstance(state.pages, LazyRecords)
        assert state.pages[page.key].user_input == "Edited by hand."


def check_a_torn_or_altered_snapshot_is_never_read(open_memory: Callable[[], MemoryOS]) -> None:
    with open_memory() as writer:
        writer.repository.snapshot_every = 1
        build(writer, 10)
        store: BaseStore = writer.store
        ns = (*writer.repository.namespace(USER), SNAPSHOT)
        good = store.get(ns, "state")
        assert good is not None
    data = good.value["data"]
    middle = len(data) // 2
    flipped = data[:middle] + ("A" if data[middle] != "A" else "B") + data[middle + 1 :]
    for broken in (
        {**good.value, "data": data[: len(data) // 2]},
        {**good.value, "data": flipped},
        {**good.value, "format": 99},
        # as format 2 wrote it (a CRC-32 of the body alone): an older format is rebuilt, never read as this one
        {"format": 2, "version": good.value["version"], "crc32": zlib.crc32(base64.b64decode(data)), "data": data},
        {"nothing": "here"},
    ):
        with open_memory() as memory:
            memory.store.put(ns, "state", broken)
        with open_memory() as memory:
            state = assert_as_rebuilt(memory)
            assert not isinstance(state.pages, LazyRecords)


#: Writes one row's value as raw JSON text, bypassing the store's API (as a hand, a tool or an attacker would):
#: ``(namespace, key, text)``.
RawWrite = Callable[[tuple[str, ...], str, str], None]

PIN = "My bank PIN is 4711, keep it secret."


def check_a_snapshot_copied_from_another_user_or_restamped_is_never_used(open_memory: Callable[[], MemoryOS]) -> None:
    """Bob's snapshot row in Ana's place (version edited to Ana's stamp), or Ana's old row restamped: rebuilt."""
    with open_memory() as writer:
        build(writer, 10)  # the first flush wrote Ana's snapshot, the next ones journal rows
        writer.add_turn(PIN, "Noted.", user_id="bob", thread_id="t")  # Bob's first flush: his snapshot
        store: BaseStore = writer.store
        ana, bob = (*writer.repository.namespace(USER), SNAPSHOT), (*writer.repository.namespace("bob"), SNAPSHOT)
        stamp_ns = writer.repository.namespace(USER, "version")
        old = store.get(ana, "state")
        bob_row = store.get(bob, "state")
        assert old is not None and bob_row is not None
        build(writer, 4, start=10)  # Ana moves on: her snapshot is now behind her stamp
        expected = contexts(writer)
        expected_pin = writer.retrieve("What is my PIN?", user_id=USER, thread_id="t", touch=False).to_prompt()
    assert "4711" not in expected_pin
    for value in (bob_row.value, old.value):
        with open_memory() as memory:
            stamp = memory.store.get(stamp_ns, "v")
            assert stamp is not None
            memory.store.put(ana, "state", {**value, "version": stamp.value["v"]})  # one edited field
        with open_memory() as memory:
            pin = memory.retrieve("What is my PIN?", user_id=USER, thread_id="t", touch=False).to_prompt()
            assert "4711" not in pin and pin == expected_pin  # never Bob's text: Ana's own answer
            state = assert_as_rebuilt(memory)
            assert not isinstance(state.pages, LazyRecords)  # rebuilt from the records
            assert contexts(memory) == expected
            assert memory.check(user_id=USER) == []


def check_garbage_journal_rows_never_break_a_load(
    open_memory: Callable[[], MemoryOS], raw: RawWrite, *, text_json: bool
) -> None:
    """Journal rows of the wrong types, with fields missing or (``text_json``) JSON cut short: the user is rebuilt.

    Each broken row either replaces a real link of the chain (a corrupted row) or comes beside them (an extra row);
    every load of the user still succeeds and answers as a clean rebuild does.
    """
    with open_memory() as writer:
        build(writer, 12)  # a snapshot at the first flush, then 11 journal rows: a new process replays them
        expected = contexts(writer)
        store: BaseStore = writer.store
        journal = (*writer.repository.namespace(USER), JOURNAL)
        rows = sorted(store.search(journal, limit=100), key=lambda row: row.key)
        assert len(rows) == 11
    victim = rows[4]
    prev = victim.value["prev"]
    garbage = [
        "5",
        "[1, 2]",
        '"a string"',
        "null",
        '{"keys": [["pages", "p_x"]]}',  # no "prev"
        f'{{"prev": "{prev}"}}',  # no "keys"
        f'{{"prev": "{prev}", "keys": "pages"}}',
        f'{{"prev": "{prev}", "keys": [5, ["pages"]]}}',
        f'{{"prev": "{prev}", "keys": [[7, "k"], ["pages", null]]}}',
        f'{{"prev": "{prev}", "keys": [["nowhere", "k"]]}}',
        f'{{"prev": 12, "keys": {json.dumps(victim.value["keys"])}}}',
    ]
    if text_json:
        garbage += [f'{{"prev": "{prev}", "keys": [["pag', "{"]
    for text in garbage:
        for key in (victim.key, "0-extra-row"):  # a corrupted link, then a stray row beside the chain
            raw(journal, key, text)
            with open_memory() as memory:
                state = assert_as_rebuilt(memory)
                assert not isinstance(state.pages, LazyRecords), text  # rebuilt from the records
                assert contexts(memory) == expected, text
            if key == victim.key:
                raw(journal, key, json.dumps(victim.value))
            else:
                with open_memory() as memory:
                    memory.store.delete(journal, key)
    with open_memory() as memory:  # the chain is whole again: the snapshot and the journal are used
        state = assert_as_rebuilt(memory)
        assert isinstance(state.pages, LazyRecords)
        build(memory, 1, start=12)
        assert memory.check(user_id=USER) == []


def check_a_snapshot_row_that_does_not_parse_is_rebuilt_and_replaced(
    open_memory: Callable[[], MemoryOS], raw: RawWrite, text: str
) -> None:
    """A snapshot row the store itself cannot read (``text``): the load rebuilds, the next flush replaces the row."""
    with open_memory() as writer:
        build(writer, 10)
        expected = contexts(writer)
        ns = (*writer.repository.namespace(USER), SNAPSHOT)
    raw(ns, "state", text)
    with open_memory() as memory:
        state = assert_as_rebuilt(memory)
        assert not isinstance(state.pages, LazyRecords)
        assert contexts(memory) == expected
        build(memory, 1, start=10)  # the rebuild's first flush writes a new snapshot over the broken row
    with open_memory() as memory:
        assert isinstance(assert_as_rebuilt(memory).pages, LazyRecords)


def check_reads_beside_a_writer_process_never_use_a_stale_snapshot(
    target: str, backend: str, open_memory: Callable[[], MemoryOS]
) -> None:
    with open_memory() as first:
        build(first, 6, thread="t")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORYOS_TEST_SNAPSHOT_EVERY": "4"}
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), backend, target, USER, "w", "100", "40"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    seen: set[str | None] = set()
    try:
        while writer.poll() is None and len(seen) < 6:
            with open_memory() as memory:
                seen.add(assert_as_rebuilt(memory).version)  # the writer waits for the lock meanwhile
    finally:
        _, err = writer.communicate(timeout=600)
    assert writer.returncode == 0, err[-2000:]
    assert len(seen) >= 2  # the loads saw the user at several versions
    with open_memory() as memory:
        assert assert_as_rebuilt(memory).stats().stm_pages > 0
        assert memory.check(user_id=USER) == []


def check_kill_9_mid_write_never_leaves_a_torn_snapshot(
    target: str, backend: str, open_memory: Callable[[], MemoryOS]
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORYOS_TEST_SNAPSHOT_EVERY": "1"}  # a snapshot every flush
    rng = random.Random(7)
    start = 0
    for _ in range(3):
        writer = subprocess.Popen(
            [sys.executable, str(WRITER), backend, target, USER, "t", str(start), "400"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert writer.stdout is not None
        acks = 0
        while acks < 5:
            line = writer.stdout.readline()
            assert line, writer.stderr.read() if writer.stderr else ""
            acks += line.startswith("ack ")
        time.sleep(rng.uniform(0.0, 0.2))  # somewhere in a turn: its snapshot may be half written
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
        start += 400
        with open_memory() as memory:
            assert_as_rebuilt(memory)
            assert memory.check(user_id=USER) == []


# -- SQLite -----------------------------------------------------------------------------------------


@pytest.fixture()
def sqlite_target(tmp_path: Path) -> str:
    return str(tmp_path / "memory.db")


@pytest.fixture()
def open_sqlite(sqlite_target: str) -> Iterator[Callable[[], MemoryOS]]:
    yield lambda: MemoryOS.from_sqlite(sqlite_target, config=CONFIG)


def test_a_new_process_loads_the_snapshot_as_if_rebuilt(open_sqlite: Callable[[], MemoryOS]) -> None:
    check_a_new_process_loads_the_snapshot_as_if_rebuilt(open_sqlite)


def test_a_snapshot_behind_the_stamp_is_brought_up_to_date(open_sqlite: Callable[[], MemoryOS]) -> None:
    check_a_snapshot_behind_the_stamp_is_brought_up_to_date(open_sqlite)


def test_a_snapshot_the_journal_does_not_reach_is_never_used(open_sqlite: Callable[[], MemoryOS]) -> None:
    check_a_snapshot_the_journal_does_not_reach_is_never_used(open_sqlite)


def test_a_torn_or_altered_snapshot_is_never_read(open_sqlite: Callable[[], MemoryOS]) -> None:
    check_a_torn_or_altered_snapshot_is_never_read(open_sqlite)


def sqlite_raw(path: str) -> RawWrite:
    """Write a row's value as raw JSON text into the SQLite file (LangGraph's ``store`` table)."""

    def write(namespace: tuple[str, ...], key: str, text: str) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute(
                "INSERT INTO store (prefix, key, value) VALUES (?, ?, ?) "
                "ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value",
                (".".join(namespace), key, text),
            )
        conn.close()

    return write


def test_a_snapshot_copied_from_another_user_or_restamped_is_never_used(open_sqlite: Callable[[], MemoryOS]) -> None:
    check_a_snapshot_copied_from_another_user_or_restamped_is_never_used(open_sqlite)


def test_garbage_journal_rows_never_break_a_load(sqlite_target: str, open_sqlite: Callable[[], MemoryOS]) -> None:
    check_garbage_journal_rows_never_break_a_load(open_sqlite, sqlite_raw(sqlite_target), text_json=True)


def test_a_snapshot_row_that_does_not_parse_is_rebuilt_and_replaced(
    sqlite_target: str, open_sqlite: Callable[[], MemoryOS]
) -> None:
    check_a_snapshot_row_that_does_not_parse_is_rebuilt_and_replaced(
        open_sqlite,
        sqlite_raw(sqlite_target),
        '{"format": 3, "data": "TU9T',  # the JSON text cut short
    )


def test_reads_beside_a_writer_process_never_use_a_stale_snapshot(
    sqlite_target: str, open_sqlite: Callable[[], MemoryOS]
) -> None:
    check_reads_beside_a_writer_process_never_use_a_stale_snapshot(sqlite_target, "sqlite", open_sqlite)


def test_kill_9_mid_write_never_leaves_a_torn_snapshot(sqlite_target: str, open_sqlite: Callable[[], MemoryOS]) -> None:
    check_kill_9_mid_write_never_leaves_a_torn_snapshot(sqlite_target, "sqlite", open_sqlite)


def test_an_export_holds_no_snapshot_and_an_import_makes_it_stale(open_sqlite: Callable[[], MemoryOS]) -> None:
    with open_sqlite() as memory:
        build(memory, 8)
        data = memory.export_user(user_id=USER)
        assert {row["namespace"][0] for row in data["items"]}.isdisjoint({"snapshot", "journal", "version"})
        for row in data["items"]:
            if row["namespace"] == ["pages"]:
                row["value"]["user_input"] = "Imported."
        memory.import_user(data, mode="replace")  # over the stored user
    with open_sqlite() as memory:
        state = assert_as_rebuilt(memory)
        assert {p.user_input for p in state.pages.values()} == {"Imported."}


# -- the bulk-restored indices behave as the ones built one document at a time ---------------------


def test_a_restored_bm25_index_scores_adds_and_removes_as_the_built_one() -> None:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(300)]
    docs = {f"d{i}": [rng.choice(words) for _ in range(rng.randint(0, 25))] for i in range(800)}
    built = LexicalIndex()
    for key, tokens in docs.items():
        built.add(key, tokens)
    built.remove([f"d{i}" for i in range(0, 800, 9)])
    restored = LexicalIndex.restore(built.bags())

    def same() -> None:
        for _ in range(50):
            query = rng.sample(words, 3)
            a, b = dict(built.search(query, 1000)), dict(restored.search(query, 1000))
            assert a.keys() == b.keys() and all(abs(a[k] - b[k]) < 1e-9 for k in a)

    same()
    for ix in (built, restored):  # removals of restored documents, additions, a replaced document, compaction
        ix.remove([f"d{i}" for i in range(1, 800, 4)])
        for i in range(800, 900):
            ix.add(f"d{i}", docs[f"d{i - 800}"])
        ix.add("d3", ["w1", "w2"])
    same()
    for ix in (built, restored):
        ix.remove([f"d{i}" for i in range(0, 900, 2)])
    same()
    assert len(built) == len(restored)


def _built_and_restored(pages: list[DialoguePage], vectors: np.ndarray) -> tuple[ChainWindows, ChainWindows]:
    """The chain built page by page, and the same chain restored from its snapshot and the pages' words."""
    built, lexicon = ChainWindows(8, gap_seconds=1800), LexicalIndex()
    built.build((p, vectors[i]) for i, p in enumerate(pages))
    for p in pages:
        lexicon.add(p.id, page_tokens(p))
    restored = ChainWindows.restore(built.snapshot(), vectors, {p.id: i for i, p in enumerate(pages)}, lexicon.bags())
    return built, restored


def test_restored_chain_windows_score_and_change_as_the_built_ones() -> None:
    rng = np.random.default_rng(5)
    pages = [
        DialoguePage(
            id=f"p{i}",
            user_input=f"{TOPICS[i % 5]} {i}",
            agent_response="ok",
            thread_id=f"t{i % 2}",
            timestamp=T0 + dt.timedelta(minutes=10 * i + (600 if i % 7 == 0 else 0)),
            metadata={"_seq": i},
        )
        for i in range(60)
    ]
    vectors = rng.standard_normal((60, 8)).astype(np.float32)
    built, restored = _built_and_restored(pages, vectors)
    query = (vectors[3], tokenize("baking sourdough 3"))

    def same() -> None:
        a, b = built.scores(*query, depth=50, k=20), restored.scores(*query, depth=50, k=20)
        assert a.keys() == b.keys()
        for size in a:
            assert a[size].keys() == b[size].keys() and all(abs(a[size][k] - b[size][k]) < 1e-6 for k in a[size])
        assert built._members == restored._members

    same()
    extra = DialoguePage(
        id="px",
        user_input="more sourdough",
        agent_response="",
        thread_id="t0",
        timestamp=T0 + dt.timedelta(minutes=601),
        metadata={"_seq": 100},
    )
    for chain in (built, restored):
        chain.remove(["p10", "p11", "p30"])
        chain.add(extra, vectors[0])
    same()


def test_a_restored_chain_builds_its_nodes_only_when_changed_and_then_as_the_built_ones() -> None:
    rng = np.random.default_rng(8)
    pages = [
        DialoguePage(
            id=f"p{i}",
            user_input=f"{TOPICS[i % 5]} {i}",
            agent_response="ok",
            thread_id=f"t{i % 3}",
            timestamp=T0 + dt.timedelta(minutes=5 * i, hours=3 * (i % 11 == 0)),
            metadata={"_seq": i} if i % 13 else {},  # a few pages without a sequence number come first
        )
        for i in range(40)
    ]
    vectors = rng.standard_normal((40, 8)).astype(np.float32)
    built, restored = _built_and_restored(pages, vectors)
    query = (vectors[7], tokenize("jazz piano 7"))
    assert restored.scores(*query, depth=40, k=20) == built.scores(*query, depth=40, k=20)
    assert restored._pending is not None and not restored._node_map  # a read built no node
    assert len(restored) == len(built) and restored._order == built._order
    assert restored._nodes.keys() == built._nodes.keys() and restored._pending is None
    for pid, node in built._nodes.items():
        twin = restored._nodes[pid]
        assert (twin.thread_id, twin.order, twin.timestamp) == (node.thread_id, node.order, node.timestamp)
        assert twin.vector.tobytes() == node.vector.tobytes()
        assert sorted(restored._tokens(pid)) == sorted(built._tokens(pid))


def test_a_bm25_index_restored_from_joined_bags_is_the_index_of_the_joined_documents() -> None:
    rng = random.Random(4)
    words = [f"w{i}" for i in range(40)]
    docs = {f"d{i}": [rng.choice(words) for _ in range(rng.randint(0, 12))] for i in range(300)}
    pages = LexicalIndex()
    for key, tokens in docs.items():
        pages.add(key, tokens)
    spans = [(i, i + 1, i + 2) for i in range(0, 297, 2)]  # windows of three pages: terms repeat across members
    keys = [f"w{a}" for a, _, _ in spans]
    built = LexicalIndex()
    for key, span in zip(keys, spans, strict=True):
        built.add(key, [t for i in span for t in docs[f"d{i}"]])
    restored = LexicalIndex.restore(pages.bags().joined(keys, np.array(spans)))
    assert all(restored._counts(slot) == built._counts(slot) for slot in range(len(keys)))

    def same() -> None:
        for _ in range(40):
            query = rng.sample(words, 2)
            a, b = dict(built.search(query, 1000)), dict(restored.search(query, 1000))
            assert a.keys() == b.keys() and all(abs(a[k] - b[k]) < 1e-9 for k in a)

    same()
    for ix in (built, restored):  # document frequencies follow removals of restored documents
        ix.remove(keys[::3])
        ix.add("extra", ["w1", "w1", "w2"])
    same()
    for ix in (built, restored):  # and a compaction rebuilds the index from the summed counts
        ix.remove(keys[1::3])
    same()
    assert restored._base is None and len(built) == len(restored)


def test_a_scoped_memory_keeps_its_snapshot_and_journal_in_its_scope(sqlite_target: str) -> None:
    def scoped() -> MemoryOS:
        return MemoryOS.from_sqlite(sqlite_target, config=CONFIG, agent_id="coach")

    with scoped() as writer:
        build(writer, 12)
        root = writer.repository.namespace(USER)
        assert root[:3] == ("memoryos", "%agent", "coach")
        assert writer.store.get((*root, SNAPSHOT), "state") is not None
        assert len(writer.store.search((*root, JOURNAL), limit=100)) == 11
    with scoped() as memory:
        state = assert_as_rebuilt(memory)
        assert isinstance(state.pages, LazyRecords) and state.root == memory.repository.root
        build(memory, 2, start=12)  # writes land in the scope
        assert len(memory.list_pages(user_id=USER)) == 7
    with MemoryOS.from_sqlite(sqlite_target, config=CONFIG) as unscoped:
        assert unscoped.stats(user_id=USER).mtm_pages == 0  # nothing leaked out of the scope


def test_a_snapshot_written_without_zstandard_is_read_with_it_and_a_bad_stream_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_memoryos.store import snapshot

    state = UserState(user_id="u", label="u", dimension=2)
    state.version = "v1"
    for i, text in enumerate(["pottery class", "sourdough starter", "fjords in May"]):
        page = DialoguePage(id=f"p{i}", user_input=text, agent_response="", metadata={"_seq": i})
        state.put_page(page, np.array([1.0, float(i)], dtype=np.float32) / np.hypot(1.0, i))
    with_zstd = snapshot.encode_snapshot(state)
    monkeypatch.setattr(snapshot, "_zstd", lambda: None)
    with_zlib = snapshot.encode_snapshot(state)
    assert with_zlib["data"] != with_zstd["data"]
    twin = snapshot.decode_snapshot(with_zlib, state)  # zlib needs nothing installed
    assert twin is not None and [twin.pages[k].user_input for k in twin.pages] == [
        "pottery class",
        "sourdough starter",
        "fjords in May",
    ]
    with pytest.raises(ValueError, match="pip install zstandard"):  # a Zstandard stream, read without it
        snapshot._decompress(b"s\x28\xb5\x2f\xfd")
    monkeypatch.undo()
    twin = snapshot.decode_snapshot(with_zstd, state)
    assert twin is not None and list(twin.pages) == list(state.pages)
    for broken in (b"s" + b"not zstd", b"z" + b"not zlib", b"q" + b"unknown"):
        with pytest.raises(ValueError):
            snapshot._decompress(broken)


def test_lazy_records_read_from_one_blob_copy_apart_and_read_any_json_they_were_given() -> None:
    import copy
    import math

    from langchain_memoryos.store import snapshot

    texts = snapshot.Lines(b'{"x":1}{"x":NaN}[2]', [0, 7, 16, 19])
    records: LazyRecords[Any] = LazyRecords(["a", "b"], texts[:2], snapshot._json)  # "[2]" left out
    twin = copy.deepcopy(records)  # a writer's fork
    assert twin["a"] == {"x": 1} and records.raw("a") == '{"x":1}'  # the fork's read leaves the original unread
    assert math.isnan(records["b"]["x"])  # orjson refuses NaN: json reads it, as json wrote it
    records["a"] = {"x": 2}
    del records["b"]
    assert twin["a"] == {"x": 1} and twin.raw("b") == '{"x":NaN}' and records.raw("a") is None
    assert list(records.items()) == [("a", {"x": 2})] and list(twin) == ["a", "b"]
    with pytest.raises(KeyError):
        records.raw("b")
