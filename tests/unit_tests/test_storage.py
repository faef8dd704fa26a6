"""Store layout: id encoding, page keys, vector codec, FAISS cache, SQLite persistence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.index.vector_index import VectorIndex, decode_vector, encode_vector
from langchain_memoryos.store.repository import decode_label, encode_label, page_key
from tests.conftest import at


@pytest.mark.parametrize(
    "user_id",
    ["a.b@x.com", "plain", "50%.", "%2E", "..", "ünïcødé.名前", "with space", "x" * 300, "a\x00b"],
)
def test_label_encoding_round_trips_and_is_accepted_by_langgraph(user_id: str) -> None:
    label = encode_label(user_id)
    assert "." not in label and "\x00" not in label and label
    assert decode_label(label) == user_id
    store = InMemoryStore()
    store.put(("memoryos", label, "x"), "k", {"v": 1})
    assert store.get(("memoryos", label, "x"), "k") is not None


def test_label_encoding_is_injective() -> None:
    ids = ["a.b", "a%2Eb", "a%252Eb", "a%b", "a%25b"]
    assert len({encode_label(i) for i in ids}) == len(ids)


def test_empty_user_id_is_rejected() -> None:
    with pytest.raises(ValueError):
        encode_label("")


def test_page_keys_are_deterministic() -> None:
    assert page_key("t", "turn-1") == page_key("t", "turn-1")
    assert page_key("t", "turn-1") != page_key("t2", "turn-1")
    assert page_key("t", None, "2024", "a", "b") == page_key("t", None, "2024", "a", "b")
    assert page_key("t", None, "2024", "a", "b") != page_key("t", None, "2024", "a", "c")
    # a lone surrogate in the text does not crash key derivation
    assert page_key("t", None, "2024", "bad \ud800", "b").startswith("p_")


def test_vector_codec_is_exact_and_compact() -> None:
    v = np.random.default_rng(0).standard_normal(384).astype(np.float32)
    s = encode_vector(v)
    assert np.array_equal(decode_vector(s), v)
    assert len(s) == 2048  # 384 float32 in base64


def test_vector_index_add_replace_remove_and_subset_search() -> None:
    idx = VectorIndex(3)
    idx.add_many(["a", "b", "c"], np.eye(3, dtype=np.float32))
    q = np.array([0.9, 0.1, 0.0], dtype=np.float32)
    assert [k for k, _ in idx.search(q, 2)] == ["a", "b"]
    assert idx.search(q, 5, within=["b", "c"])[0][0] == "b"
    idx.add("a", np.array([0, 0, 1], dtype=np.float32))  # replace
    assert len(idx) == 3 and np.array_equal(idx.get("a"), [0, 0, 1])
    idx.remove(["b", "zzz"])
    assert "b" not in idx and len(idx) == 2
    assert idx.search(q, 5, within=["b"]) == []
    with pytest.raises(ValueError, match="dimension"):
        idx.add("d", np.ones(4, dtype=np.float32))


def _fill(memory: MemoryOS) -> None:
    for i in range(12):
        memory.add_turn(
            f"I practice the violin every evening, lesson {i}.",
            "Keep practicing!",
            user_id="a.b@x.com",
            thread_id="t.1",
            timestamp=at(0, i * 5),
            metadata={"source_id": f"D1:{i}"},
        )
    memory.add_fact("I'm allergic to peanuts.", user_id="a.b@x.com")


def test_sqlite_persists_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with MemoryOS.from_sqlite(path, config=MemoryOSConfig(stm_capacity=4)) as first:
        _fill(first)
        before = first.stats(user_id="a.b@x.com")
        seg_before = [(s.id, s.page_ids, s.n_visit) for s in first.list_segments(user_id="a.b@x.com")]
        ctx_before = first.retrieve("violin lessons", user_id="a.b@x.com", thread_id="t.1")
        facts_before = [f.summary for f in first.list_facts(user_id="a.b@x.com")]
    with MemoryOS.from_sqlite(path, config=MemoryOSConfig(stm_capacity=4)) as second:
        assert second.stats(user_id="a.b@x.com") == before
        seg_after = [(s.id, s.page_ids) for s in second.list_segments(user_id="a.b@x.com")]
        assert [(a, b) for a, b, _ in seg_before] == seg_after
        # the retrieval's visit was persisted
        assert sum(s.n_visit for s in second.list_segments(user_id="a.b@x.com")) == sum(
            n for *_, n in seg_before
        ) + len(ctx_before.segments)
        assert [p.user_input for p in second.get_stm(user_id="a.b@x.com", thread_id="t.1")][-1].endswith("lesson 11.")
        facts = [f.summary for f in second.list_facts(user_id="a.b@x.com")]
        assert "The user is allergic to peanuts." in facts
        assert facts == facts_before
        # and it keeps working: the next turn continues the same STM FIFO
        report = second.add_turn("One more violin lesson.", "ok", user_id="a.b@x.com", thread_id="t.1", timestamp=at(1))
        assert len(report.moved_to_mtm) == 1


def test_a_turn_is_one_transaction_on_sqlite(tmp_path: Path) -> None:
    """A failing controller in the middle of a turn leaves the store as it was."""
    from langchain_memoryos.controllers import HeuristicController

    class Exploding(HeuristicController):
        armed = False

        def analyze_page(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
            if self.armed:
                raise RuntimeError("boom")
            return super().analyze_page(*args, **kwargs)  # type: ignore[arg-type]

    controller = Exploding()
    with MemoryOS.from_sqlite(tmp_path / "m.db", controller=controller, config=MemoryOSConfig(stm_capacity=1)) as m:
        m.add_turn("first", "a", user_id="u", timestamp=at(0))
        assert m.controller is controller  # the caller's controller is used as given
        controller.armed = True
        with pytest.raises(RuntimeError, match="boom"):
            m.add_turn("second", "b", user_id="u", timestamp=at(0, 1))
        assert [p.user_input for p in m.get_stm(user_id="u")] == ["first"]
        controller.armed = False
        m.add_turn("second", "b", user_id="u", timestamp=at(0, 1))
        assert [p.user_input for p in m.get_stm(user_id="u")] == ["second"]
        assert m.stats(user_id="u").mtm_pages == 1


def test_sqlite_async_falls_back_to_threads(tmp_path: Path) -> None:
    import asyncio

    with MemoryOS.from_sqlite(tmp_path / "m.db") as m:
        report = asyncio.run(m.aadd_turn("I live in Lyon.", "Nice!", user_id="u", timestamp=at(0)))
        assert report.added
        assert isinstance(m.store, SqliteStore)
        assert [p.user_input for p in m.get_stm(user_id="u")] == ["I live in Lyon."]


def test_export_import_round_trip() -> None:
    a = MemoryOS(config=MemoryOSConfig(stm_capacity=3))
    _fill(a)
    dump = a.export_user(user_id="a.b@x.com")
    json.dumps(dump)  # JSON-compatible
    b = MemoryOS(config=MemoryOSConfig(stm_capacity=3))
    assert b.import_user(dump) == len(dump["items"])
    assert b.export_user(user_id="a.b@x.com") == dump
    assert b.stats(user_id="a.b@x.com") == a.stats(user_id="a.b@x.com")
    with pytest.raises(ValueError, match="export"):
        b.import_user({"items": []})
