"""The STM/MTM/LPM engine on real stores, real embeddings and the heuristic controller."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.store.repository import encode_label
from tests.conftest import at

MemoryFactory = Callable[..., MemoryOS]

MARATHON = [
    ("I'm training for the Boston marathon, I ran 18 miles this weekend.", "Great long run for marathon training!"),
    ("My marathon training plan has four runs a week.", "Four runs a week is a solid marathon plan."),
    ("I bought new running shoes for the marathon.", "Good running shoes matter for marathon miles."),
    ("My knees hurt after the long marathon training run.", "Rest and stretch after long runs."),
    ("I'm doing a marathon tempo run tomorrow morning.", "Tempo runs build marathon pace."),
]
SOURDOUGH = [
    ("I baked sourdough bread with my starter yesterday.", "Sourdough from your own starter is great."),
    ("My sourdough starter needs feeding twice a day.", "Starters like regular feeding with flour."),
    ("The sourdough loaf came out with a great crust.", "A crisp crust means a hot oven for the bread."),
    ("I want to try rye flour in my next sourdough bake.", "Rye flour makes sourdough tangier."),
]


def _feed(
    memory: MemoryOS,
    turns: list[tuple[str, str]],
    *,
    user: str = "u",
    start: float = 0.0,
    thread: str = "t",
    step_minutes: float = 10.0,
) -> list[object]:
    reports = []
    for i, (q, a) in enumerate(turns):
        reports.append(
            memory.add_turn(
                q,
                a,
                user_id=user,
                thread_id=thread,
                timestamp=at(start, i * step_minutes),
                metadata={"source_id": f"{thread}:{start}:{i}"},
            )
        )
    return reports  # type: ignore[return-value]


def test_stm_is_a_fifo_of_seven_pages(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    turns = [(f"Message number {i} about my day.", f"Reply {i}.") for i in range(12)]
    reports = _feed(memory, turns)
    stm = memory.get_stm(user_id="u", thread_id="t")
    assert len(stm) == 7
    assert [p.user_input for p in stm] == [q for q, _ in turns[5:]]
    moved = [pid for r in reports for pid in r.moved_to_mtm]  # type: ignore[attr-defined]
    assert moved == [r.page_id for r in reports[:5]]  # type: ignore[attr-defined]
    assert memory.stats(user_id="u").mtm_pages == 5


def test_stm_is_per_thread(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    _feed(memory, [("Thread one talk.", "ok")] * 1, thread="one")
    _feed(memory, [("Thread two talk.", "ok")], thread="two")
    assert [p.thread_id for p in memory.get_stm(user_id="u", thread_id="one")] == ["one"]
    assert [p.thread_id for p in memory.get_stm(user_id="u", thread_id="two")] == ["two"]
    assert memory.stats(user_id="u").stm_pages == 2


def test_segments_group_pages_by_topic(make_memory: MemoryFactory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=1))
    interleaved = [MARATHON[0], MARATHON[1], SOURDOUGH[0], SOURDOUGH[1], MARATHON[2], SOURDOUGH[2], MARATHON[3]]
    _feed(memory, interleaved + [("Goodbye for now.", "Bye!")])
    pages = memory.list_pages(user_id="u")
    assert len(pages) == len(interleaved)
    topic = {q: ("run" if (q, a) in MARATHON else "bread") for q, a in interleaved}
    by_segment: dict[str, set[str]] = {}
    for p in pages:
        by_segment.setdefault(p.segment_id or "", set()).add(topic[p.user_input])
    assert all(len(topics) == 1 for topics in by_segment.values()), by_segment
    assert len(by_segment) < len(pages)  # pages joined existing segments
    for seg in memory.list_segments(user_id="u"):
        assert seg.keywords
        assert set(seg.page_ids) == {p.id for p in pages if p.segment_id == seg.id}


def test_heat_values_follow_the_formula(make_memory: MemoryFactory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=1, promotion_heat=100.0))
    # three marathon pages reach MTM and form one segment; the last turn stays in STM
    _feed(memory, MARATHON[:3] + [("Thanks, talk later.", "Bye!")])
    seg = next(s for s in memory.list_segments(user_id="u") if len(s.page_ids) == 3)
    assert (seg.n_visit, seg.l_interaction) == (0, 3)
    # the segment was created at the clock of its first page's exit (minute 10)
    clock = at(0, 30)
    expected = 0 + 3 + math.exp(-(clock - seg.last_access).total_seconds() / 1e7)
    assert seg.heat == pytest.approx(expected)
    # a retrieval hits it: N_visit + 1 and fresh recency on the conversation clock
    ctx = memory.retrieve("How is my marathon training going?", user_id="u", thread_id="t")
    assert seg.id in [s.segment.id for s in ctx.segments]
    after = next(s for s in memory.list_segments(user_id="u") if s.id == seg.id)
    assert after.n_visit == 1
    assert after.last_access == clock
    assert after.heat == pytest.approx(1 + 3 + 1.0)
    # 100 days later the recency term has decayed by exp(-8.64e6/1e7)
    memory.add_turn(
        "Back again after a long break.", "Welcome back!", user_id="u", thread_id="t", timestamp=at(100, 30)
    )
    later = next(s for s in memory.list_segments(user_id="u") if s.id == seg.id)
    assert later.heat == pytest.approx(1 + 3 + math.exp(-100 * 86400 / 1e7))


def test_heat_evict_removes_the_coldest_segment_and_its_pages(make_memory: MemoryFactory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=1, mtm_max_segments=2, promotion_heat=100.0, top_segments=1))
    topics = [
        ("I'm training for the Boston marathon.", "Good luck with the marathon!"),
        ("I baked sourdough bread with my starter.", "Sourdough is great."),
    ]
    _feed(memory, topics + [("Filler turn one.", "ok")])
    segs = {s.summary.split(":")[0]: s for s in memory.list_segments(user_id="u")}
    assert len(segs) == 2
    # make the sourdough segment hot by visiting it twice
    for _ in range(2):
        memory.retrieve("Tell me about my sourdough bread starter", user_id="u", thread_id="t")
    hot = max(memory.list_segments(user_id="u"), key=lambda s: s.n_visit)
    cold = min(memory.list_segments(user_id="u"), key=lambda s: s.heat)
    assert hot.id != cold.id
    cold_pages = set(cold.page_ids)
    # the filler page leaves STM and starts a third segment: the coldest other one goes
    report = memory.add_turn(
        "My grandmother taught me to knit scarves.",
        "Knitting is relaxing.",
        user_id="u",
        thread_id="t",
        timestamp=at(0, 40),
    )
    assert report.segments_created and report.segments_evicted == [cold.id]
    remaining = {s.id for s in memory.list_segments(user_id="u")}
    assert len(remaining) == 2 and hot.id in remaining and cold.id not in remaining
    assert not cold_pages & {p.id for p in memory.list_pages(user_id="u")}


def test_promotion_updates_persona_and_resets_l_interaction(make_memory: MemoryFactory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=1))
    turns = [
        ("I love running marathons.", "Marathons are a big challenge!"),
        ("I run marathons every spring.", "Spring marathons are lovely."),
        ("My marathon time is under four hours.", "That's a strong marathon time."),
        ("I'm training for the Chicago marathon.", "Chicago marathon is flat and fast."),
        ("Marathon training takes a lot of my time.", "Marathon training is demanding."),
        ("See you later.", "Bye!"),
    ]
    reports = _feed(memory, turns)
    promoted = [r for r in reports if r.segments_promoted]  # type: ignore[attr-defined]
    assert promoted, [memory.list_segments(user_id="u")]
    first = promoted[0]
    seg_id = first.segments_promoted[0]  # type: ignore[attr-defined]
    seg = next(s for s in memory.list_segments(user_id="u") if s.id == seg_id)
    assert seg.l_interaction == 0 and seg.pending_page_ids == [] and seg.promotions == 1
    assert seg.heat < 5.0
    assert [e.action for e in reports[0].events] == ["stored"]  # type: ignore[attr-defined]  # a turn's fact is written with the turn
    actions = {e.action for e in memory.write_log(user_id="u")}
    assert "stored" in actions
    facts = [f.summary for f in memory.list_facts(user_id="u")]
    assert "The user loves running marathons." in facts
    persona = memory.get_persona(user_id="u")
    assert "running" in persona.user_traits.get("interests", []) or "marathons" in " ".join(
        persona.user_traits.get("interests", [])
    )


def _forty_turns() -> list[tuple[str, str, float]]:
    """Forty dated turns over five sessions; the first says the user's job."""
    first = [
        ("Hi! My name is Priya and I work as a marine biologist in Monterey.", "Nice to meet you, Priya!", 0.0),
        ("I study sea otters in the kelp forests.", "Sea otters are fascinating.", 0.0),
    ]
    small_talk = [
        "I watched a documentary about volcanoes.",
        "The weather has been rainy all week.",
        "I'm reading a novel about a lighthouse keeper.",
        "I cooked a big pot of lentil soup.",
        "My neighbor's cat visited my garden again.",
        "I fixed the squeaky door in the hallway.",
        "I'm thinking about repainting the kitchen green.",
        "I went to a jazz concert downtown.",
    ]
    out = list(first)
    for i in range(38):
        session = 1 + i // 10
        text = small_talk[i % len(small_talk)] + f" (note {i})"
        out.append((text, "Thanks for sharing!", session * 7.0))
    return out


def test_fact_from_turn_one_is_retrieved_from_mtm_at_turn_forty(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    turns = _forty_turns()
    reports = [
        memory.add_turn(
            q, a, user_id="priya", thread_id="main", timestamp=at(day, i), metadata={"source_id": f"D:{i + 1}"}
        )
        for i, (q, a, day) in enumerate(turns)
    ]
    assert reports[7].moved_to_mtm == [reports[0].page_id]  # turn 1 left STM at turn 8
    ctx = memory.retrieve("What do I do for work?", user_id="priya", thread_id="main")
    hit = next(p for p in ctx.pages if "D:1" in p.page.source_ids())
    assert hit.page.segment_id in {s.segment.id for s in ctx.segments}
    assert "marine biologist" in ctx.to_prompt()
    # the compact STM view: the newest page shown, the six before it ranked with the mid-term pages
    assert len(ctx.stm) == 1 and "D:40" in ctx.stm[0].source_ids()
    full = memory.retrieve("What do I do for work?", user_id="priya", thread_id="main", stm_view="full")
    assert len(full.stm) == 7 and "D:1" not in {i for p in full.stm for i in p.source_ids()}


def test_fact_from_turn_one_is_retrieved_at_turn_forty(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    turns = _forty_turns()
    for i, (q, a, day) in enumerate(turns):
        memory.add_turn(
            q, a, user_id="priya", thread_id=f"s{int(day)}", timestamp=at(day, i), metadata={"source_id": f"D:{i + 1}"}
        )
    assert len(turns) == 40
    ctx = memory.retrieve("What do I do for work?", user_id="priya", thread_id="s28")
    assert "marine biologist" in ctx.to_prompt()
    assert "D:1" in ctx.source_ids()
    # turn 1 sits in the STM of the first session's thread: still reachable from a later thread
    hit = next(p for p in ctx.pages if "D:1" in p.page.source_ids())
    assert hit.page.thread_id == "s0"
    # idle threads (no turn for a day) were flushed to MTM; only the current thread keeps its STM
    assert memory.stats(user_id="priya").stm_pages == 7


def test_user_isolation(make_memory: MemoryFactory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=1))
    _feed(memory, MARATHON + [("Bye.", "Bye!")], user="alice@example.com")
    memory.add_fact("I'm allergic to peanuts.", user_id="alice@example.com")
    memory.add_turn("I like chess.", "Chess is fun.", user_id="bob", thread_id="t", timestamp=at(1))
    ctx = memory.retrieve("marathon training and peanut allergy", user_id="bob", thread_id="t")
    text = ctx.to_prompt()
    assert "marathon" not in text.lower() and "peanut" not in text.lower()
    assert ctx.pages == [] and ctx.user_facts == [] and ctx.segments == []
    assert [f.entities for f in memory.list_facts(user_id="bob")] == [["chess"]]  # bob's own fact, with his turn
    assert memory.get_persona(user_id="bob").user_traits == {}
    assert memory.list_segments(user_id="bob") == [] and memory.list_pages(user_id="bob") == []
    # alice still has everything
    assert memory.list_facts(user_id="alice@example.com")
    assert "marathon" in memory.retrieve("marathon", user_id="alice@example.com", thread_id="t").to_prompt().lower()


def test_delete_user_leaves_nothing(make_memory: MemoryFactory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=2))
    _feed(memory, MARATHON, user="a.b@x.com", thread="t.1")
    memory.add_fact("I'm vegan.", user_id="a.b@x.com")
    memory.add_turn("Keep me.", "Sure.", user_id="a.b", thread_id="t", timestamp=at(0))
    ns = ("memoryos", encode_label("a.b@x.com"))
    assert memory.store.search(ns, limit=1000)
    deleted = memory.delete_user(user_id="a.b@x.com")
    assert deleted > 0
    assert memory.store.search(ns, limit=1000) == []
    for namespace in memory.store.list_namespaces(prefix=ns):
        assert memory.store.search(namespace, limit=10) == []  # InMemoryStore keeps empty namespaces
    stats = memory.stats(user_id="a.b@x.com")
    assert (stats.stm_pages, stats.segments, stats.mtm_pages, stats.user_facts) == (0, 0, 0, 0)
    assert memory.write_log(user_id="a.b@x.com") == []
    # another user whose id is a prefix of the deleted one is untouched
    assert [p.user_input for p in memory.get_stm(user_id="a.b", thread_id="t")] == ["Keep me."]


def test_add_turn_is_idempotent(make_memory: MemoryFactory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=2))
    first = memory.add_turn("I like tea.", "Tea is nice.", user_id="u", turn_id="turn-1", timestamp=at(0))
    again = memory.add_turn("I like tea.", "Tea is nice.", user_id="u", turn_id="turn-1", timestamp=at(0))
    assert first.added and not again.added and first.page_id == again.page_id
    same_content = memory.add_turn("Hello", "Hi", user_id="u", timestamp=at(0, 5))
    replay = memory.add_turn("Hello", "Hi", user_id="u", timestamp=at(0, 5))
    assert not replay.added and replay.page_id == same_content.page_id
    for i in range(4):
        memory.add_turn(f"More {i}", "ok", user_id="u", timestamp=at(0, 10 + i))
    # the first page is in MTM now: replaying it still adds nothing
    assert first.page_id in {p.id for p in memory.list_pages(user_id="u")}
    assert not memory.add_turn("I like tea.", "Tea is nice.", user_id="u", turn_id="turn-1", timestamp=at(0)).added
    assert memory.stats(user_id="u").mtm_pages + memory.stats(user_id="u").stm_pages == 6


def test_bad_input_is_a_clear_error(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    with pytest.raises(ValueError, match="user_id"):
        memory.add_turn("hi", "ho", user_id="")
    with pytest.raises(ValueError, match="empty turn"):
        memory.add_turn("  ", "", user_id="u")
    with pytest.raises(TypeError, match="user_input"):
        memory.add_turn(42, "x", user_id="u")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind"):
        memory.add_fact("I'm vegan.", user_id="u", kind="team")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ISO"):
        memory.add_turn("hi", "ho", user_id="u", timestamp="yesterday-ish")
    assert memory.stats(user_id="u").stm_pages == 0


def test_async_twins_share_the_sync_behaviour(make_memory: MemoryFactory) -> None:
    sync_mem = make_memory(MemoryOSConfig(stm_capacity=1))
    async_mem = make_memory(MemoryOSConfig(stm_capacity=1))
    turns = MARATHON + SOURDOUGH

    async def run_async() -> None:
        for i, (q, a) in enumerate(turns):
            await async_mem.aadd_turn(q, a, user_id="u", thread_id="t", timestamp=at(0, i * 10))
        await async_mem.aadd_fact("I'm vegan.", user_id="u")

    for i, (q, a) in enumerate(turns):
        sync_mem.add_turn(q, a, user_id="u", thread_id="t", timestamp=at(0, i * 10))
    sync_mem.add_fact("I'm vegan.", user_id="u")
    asyncio.run(run_async())

    def shape(m: MemoryOS) -> object:
        return sorted((s.id, tuple(s.page_ids), s.l_interaction, s.promotions) for s in m.list_segments(user_id="u"))

    assert shape(sync_mem) == shape(async_mem)
    assert sorted(f.summary for f in sync_mem.list_facts(user_id="u")) == sorted(
        f.summary for f in async_mem.list_facts(user_id="u")
    )
    s_ctx = sync_mem.retrieve("sourdough starter", user_id="u", thread_id="t")
    a_ctx = asyncio.run(async_mem.aretrieve("sourdough starter", user_id="u", thread_id="t"))
    assert [p.page.id for p in s_ctx.pages] == [p.page.id for p in a_ctx.pages]
    assert a_ctx.to_prompt() == s_ctx.to_prompt()


def test_concurrent_writers_of_one_user_lose_nothing(make_memory: MemoryFactory) -> None:
    from concurrent.futures import ThreadPoolExecutor

    memory = make_memory(MemoryOSConfig(stm_capacity=3))

    def write(i: int) -> None:
        memory.add_turn(
            f"Parallel note {i} about gardening tomatoes.", "ok", user_id="u", thread_id=f"t{i % 3}", timestamp=at(0, i)
        )

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, range(24)))
    stats = memory.stats(user_id="u")
    assert stats.stm_pages + stats.mtm_pages == 24
    assert stats.stm_pages == 9


def test_promotion_reuses_the_vector_of_a_word_for_word_known_fact() -> None:
    import numpy as np

    from langchain_memoryos.amu import embed_summaries
    from langchain_memoryos.kernel.effects import Embed
    from langchain_memoryos.schema import MemoryRecord
    from langchain_memoryos.store.repository import UserState
    from langchain_memoryos.store.settings import EngineSettings

    state = UserState(user_id="u", label="u", dimension=2)
    known = np.array([1.0, 0.0], dtype=np.float32)
    state.put_fact(MemoryRecord(id="f1", summary="The user is vegan.", entities=["vegan"]), known)
    settings = EngineSettings.build(MemoryOSConfig(), "all-MiniLM-L6-v2")
    fact = dict(aspect="health", intent="inform", entities=["x"], confidence=1.0)
    records = [
        MemoryRecord(summary="The user is vegan.", **fact),  # type: ignore[arg-type]
        MemoryRecord(summary="The user runs.", **fact),  # type: ignore[arg-type]
        MemoryRecord(summary="The user runs.", **fact),  # type: ignore[arg-type]
        MemoryRecord(summary="Filtered.", personal=False, **fact),  # type: ignore[arg-type]
    ]
    step = embed_summaries(state, settings.amu, records)
    effect = next(step)
    assert isinstance(effect, Embed) and effect.texts == ("The user runs.",)
    new = np.array([[0.0, 1.0]], dtype=np.float32)
    with pytest.raises(StopIteration) as done:
        step.send(new)
    vectors = done.value.value
    assert set(vectors) == {"The user is vegan.", "The user runs."}
    assert np.array_equal(vectors["The user is vegan."], known)
    assert np.array_equal(vectors["The user runs."], new[0])
