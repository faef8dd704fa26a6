"""``MemoryOS.check`` / ``repair``: a healthy memory passes; each kind of stored corruption is found and fixed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from langgraph.store.base import Item

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.index.vector_index import decode_vector, encode_vector
from langchain_memoryos.pipeline.invariants import check_state
from langchain_memoryos.pipeline.repair import repair_state
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Segment
from langchain_memoryos.store.repository import UserState, encode_label
from tests.conftest import at

MemoryFactory = Callable[..., MemoryOS]
USER = "ana@example.com"
CONFIG = MemoryOSConfig(
    stm_capacity=3, mtm_max_segments=5, user_kb_capacity=4, agent_traits_capacity=2, promotion_heat=2.0
)
SENTENCES = [
    ("My name is Ana and I live in Lyon.", "Nice to meet you, Ana."),
    ("I moved to Denver last month.", "Denver is a great city."),
    ("I love hiking in the Rocky mountains.", "Hiking is wonderful exercise."),
    ("I work at Google as a software engineer.", "Engineering at Google sounds exciting."),
    ("My dog Felix is sick, I am worried.", "I hope Felix gets better soon."),
    ("How is the weather today?", "I can't check the weather, sorry."),
    ("I am vegan and I cook a lot of lentils.", "Lentils are a great vegan protein."),
    ("I play chess every Sunday at the club.", "Chess clubs are fun."),
    ("Actually I now work at Stripe.", "Congratulations on the new job at Stripe!"),
]


def populate(memory: MemoryOS, turns: int = 21) -> list[Any]:
    """Real turns over three threads (promotions, joins, heat evictions), retrievals and agent traits."""
    reports = []
    for i in range(turns):
        q, a = SENTENCES[i % len(SENTENCES)]
        reports.append(
            memory.add_turn(
                f"{q} ({i // len(SENTENCES)})", a, user_id=USER, thread_id=f"t{i % 3}", timestamp=at(0, 40 * i)
            )
        )
        if i % 7 == 6:
            memory.retrieve("Where does Ana live and work?", user_id=USER, thread_id="t0")
    for trait in ("Answer in bullet points.", "Keep answers short.", "Use metric units."):
        memory.add_fact(trait, user_id=USER, kind="agent")
    return reports


def still_works(memory: MemoryOS) -> None:
    """Turns and retrieval after a repair, and the invariants still hold."""
    for i in range(4):
        text = f"I started learning Japanese, lesson {i}."
        report = memory.add_turn(text, "Ganbatte!", user_id=USER, thread_id=f"t{i % 2}", timestamp=at(3, 10 * i))
        assert report.added
    context = memory.retrieve("What language is the user learning?", user_id=USER, thread_id="t0")
    assert "Japanese" in context.stm[-1].user_input
    assert memory.check(user_id=USER) == []


# -- store access ----------------------------------------------------------------
def ns(memory: MemoryOS, *parts: str) -> tuple[str, ...]:
    return memory.repository.namespace(USER, *parts)


def items(memory: MemoryOS, *parts: str) -> list[Item]:
    namespace = ns(memory, *parts)
    return sorted(
        (it for it in memory.store.search(namespace, limit=10_000) if it.namespace == namespace), key=lambda it: it.key
    )


def put(memory: MemoryOS, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
    memory.store.put(namespace, key, value, index=False)


def segment_with_pages(memory: MemoryOS, n: int = 2) -> Item:
    found = [it for it in items(memory, "segments") if len(it.value["page_ids"]) >= n]
    assert found, "populate() should leave a segment with several pages"
    return found[0]


def other_segment(memory: MemoryOS, not_key: str) -> Item:
    return next(it for it in items(memory, "segments") if it.key != not_key)


def stm_items(memory: MemoryOS, thread: str) -> list[Item]:
    return items(memory, "stm", encode_label(thread))


def max_seq(memory: MemoryOS) -> int:
    return max(int(it.value["seq"]) for t in ("t0", "t1", "t2") for it in stm_items(memory, t))


# -- corruptions: each returns (a problem check() must name, a fix repair() must report) ---------
def segment_deleted(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory)
    memory.store.delete(ns(memory, "segments"), seg.key)
    page = seg.value["page_ids"][0]
    return f"page {page}: its segment {seg.key} does not exist", f"segment {seg.key}: recreated for its"


def segment_lists_missing_page(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory, 1)
    value = dict(seg.value, page_ids=[*seg.value["page_ids"], "p_ghost"])
    value["pending_page_ids"] = [*value["pending_page_ids"], "p_ghost"]
    put(memory, ns(memory, "segments"), seg.key, value)
    return f"segment {seg.key}: lists missing page p_ghost", f"segment {seg.key}: dropped missing page p_ghost"


def page_deleted(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory)
    page = seg.value["page_ids"][-1]
    memory.store.delete(ns(memory, "pages"), page)
    return f"segment {seg.key}: lists missing page {page}", f"segment {seg.key}: dropped missing page {page}"


def last_page_deleted(memory: MemoryOS) -> tuple[str, str]:
    seg = items(memory, "segments")[0]
    for page in seg.value["page_ids"]:
        memory.store.delete(ns(memory, "pages"), page)
    return f"segment {seg.key}: lists missing page", f"segment {seg.key}: deleted (no pages left)"


def empty_segment(memory: MemoryOS) -> tuple[str, str]:
    seg = items(memory, "segments")[0]
    put(memory, ns(memory, "segments"), "s_empty", dict(seg.value, id="s_empty", page_ids=[], pending_page_ids=[]))
    return "segment s_empty: has no pages", "segment s_empty: deleted (no pages left)"


def page_in_two_segments(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory, 1)
    page = seg.value["page_ids"][0]
    other = other_segment(memory, seg.key)
    put(memory, ns(memory, "segments"), other.key, dict(other.value, page_ids=[*other.value["page_ids"], page]))
    return f"page {page}: listed in 2 segments", f"page {page}: kept in segment {seg.key} only"


def page_twice_in_a_segment(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory, 1)
    page = seg.value["page_ids"][0]
    put(memory, ns(memory, "segments"), seg.key, dict(seg.value, page_ids=[*seg.value["page_ids"], page]))
    return f"segment {seg.key}: lists page {page} more than once", f"segment {seg.key}: dropped the repeats of page"


def foreign_pending_page(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory, 1)
    page = seg.value["page_ids"][0]
    other = other_segment(memory, seg.key)
    value = dict(other.value, pending_page_ids=[*other.value["pending_page_ids"], page])
    put(memory, ns(memory, "segments"), other.key, value)
    return (
        f"segment {other.key}: pending page {page} is not one of its pages",
        f"segment {other.key}: dropped pending page {page}",
    )


def segment_forgets_page(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory)
    page = seg.value["page_ids"][0]
    value = dict(seg.value, page_ids=seg.value["page_ids"][1:])
    value["pending_page_ids"] = [p for p in value["pending_page_ids"] if p != page]
    put(memory, ns(memory, "segments"), seg.key, value)
    return f"page {page}: its segment {seg.key} does not list it", f"page {page}: added back to its segment {seg.key}"


def page_without_segment_id(memory: MemoryOS) -> tuple[str, str]:
    seg = segment_with_pages(memory, 1)
    page = seg.value["page_ids"][0]
    item = memory.store.get(ns(memory, "pages"), page)
    assert item is not None
    put(memory, ns(memory, "pages"), page, dict(item.value, segment_id=None))
    return f"page {page}: has no segment", f"page {page}: segment_id None set to {seg.key}"


def page_under_another_key(memory: MemoryOS) -> tuple[str, str]:
    page = items(memory, "pages")[0]
    put(memory, ns(memory, "pages"), "p_copy", dict(page.value))
    return f"page p_copy: stored under key p_copy but its id is {page.key!r}", "page p_copy: id"


def too_many_segments(memory: MemoryOS) -> tuple[str, str]:
    page = items(memory, "pages")[0]
    seg = items(memory, "segments")[0]
    put(memory, ns(memory, "pages"), "p_extra", dict(page.value, id="p_extra", segment_id="s_extra"))
    value = dict(seg.value, id="s_extra", page_ids=["p_extra"], pending_page_ids=[], vector=page.value["vector"])
    put(memory, ns(memory, "segments"), "s_extra", value)
    return "MTM: holds 6 segments, more than mtm_max_segments=5", "evicted with its pages"


def stm_over_capacity(memory: MemoryOS) -> tuple[str, str]:
    newest = stm_items(memory, "t0")[-1]
    value = dict(newest.value, id="p_stm_extra", seq=max_seq(memory) + 1, user_input="I also collect stamps.")
    put(memory, ns(memory, "stm", "t0"), "p_stm_extra", value)
    return "STM thread 't0': holds 4 pages, more than stm_capacity=3", "moved to MTM"


def stm_page_also_in_mtm(memory: MemoryOS) -> tuple[str, str]:
    page = items(memory, "pages")[0]
    thread = page.value["thread_id"]
    value = dict(page.value, segment_id=None, seq=max_seq(memory) + 1)
    put(memory, ns(memory, "stm", encode_label(thread)), page.key, value)
    return f"STM page {page.key}: is also an MTM page", f"STM page {page.key} (thread {thread!r}): dropped this copy"


def stm_page_in_two_threads(memory: MemoryOS) -> tuple[str, str]:
    page = stm_items(memory, "t0")[0]
    put(memory, ns(memory, "stm", "t1"), page.key, dict(page.value, thread_id="t1", seq=max_seq(memory) + 1))
    return f"STM page {page.key}: appears 2 times in STM", f"STM page {page.key} (thread 't1'): dropped this copy"


def too_many_facts(memory: MemoryOS) -> tuple[str, str]:
    facts = items(memory, "facts", "user")
    assert facts, "populate() should promote user facts"
    for i in range(5):
        key = f"f_extra{i}"
        put(memory, ns(memory, "facts", "user"), key, dict(facts[0].value, id=key, summary=f"The user owns {i} cats."))
    return f"LPM user facts: {len(facts) + 5} records, more than user_kb_capacity=4", "evicted (user_kb_capacity 4"


def fact_in_both_kinds(memory: MemoryOS) -> tuple[str, str]:
    fact = items(memory, "facts", "user")[0]
    put(memory, ns(memory, "facts", "agent"), fact.key, dict(fact.value, kind="agent"))
    return f"fact {fact.key}: is both a user fact and an agent trait", f"fact {fact.key}: deleted its older"


def fact_of_the_wrong_kind(memory: MemoryOS) -> tuple[str, str]:
    fact = items(memory, "facts", "user")[0]
    put(memory, ns(memory, "facts", "user"), fact.key, dict(fact.value, kind="agent"))
    return f"fact {fact.key}: stored as a user fact but its kind is 'agent'", f"fact {fact.key}: id and kind set"


def nan_segment_vector(memory: MemoryOS) -> tuple[str, str]:
    seg = items(memory, "segments")[0]
    dim = decode_vector(seg.value["vector"]).shape[0]
    put(memory, ns(memory, "segments"), seg.key, dict(seg.value, vector=encode_vector(np.full(dim, np.nan))))
    return (
        f"segment {seg.key}: stored without a usable vector",
        f"segment {seg.key}: stored without a usable vector re-embedded and stored",
    )


def clock_behind(memory: MemoryOS) -> tuple[str, str]:
    meta = memory.store.get(ns(memory, "meta"), "state")
    assert meta is not None
    put(memory, ns(memory, "meta"), "state", dict(meta.value, clock=at(-1).isoformat()))
    return "clock: the conversation clock 2023-12-31", "clock: moved to"


def clock_missing(memory: MemoryOS) -> tuple[str, str]:
    meta = memory.store.get(ns(memory, "meta"), "state")
    assert meta is not None
    put(memory, ns(memory, "meta"), "state", {k: v for k, v in meta.value.items() if k != "clock"})
    return "clock: no conversation clock although there are pages", "clock: moved to"


CORRUPTIONS = [
    segment_deleted,
    segment_lists_missing_page,
    page_deleted,
    last_page_deleted,
    empty_segment,
    page_in_two_segments,
    page_twice_in_a_segment,
    foreign_pending_page,
    segment_forgets_page,
    page_without_segment_id,
    page_under_another_key,
    too_many_segments,
    stm_over_capacity,
    stm_page_also_in_mtm,
    stm_page_in_two_threads,
    too_many_facts,
    fact_in_both_kinds,
    fact_of_the_wrong_kind,
    nan_segment_vector,
    clock_behind,
    clock_missing,
]


# -- healthy memories --------------------------------------------------------------
def test_a_healthy_memory_passes_every_check(make_memory: MemoryFactory) -> None:
    memory = make_memory(CONFIG)
    reports = populate(memory, turns=30)
    stats = memory.stats(user_id=USER)
    # the turns exercised what the invariants are about
    assert sum(len(r.segments_evicted) for r in reports) > 0
    assert sum(len(r.segments_promoted) for r in reports) > 0
    assert stats.segments == CONFIG.mtm_max_segments
    assert stats.user_facts > 0 and stats.agent_facts == CONFIG.agent_traits_capacity
    assert all(len(memory.get_stm(user_id=USER, thread_id=t)) == CONFIG.stm_capacity for t in ("t0", "t1", "t2"))
    assert memory.check(user_id=USER) == []
    assert memory.repair(user_id=USER) == []  # nothing to do
    assert memory.check(user_id=USER) == []


def test_an_unknown_user_and_the_default_config_are_healthy() -> None:
    memory = MemoryOS()
    assert memory.check(user_id="nobody") == []
    populate(memory, turns=12)
    assert memory.check(user_id=USER) == [] and memory.repair(user_id=USER) == []


def test_check_and_repair_have_async_twins(tmp_path: Any) -> None:
    memory = MemoryOS.from_sqlite(tmp_path / "m.db", config=CONFIG)
    try:
        populate(memory)
        assert asyncio.run(memory.acheck(user_id=USER)) == []
        problem, fix = segment_deleted(memory)
        assert problem in asyncio.run(memory.acheck(user_id=USER))
        assert any(fix in f for f in asyncio.run(memory.arepair(user_id=USER)))
        assert asyncio.run(memory.acheck(user_id=USER)) == []
    finally:
        memory.close()


# -- corrupted memories --------------------------------------------------------------
@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=[c.__name__ for c in CORRUPTIONS])
def test_stored_corruption_is_found_and_repaired(
    make_memory: MemoryFactory, corrupt: Callable[[MemoryOS], tuple[str, str]]
) -> None:
    memory = make_memory(CONFIG)
    populate(memory)
    assert memory.check(user_id=USER) == []
    problem, fix = corrupt(memory)
    problems = memory.check(user_id=USER)
    assert any(p.startswith(problem) for p in problems), problems
    fixes = memory.repair(user_id=USER)
    assert any(fix in f for f in fixes), fixes
    assert not any(f.startswith("not repaired") for f in fixes), fixes
    assert memory.check(user_id=USER) == []  # what the store now holds
    assert memory.repair(user_id=USER) == []
    still_works(memory)


def test_repair_keeps_the_pages_of_a_lost_segment(make_memory: MemoryFactory) -> None:
    memory = make_memory(CONFIG)
    populate(memory)
    seg = segment_with_pages(memory)
    before = memory.stats(user_id=USER)
    memory.store.delete(ns(memory, "segments"), seg.key)
    memory.repair(user_id=USER)
    after = memory.stats(user_id=USER)
    assert (after.mtm_pages, after.segments) == (before.mtm_pages, before.segments)
    assert [p.id for p in memory.list_pages(user_id=USER, segment_id=seg.key)] == seg.value["page_ids"]


def test_capacity_repairs_follow_the_engine_rules(make_memory: MemoryFactory) -> None:
    """A memory written with larger capacities, reopened with smaller ones (STM, segments, facts)."""
    memory = make_memory(CONFIG)
    populate(memory)
    before = memory.stats(user_id=USER)
    most_useful_first = {
        kind: sorted(
            memory.list_facts(user_id=USER, kind=kind),
            key=lambda f: (f.confidence, f.updated_at, f.created_at, f.id),
            reverse=True,
        )
        for kind in ("user", "agent")
    }
    smaller = CONFIG.replace(stm_capacity=1, mtm_max_segments=2, user_kb_capacity=1, agent_traits_capacity=1)
    reopened = MemoryOS(memory.store, config=smaller)
    problems = reopened.check(user_id=USER)
    assert {p.split(":")[0] for p in problems} == {
        "STM thread 't0'",
        "STM thread 't1'",
        "STM thread 't2'",
        "MTM",
        "LPM user facts",
        "LPM agent facts",
    }
    fixes = reopened.repair(user_id=USER)
    assert reopened.check(user_id=USER) == []
    stats = reopened.stats(user_id=USER)
    assert (stats.stm_pages, stats.segments, stats.user_facts, stats.agent_facts) == (3, 2, 1, 1)
    assert sum("moved to MTM" in f for f in fixes) == before.stm_pages - 3
    evicted = [e for e in reopened.write_log(user_id=USER) if e.action == "evicted" and e.source == "repair"]
    assert len(evicted) == before.user_facts - 1 + before.agent_facts - 1
    # the log says what repair did: the least useful went (the lowest confidence first), not the oldest
    assert {e.reason for e in evicted} == {
        "user_kb_capacity 1 exceeded: least useful (lowest confidence, then oldest) evicted by repair",
        "agent_traits_capacity 1 exceeded: least useful (lowest confidence, then oldest) evicted by repair",
    }
    assert any(
        f"fact {e.record.id}: evicted (user_kb_capacity 1 exceeded: least useful" in f for e in evicted for f in fixes
    )
    # the most useful record of each kind survives: the highest confidence, then the most recent
    for kind, facts in most_useful_first.items():
        assert [f.id for f in reopened.list_facts(user_id=USER, kind=kind)] == [facts[0].id]  # type: ignore[arg-type]
    reopened.add_turn("I collect stamps.", "Nice hobby!", user_id=USER, thread_id="t0", timestamp=at(5))
    assert reopened.check(user_id=USER) == []


def test_rows_without_a_usable_vector_are_re_embedded_reported_and_stored_by_repair(
    make_memory: MemoryFactory,
) -> None:
    """A corrupted vector never makes a user unreadable: the load re-embeds, check() reports, repair() stores."""
    memory = make_memory(CONFIG)
    populate(memory)
    page = items(memory, "pages")[0]
    fact = items(memory, "facts", "user")[0]
    stm = next(it for it in memory.store.search(ns(memory, "stm"), limit=100) if it.value.get("vector"))
    dim = decode_vector(page.value["vector"]).shape[0]
    put(memory, ns(memory, "pages"), page.key, dict(page.value, vector=encode_vector(np.full(dim, np.inf))))
    put(memory, ns(memory, "facts", "user"), fact.key, {k: v for k, v in fact.value.items() if k != "vector"})
    put(memory, stm.namespace, stm.key, dict(stm.value, vector=encode_vector(np.ones(dim + 3))))  # another model's size
    problems = memory.check(user_id=USER)
    assert sorted(p.split(":")[0] for p in problems) == sorted(
        [f"page {page.key}", f"user fact {fact.key}", f"STM page {stm.key}"]
    )
    assert all("stored without a usable vector" in p for p in problems)
    fixes = memory.repair(user_id=USER)
    assert len(fixes) == 3 and all("re-embedded and stored" in f for f in fixes)
    assert memory.check(user_id=USER) == []
    stored = memory.store.get(ns(memory, "pages"), page.key)
    assert stored is not None and np.all(np.isfinite(decode_vector(stored.value["vector"])))
    # without repair(), the next write stores the new vectors too; reading works meanwhile
    put(memory, ns(memory, "pages"), page.key, dict(page.value, vector=encode_vector(np.full(dim, np.nan))))
    memory.repository.invalidate(USER)
    assert memory.retrieve("Where does Ana live?", user_id=USER, thread_id="t0").stm  # a read that writes visits
    assert memory.check(user_id=USER) == []


# -- states held in memory (cache-only problems a store cannot hold) ----------------------
def _state() -> UserState:
    state = UserState(user_id="u", label="u", dimension=2)
    state.advance_clock(at(1))
    return state


def test_stale_and_missing_vectors_in_a_live_state() -> None:
    state = _state()
    v = np.array([1.0, 0.0], dtype=np.float32)
    state.put_page(DialoguePage(id="p_1", user_input="hi", agent_response="", segment_id="s_1", timestamp=at()), v)
    state.put_segment(Segment(id="s_1", page_ids=["p_1"], created_at=at()), v)
    state.put_fact(MemoryRecord(id="f_1", summary="x"), v)
    assert check_state(state, CONFIG) == []
    state.pages.pop("p_1")  # the index keeps its vector
    state.segments["s_1"].page_ids = []
    state.facts["user"]["f_2"] = MemoryRecord(id="f_2", summary="y")  # no vector
    problems = check_state(state, CONFIG)
    assert "page index: holds a vector for p_1, which is not a page record" in problems
    assert "fact f_2: has no vector" in problems
    assert "segment s_1: has no pages" in problems
    fixes = repair_state(state, CONFIG)
    assert "page index: dropped the vector of p_1 (no such record)" in fixes
    assert "segment s_1: deleted (no pages left)" in fixes
    assert fixes[-1] == "not repaired: fact f_2: has no vector"
    assert check_state(state, CONFIG) == ["fact f_2: has no vector"]


def test_a_vector_of_the_wrong_dimension_is_reported() -> None:
    state = _state()
    page = DialoguePage(id="p_1", user_input="hi", agent_response="", thread_id="t", timestamp=at())
    state.stm_append(page, np.ones(2, dtype=np.float32))
    assert check_state(state, CONFIG) == []
    state.stm_vectors["p_1"] = np.ones(3, dtype=np.float32)
    assert check_state(state, CONFIG) == ["STM page p_1 (thread 't'): has a vector of shape (3,), expected (2,)"]


def test_repair_is_buffered_for_the_callers_flush() -> None:
    state = _state()
    v = np.array([0.0, 1.0], dtype=np.float32)
    state.put_page(DialoguePage(id="p_1", user_input="hi", agent_response="", segment_id=None, timestamp=at()), v)
    state.take_ops()
    assert check_state(state, CONFIG) == ["page p_1: has no segment"]
    assert repair_state(state, CONFIG) == ["page p_1: put into a new segment s_1"]
    namespaces = {op.namespace[-1] for op in state.take_ops()}  # type: ignore[union-attr]
    assert namespaces == {"segments", "pages"}
    assert state.pages["p_1"].segment_id == "s_1" and state.segments["s_1"].page_ids == ["p_1"]


def test_an_stm_row_whose_thread_disagrees_with_its_namespace_is_corrected(make_memory: MemoryFactory) -> None:
    memory = make_memory(CONFIG)
    populate(memory)
    row = next(it for it in memory.store.search(ns(memory, "stm"), limit=100) if it.value.get("vector"))
    thread = row.namespace[-1]
    put(memory, row.namespace, row.key, dict(row.value, thread_id="elsewhere"))
    problems = memory.check(user_id=USER)
    assert problems == [f"STM page {row.key}: stored under thread {thread!r} but says 'elsewhere' (corrected)"]
    assert any(p.id == row.key for p in memory.get_stm(user_id=USER, thread_id=thread))  # still in its own thread's STM
    assert len(memory.repair(user_id=USER)) == 1 and memory.check(user_id=USER) == []
    fixed = memory.store.get(row.namespace, row.key)
    assert fixed is not None and fixed.value["thread_id"] == thread
