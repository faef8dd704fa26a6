"""The calls mem0, langmem and LangGraph's store taught users (issue 32, build point 5). Every backend.

``add_fact(..., metadata=, timestamp=)`` keeps the caller's metadata with the fact through every read,
an export and an import; ``search`` pages by ``offset``, filters by metadata (``filter=``, LangGraph's
``BaseStore.search`` name), by time (``since=`` / ``until=``) and by kind; ``list_facts`` pages by
``limit`` / ``offset``. (The same tests run on PostgreSQL through
tests/integration_tests/test_postgres_backend.py.)
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Callable

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import at

MakeMemory = Callable[..., MemoryOS]


def test_add_fact_keeps_its_metadata_and_time_through_reads_export_and_import(make_memory: MakeMemory) -> None:
    memory = make_memory()
    given = {"source": "crm", "tags": ["diet", "health"], "checked": dt.date(2024, 5, 1), "n": 3}
    kept = {"source": "crm", "tags": ["diet", "health"], "checked": "2024-05-01", "n": 3}
    events = memory.add_fact("I'm allergic to peanuts.", user_id="u", metadata=given, timestamp=at(3))
    assert [(e.action, e.record.metadata) for e in events] == [("stored", kept)]
    fid = events[0].record.id
    assert memory.get_fact(fid, user_id="u").fact.metadata == kept
    assert memory.get_fact(fid, user_id="u").fact.created_at == at(3)
    assert [f.metadata for f in memory.list_facts(user_id="u")] == [kept]
    # a caller's copy: changing it changes nothing stored
    memory.list_facts(user_id="u")[0].metadata["tags"].append("changed")
    assert memory.list_facts(user_id="u")[0].metadata == kept
    # search filters facts by their metadata as it filters pages by theirs
    hits = memory.search("peanuts allergy", user_id="u", filter={"source": "crm"}, kinds=("fact",))
    assert [(h.id, h.fact.metadata if h.fact else None) for h in hits] == [(fid, kept)]
    assert memory.search("peanuts allergy", user_id="u", filter={"tags": "diet"}, kinds=("fact",))
    assert memory.search("peanuts allergy", user_id="u", filter={"source": "web"}, kinds=("fact",)) == []
    # the export carries it, and an import brings it back
    data = memory.export_user(user_id="u")
    stored = [r["value"] for r in data["items"] if r["namespace"] == ["facts", "user"]]
    assert [v["metadata"] for v in stored] == [kept]
    memory.delete_user(user_id="u")
    memory.import_user(json.loads(json.dumps(data)))
    assert [(f.id, f.metadata) for f in memory.list_facts(user_id="u")] == [(fid, kept)]
    # a correction keeps it; an async write takes it too
    memory.update_fact(fid, "The user is allergic to peanuts and cashews.", user_id="u")
    assert memory.get_fact(fid, user_id="u").fact.metadata == kept
    later = asyncio.run(memory.aadd_fact("I work as a nurse.", user_id="u", metadata={"source": "form"}))
    assert [e.record.metadata for e in later] == [{"source": "form"}]
    assert memory.check(user_id="u") == []


def test_a_fused_fact_carries_both_metadata_and_forgetting_takes_it(make_memory: MakeMemory) -> None:
    memory = make_memory()
    memory.add_fact("I live in Portland.", user_id="u", metadata={"source": "crm", "note": "zorblax"})
    events = memory.add_fact("I moved to Denver.", user_id="u", metadata={"source": "chat"})
    assert [e.action for e in events] == ["updated"]
    (current,) = memory.list_facts(user_id="u")
    assert current.metadata == {"source": "chat", "note": "zorblax"}  # the newest statement wins a key
    memory.forget(user_id="u", fact_id=current.id)
    dumped = json.dumps([memory.export_user(user_id="u"), [e.to_dict() for e in memory.write_log(user_id="u")]])
    assert "zorblax" not in dumped and "crm" not in dumped


def test_add_fact_metadata_is_checked_before_anything_is_written(make_memory: MakeMemory) -> None:
    memory = make_memory()
    with pytest.raises(TypeError, match=r"mapping of JSON values \(e\.g\. \{'source': 'crm'\}\)"):
        memory.add_fact("I'm vegan.", user_id="u", metadata="crm")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"metadata\['score'\] is NaN.*pass None or a string"):
        memory.add_fact("I'm vegan.", user_id="u", metadata={"score": float("nan")})
    with pytest.raises(ValueError, match="JSON object keys are strings"):
        memory.add_fact("I'm vegan.", user_id="u", metadata={1: "one"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="metadata"):
        asyncio.run(memory.aadd_fact("I'm vegan.", user_id="u", metadata={"blob": b"x"}))
    assert memory.list_facts(user_id="u") == [] and memory.write_log(user_id="u") == []


def _talk(memory: MemoryOS) -> None:
    said = [
        ("My cat Miso sleeps all day.", "pets"),
        ("Miso the cat knocked over a glass.", "pets"),
        ("I bought Miso a new cat bed.", "pets"),
        ("My cat Miso likes tuna.", "food"),
        ("I cooked pasta for the cat sitter.", "food"),
    ]
    for i, (text, topic) in enumerate(said):
        memory.add_turn(
            text, "Nice.", user_id="u", thread_id="t", timestamp=at(i), metadata={"topic": topic, "source_id": f"D{i}"}
        )


def test_search_pages_by_offset_and_filters_by_metadata_time_and_kind(make_memory: MakeMemory) -> None:
    memory = make_memory()
    _talk(memory)
    every = memory.search("my cat Miso", user_id="u", limit=20)
    assert len(every) >= 4
    assert memory.search("my cat Miso", user_id="u", limit=2, offset=1) == every[1:3]
    assert memory.search("my cat Miso", user_id="u", limit=5, offset=len(every)) == []
    pets = memory.search("my cat Miso", user_id="u", limit=20, filter={"topic": "pets"}, kinds=("page",))
    assert sorted(h.sources[0] for h in pets) == ["D0", "D1", "D2"]
    assert [h.sources for h in memory.search("cat", user_id="u", filter={"source_id": "D3"}, kinds=("page",))] == [
        ["D3"]
    ]
    window = memory.search("my cat Miso", user_id="u", limit=20, since=at(1), until=at(3), kinds=("page",))
    assert sorted(h.sources[0] for h in window) == ["D1", "D2"]
    assert {h.kind for h in memory.search("my cat Miso", user_id="u", limit=20, kinds=("page",))} == {"page"}
    assert {h.kind for h in memory.search("my cat Miso", user_id="u", limit=20, kinds=("fact",))} == {"fact"}
    assert asyncio.run(memory.asearch("my cat Miso", user_id="u", limit=2, offset=1)) == every[1:3]
    with pytest.raises(ValueError, match="offset"):
        memory.search("cat", user_id="u", offset=-1)
    with pytest.raises(TypeError, match="filter must be a mapping"):
        memory.search("cat", user_id="u", filter=[("topic", "pets")])  # type: ignore[arg-type]


def test_list_facts_pages_by_limit_and_offset(make_memory: MakeMemory) -> None:
    memory = make_memory()
    for text in ("I'm vegan.", "I work as a nurse.", "I live in Oslo.", "I play the cello."):
        memory.add_fact(text, user_id="u")
    every = memory.list_facts(user_id="u")
    assert len(every) == 4
    assert memory.list_facts(user_id="u", limit=2) == every[:2]
    assert memory.list_facts(user_id="u", limit=2, offset=3) == every[3:]
    assert asyncio.run(memory.alist_facts(user_id="u", limit=1, offset=1)) == every[1:2]
    with pytest.raises(ValueError, match="limit must be a positive int"):
        memory.list_facts(user_id="u", limit=0)
