"""Several OS processes on one memory: PostgreSQL (and SQLite) with real servers and real kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import postgres_url, wipe_postgres

WRITER = Path(__file__).with_name("writer.py")
ROOT = Path(__file__).resolve().parents[2]


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(WRITER), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _pages(memory: MemoryOS, user: str) -> list[str]:
    """Every page of the user, STM (all threads) and MTM, by turn id."""
    mtm = [p.metadata.get("turn_id") for p in memory.list_pages(user_id=user)]
    stm = [
        p.metadata.get("turn_id") for t in ("t", "a", "b", "c", "d") for p in memory.get_stm(user_id=user, thread_id=t)
    ]
    return [str(x) for x in mtm + stm]


@pytest.fixture()
def pg() -> str:
    url = postgres_url()
    wipe_postgres(url)
    return url


def test_four_processes_one_user_no_lost_or_duplicate_turn(pg: str) -> None:
    procs = [_spawn("postgres", pg, "ana", "t", str(i * 50), "50") for i in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
        assert out.count("ack ") == 50
    with MemoryOS.from_postgres(pg) as memory:
        pages = _pages(memory, "ana")
        assert len(pages) == 200
        assert sorted(pages) == sorted(f"ana:{i}" for i in range(200))  # exactly once each
        assert memory.check(user_id="ana") == []
        stats = memory.stats(user_id="ana")
        assert stats.stm_pages == 7 and stats.mtm_pages == 193


def test_heat_counters_never_lose_an_increment_across_processes(pg: str) -> None:
    writer = _spawn("postgres", pg, "ana", "t", "0", "40")
    _, err = writer.communicate(timeout=600)
    assert writer.returncode == 0, err[-2000:]
    with MemoryOS.from_postgres(pg) as memory:
        before = sum(s.n_visit for s in memory.list_segments(user_id="ana"))
    readers = [_spawn("retrieve", pg, "ana", "25") for _ in range(3)]
    visits = 0
    for p in readers:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
        visits += int(out.split()[-1])
    assert visits > 0
    with MemoryOS.from_postgres(pg) as memory:
        after = sum(s.n_visit for s in memory.list_segments(user_id="ana"))
    assert after - before == visits  # every visit of every process counted once


def test_eight_users_written_concurrently_stay_isolated(pg: str) -> None:
    users = [f"user{i}" for i in range(8)]
    procs = [_spawn("postgres", pg, u, "t", "0", "12") for u in users]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
    with MemoryOS.from_postgres(pg) as memory:
        for u in users:
            pages = _pages(memory, u)
            assert sorted(pages) == sorted(f"{u}:{i}" for i in range(12))
            texts = [p.user_input for p in memory.list_pages(user_id=u)] + [
                p.user_input for p in memory.get_stm(user_id=u, thread_id="t")
            ]
            assert all(f"from {u}:" in t for t in texts)  # nothing of another user
            assert memory.check(user_id=u) == []
        assert memory.delete_user(user_id="user3") > 0
        import psycopg

        with psycopg.connect(pg) as conn:
            row = conn.execute("SELECT count(*) FROM store WHERE prefix LIKE %s", ("memoryos.user3.%",)).fetchone()
            other = conn.execute("SELECT count(*) FROM store WHERE prefix LIKE %s", ("memoryos.user4.%",)).fetchone()
        assert row is not None and row[0] == 0  # every row of the deleted user is gone
        assert other is not None and other[0] > 0


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_kill_9_mid_ingestion_loses_no_acknowledged_turn(backend: str, tmp_path: Path) -> None:
    target = postgres_url() if backend == "postgres" else str(tmp_path / "m.db")
    if backend == "postgres":
        wipe_postgres(target)
    proc = _spawn(backend, target, "ana", "t", "0", "400")
    acked: list[int] = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 300
    while len(acked) < 40 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acked.append(int(line.split()[1]))
    assert len(acked) >= 40, proc.stderr.read() if proc.stderr else ""
    time.sleep(0.05)  # somewhere in the middle of a turn
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    # the pipe may hold acks that were printed before the kill
    assert proc.stdout is not None
    acked += [int(line.split()[1]) for line in proc.stdout.read().splitlines() if line.startswith("ack ")]
    memory = MemoryOS.from_postgres(target) if backend == "postgres" else MemoryOS.from_sqlite(target)
    with memory:
        memory.repair(user_id="ana")
        assert memory.check(user_id="ana") == []
        stored = _pages(memory, "ana")
        assert len(stored) == len(set(stored))
        assert {f"ana:{i}" for i in acked} <= set(stored)  # no acknowledged turn lost
        # and the memory goes on: the interrupted writer's next turns can be added again
        nxt = max(acked) + 1
        memory.add_turn("After the crash.", "ok", user_id="ana", thread_id="t", turn_id=f"ana:{nxt}")
        assert memory.check(user_id="ana") == []


def test_async_use_and_setup_on_postgres(pg: str) -> None:
    import asyncio

    async def main() -> tuple[int, str, list[str]]:
        async with await MemoryOS.afrom_postgres(pg, setup=False) as memory:
            await memory.asetup()  # idempotent, safe to run again
            await asyncio.gather(
                *(memory.aadd_turn(f"Async note {i} about sailing.", "ok", user_id=f"as{i % 2}") for i in range(8))
            )
            ctx = await memory.aretrieve("sailing", user_id="as0")
            return (await memory.astats(user_id="as0")).stm_pages, ctx.to_prompt(), await memory.acheck(user_id="as1")

    stm, prompt, problems = asyncio.run(main())
    assert stm == 4 and "sailing" in prompt and problems == []


def test_from_postgres_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="connection string"):
        MemoryOS.from_postgres("  ")
    with pytest.raises(ConnectionError, match="127.0.0.1"):  # nothing listens there: the server's address named
        MemoryOS.from_postgres("postgresql://postgres@127.0.0.1:1/none?connect_timeout=2")


def test_many_processes_open_a_fresh_database_at_once(pg: str) -> None:
    """Eight processes run the migrations of a new database together: one migrates, none deadlocks."""
    import uuid

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"memoryos_fresh_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_conninfo(**{**conninfo_to_dict(pg), "dbname": name})  # type: ignore[arg-type]
    code = "import sys; from langchain_memoryos import MemoryOS; MemoryOS.from_postgres(sys.argv[1]).close()"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        procs = [
            subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(8)
        ]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-2000:]
        with MemoryOS.from_postgres(url) as memory:
            memory.add_turn("Fresh database.", "ok", user_id="u")
            assert memory.check(user_id="u") == []
    finally:
        with psycopg.connect(pg, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_a_hung_model_call_in_one_process_locks_nobody_out(backend: str, tmp_path: Path) -> None:
    """A writer stuck in a model call holds no lock: other processes read and write the same user at once."""
    target = postgres_url() if backend == "postgres" else str(tmp_path / "m.db")
    if backend == "postgres":
        wipe_postgres(target)
    proc = _spawn("hang", backend, target, "ana")
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(2)]
        assert lines == ["ack 0", "judging"], proc.stderr.read() if proc.stderr and not all(lines) else lines
        memory = MemoryOS.from_postgres(target) if backend == "postgres" else MemoryOS.from_sqlite(target)
        done: dict[str, object] = {}

        def read_and_write() -> None:
            with memory:
                done["prompt"] = memory.retrieve("cello?", user_id="ana").to_prompt()
                done["added"] = memory.add_turn("I also sing.", "Nice.", user_id="ana", thread_id="other").added

        import threading

        other = threading.Thread(target=read_and_write, daemon=True)
        other.start()
        other.join(60)
        assert not other.is_alive(), "the hung writer's model call held the user's lock"
        assert proc.poll() is None  # the writer is still stuck in its model call
        assert "cello" in str(done["prompt"]) and done["added"] is True
    finally:
        proc.kill()
        proc.wait(timeout=30)
