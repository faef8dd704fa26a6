"""MemoryOS.add_turns: the same memory as add_turn turn by turn (real SQLite, offline embeddings), checked input."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.operations import bulk, reader
from tests.conftest import at

CONFIG = dict(stm_capacity=3, mtm_max_segments=2)

_SAYS = [
    ("Ana", "I moved to Lisbon last spring and I work as a nurse at the city hospital."),
    ("Ben", "That's great! I'm training for the Boston marathon, I ran 18 miles this weekend."),
    ("Ana", "I baked sourdough bread with my starter yesterday, my kids loved it."),
    ("Ben", "My knees hurt after the long marathon training run, so I'm resting."),
    ("Ana", "I'm allergic to peanuts, so I always check the labels."),
    ("Ben", "I bought new running shoes for the marathon, they were expensive."),
    ("Ana", "My sister Carla is visiting me in Lisbon next month."),
    ("Ben", "I'm learning Japanese, I practice kanji every morning before work."),
    ("Ana", "I adopted a rescue dog named Pixel, he loves long walks."),
    ("Ben", "I play chess online every evening, my rating is 1600 now."),
    ("Ana", "We went camping in the mountains, the tent leaked in the rain."),
    ("Ben", "I'm vegan since last year and I feel much better."),
]


def _turns() -> list[dict[str, Any]]:
    """41 turns over three threads: facts, topic changes, a duplicate, explicit turn ids, an idle thread."""
    out: list[dict[str, Any]] = []
    for i in range(36):
        first, second = _SAYS[i % len(_SAYS)], _SAYS[(i * 5 + 1) % len(_SAYS)]
        turn: dict[str, Any] = {
            "user_input": f"{first[0]}: {first[1]} (day {i // 4})",
            "agent_response": f"{second[0]}: {second[1]}",
            "timestamp": at(i // 4, (i % 4) * 7),
            "metadata": {"source_id": [f"D{i}:1", f"D{i}:2"]},
            "thread_id": "main" if i % 3 else "side",
        }
        if i % 7 == 0:
            turn["turn_id"] = f"turn-{i}"
        out.append(turn)
    out.insert(10, dict(out[9]))  # the same turn again: not added twice
    out.insert(5, {"user_input": "I'm a nurse and I live in Lisbon.", "thread_id": "short", "timestamp": at(1)})
    tail = [("I moved to Porto.", "Nice!"), ("I quit my job at the hospital.", "Big change!"), ("And the dog?", "")]
    out += [{"user_input": q, "agent_response": a, "timestamp": at(10, i)} for i, (q, a) in enumerate(tail)]
    return out


def _one_by_one(memory: MemoryOS, turns: list[Any], user: str) -> list[Any]:
    reports = []
    for turn in turns:
        fields = bulk.turn_fields(turn)
        fields.setdefault("thread_id", "default")
        reports.append(
            memory.add_turn(fields.pop("user_input"), fields.pop("agent_response", ""), user_id=user, **fields)
        )
    return reports


def _close(x: Any, y: Any) -> bool:
    """Equal, floats up to rounding: vectors and the similarities computed from them.

    A page embedded in a batch gets its text's vector alone up to how the BLAS rounds a product of
    many rows against one of a few (equal to the bit on some CPUs, a few ulps apart on others).
    """
    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-5)
    if dataclasses.is_dataclass(x) and dataclasses.is_dataclass(y):
        return type(x) is type(y) and _close(vars(x), vars(y))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(
            _same_vector(x[k], y[k]) if k == "vector" else _close(x[k], y[k]) for k in x
        )
    if isinstance(x, list | tuple) and isinstance(y, list | tuple):
        return len(x) == len(y) and all(_close(a, b) for a, b in zip(x, y, strict=True))
    return bool(x == y)


def _same_vector(x: str, y: str) -> bool:
    """Two stored vectors (base64 float32) equal up to rounding."""
    a, b = (np.frombuffer(base64.b64decode(v), dtype=np.float32) for v in (x, y))
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=0, atol=1e-6))


def _memory_of(memory: MemoryOS, user: str) -> dict[str, Any]:
    """Everything stored for the user (the export without its random version stamp), and what the facade shows."""
    rows = {
        (tuple(item["namespace"]), item["key"]): item["value"]
        for item in memory.export_user(user_id=user)["items"]
        if item["namespace"] != ["version"]
    }
    return {
        "rows": rows,
        "threads": {
            t: [p.id for p in memory.get_stm(user_id=user, thread_id=t)] for t in memory.list_threads(user_id=user)
        },
        "segments": [(s.id, s.page_ids, s.keywords, s.summary) for s in memory.list_segments(user_id=user)],
        "facts": sorted(f.summary for f in memory.list_facts(user_id=user)),
        "log": [(e.action, e.record.summary, e.reason) for e in memory.write_log(user_id=user)],
        "stats": vars(memory.stats(user_id=user)),
    }


def _sqlite(tmp_path: Path, name: str) -> MemoryOS:
    return MemoryOS.from_sqlite(tmp_path / f"{name}.db", config=MemoryOSConfig(**CONFIG))  # type: ignore[arg-type]


@pytest.mark.parametrize("worker", [True, False, "hung"], ids=["worker-process", "in-process", "hung-worker"])
def test_add_turns_stores_what_add_turn_stores_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: bool | str
) -> None:
    submitted: list[int] = []
    stopped: list[str] = []
    if worker == "hung":  # a worker that never answers: each window waits its timeout, then analyses here
        from concurrent.futures import Future

        never: Future[Any] = Future()

        class Hung:
            def submit(self, request: Any, **_: Any) -> Future[Any]:
                return never

            def stop(self, reason: str) -> None:
                stopped.append(reason)

        monkeypatch.setattr(reader, "analyser", Hung)
        monkeypatch.setattr(bulk, "WORKER_TIMEOUT_SECONDS", 0.01)
        monkeypatch.setattr(bulk, "WORKER_SECONDS_PER_PAGE", 0.0)
    elif worker:
        pool = reader.analyser()
        assert pool is None or pool.ready(120)  # the spawned worker started (it is kept for the process's life)
        submit = reader.submit_pages
        monkeypatch.setattr(
            reader,
            "submit_pages",
            lambda pool, k, pages: submitted.append(len(pages)) or submit(pool, k, pages),  # type: ignore[func-returns-value]
        )
    else:
        monkeypatch.setattr(reader, "analyser", lambda: None)
    monkeypatch.setattr(bulk, "WINDOW", 16)  # several windows: the worker analyses ahead of the writes
    turns = _turns()
    with _sqlite(tmp_path, "one") as one, _sqlite(tmp_path, "bulk") as many:
        expected = _one_by_one(one, turns, "ana")
        reports = many.add_turns(turns, user_id="ana", thread_id="default")
        assert len(reports) == len(turns)
        assert _close([vars(r) for r in reports], [vars(r) for r in expected])
        before, after = _memory_of(one, "ana"), _memory_of(many, "ana")
    assert [r.added for r in reports].count(False) == 1  # the duplicate
    # every page (its facts are written with its turn) was analysed in the worker process
    assert sum(submitted) == (len(turns) if worker is True and reader.analyser() is not None else 0)
    assert stopped == (["did not answer in time"] * 3 if worker == "hung" else [])  # each hung window: stopped
    assert sum(len(r.moved_to_mtm) for r in reports) >= 30 and after["stats"]["segments"] >= 2
    assert any(r.segments_evicted for r in reports) and after["stats"]["user_facts"] >= 10
    # the same rows: every vector (a page's, a fact's) is its text's alone, whatever the batch (up to rounding)
    assert before["rows"].keys() == after["rows"].keys()
    for key, value in before["rows"].items():
        assert _close(value, after["rows"][key]), key
    assert {k: v for k, v in before.items() if k != "rows"} == {k: v for k, v in after.items() if k != "rows"}


def test_aadd_turns_and_background_mode_store_the_same(tmp_path: Path) -> None:
    turns = _turns()[:20]
    with _sqlite(tmp_path, "sync") as a, _sqlite(tmp_path, "async") as b:
        a.add_turns(turns, user_id="u")
        asyncio.run(b.aadd_turns(turns, user_id="u"))
        assert _memory_of(a, "u") == _memory_of(b, "u")
    queued = MemoryOS(write_mode="background", config=MemoryOSConfig(**CONFIG))  # type: ignore[arg-type]
    reports = queued.add_turns(turns, user_id="u")
    assert all(r.queued for r in reports)
    assert len(queued.get_stm(user_id="u", thread_id="main")) == 3  # a read waits for the queued turns
    queued.close()


def test_add_turns_checks_every_turn_before_writing(tmp_path: Path) -> None:
    with _sqlite(tmp_path, "checked") as memory:
        with pytest.raises(ValueError, match=r"turns\[2\]: an empty turn"):
            memory.add_turns([("a", "b"), ("c", "d"), ("", "")], user_id="u")
        with pytest.raises(ValueError, match=r"turns\[0\] has unknown keys \['text'\]"):
            memory.add_turns([{"text": "hi"}], user_id="u")
        with pytest.raises(ValueError, match=r"turns\[1\] is a sequence of 3 items"):
            memory.add_turns([("a", "b"), ("a", "b", "c")], user_id="u")
        with pytest.raises(TypeError, match="iterable of turns"):
            memory.add_turns("hello", user_id="u")
        with pytest.raises(ValueError, match="user"):
            memory.add_turns([("a", "b")], user_id="")
        assert memory.list_threads(user_id="u") == []
        assert memory.add_turns([], user_id="u") == []
        reports = memory.add_turns(iter([("I live in Oslo.", "Nice!"), "Just a note."]), user_id="u")
        assert [p.user_input for p in memory.get_stm(user_id="u")] == ["I live in Oslo.", "Just a note."]
        assert [r.page_id for r in reports] == [p.id for p in memory.get_stm(user_id="u")]


def test_two_encoder_threads_give_the_same_rows() -> None:
    from langchain_memoryos.embeddings import resolve_embeddings

    encoder = resolve_embeddings()
    texts = [f"{who}: {said} ({i})" for i, (who, said) in enumerate(_SAYS * 6)] + ["short", ""]
    one, two = encoder.encode(texts), encoder.encode(texts, threads=2)  # type: ignore[attr-defined]
    assert one.shape == (len(texts), 384) and np.array_equal(one, two)


def test_a_window_is_stored_in_one_batch_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window's turns are one store transaction: a failure stores nothing of it, and the same call again completes."""
    from langgraph.store.sqlite import SqliteStore

    monkeypatch.setattr(bulk, "WINDOW", 8)
    turns = _turns()[:20]  # windows of 8, 8 and 4 turns
    writes: list[int] = []
    batch = SqliteStore.batch

    def counted(store: SqliteStore, ops: Any) -> Any:
        ops = list(ops)
        writes.append(sum(1 for op in ops if type(op).__name__ == "PutOp"))
        return batch(store, ops)

    real, seen = bulk.run_turn, {"turns": 0}  # type: ignore[attr-defined]

    def failing(repo: Any, settings: Any, t: Any) -> Any:
        seen["turns"] += 1
        if seen["turns"] == 12:  # the 4th turn of the second window
            raise RuntimeError("the disk is full")
        return (yield from real(repo, settings, t))

    with _sqlite(tmp_path, "one") as one:
        added = [r.added for r in _one_by_one(one, turns, "ana")]
        expected = _memory_of(one, "ana")
    monkeypatch.setattr(SqliteStore, "batch", counted)
    monkeypatch.setattr(bulk, "run_turn", failing)
    with _sqlite(tmp_path, "bulk") as memory:
        with pytest.raises(RuntimeError, match="the disk is full"):
            memory.add_turns(turns, user_id="ana", thread_id="default")
    assert len([w for w in writes if w]) == 1  # the first window, in one batch; nothing of the second
    with _sqlite(tmp_path, "bulk") as memory:  # what the store holds, read anew
        stored = memory.stats(user_id="ana")
        assert stored.stm_pages + stored.mtm_pages == 8
        monkeypatch.setattr(bulk, "run_turn", real)
        writes.clear()
        reports = memory.add_turns(turns, user_id="ana", thread_id="default")
        assert [r.added for r in reports] == [False] * 8 + added[8:]  # the stored window is not added again
        assert len([w for w in writes if w]) == 2  # two windows written, one batch each
        assert _close(_memory_of(memory, "ana"), expected)
