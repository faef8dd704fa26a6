"""Turn packing: the word budget filled turn by turn, the named speaker's turns first."""

from __future__ import annotations

import datetime as dt

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.retrieval.recall import context_words
from langchain_memoryos.retrieval.turns import named_speaker, one_side, pack_turns, side_speaker, side_words
from langchain_memoryos.schema import DialoguePage, ScoredPage

T0 = dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)


def _page(pid: str, user: str, agent: str, day: int = 0, ids: tuple[str, ...] = ()) -> DialoguePage:
    meta = {"source_id": list(ids)} if ids else {}
    return DialoguePage(
        id=pid, user_input=user, agent_response=agent, timestamp=T0 + dt.timedelta(days=day), metadata=meta
    )


def test_a_side_copy_shows_one_turn_and_credits_only_its_source() -> None:
    page = _page("p", "Ana: I paint.", "Bo: Cool!", ids=("D1:1", "D1:2"))
    user, agent = one_side(page, "user"), one_side(page, "agent")
    assert (user.lines(), user.source_ids()) == (["User: Ana: I paint."], ["D1:1"])
    assert (agent.lines(), agent.source_ids()) == (["Assistant: Bo: Cool!"], ["D1:2"])
    assert page.source_ids() == ["D1:1", "D1:2"] and page.agent_response == "Bo: Cool!"  # the stored page is intact
    # one id for two sides (or a lone side): nothing to trim
    assert one_side(_page("q", "a", "b", ids=("D1:3",)), "agent").source_ids() == ["D1:3"]


def test_speakers_come_from_the_name_prefix_or_the_name_metadata() -> None:
    page = DialoguePage(id="p", user_input="I run.", agent_response="Bo: nice", metadata={"user_name": "Ana"})
    assert (side_speaker(page, "user"), side_speaker(page, "agent")) == ("Ana", "Bo")
    assert named_speaker("What does Ana run?", [page]) == "Ana"
    assert named_speaker("Did Ana and Bo meet?", [page]) is None  # two named: no preference
    assert named_speaker("What does Anabel like?", [page]) is None  # whole words only


def test_the_named_speakers_turns_fill_the_budget_first() -> None:
    ranked = [
        ScoredPage(
            _page(f"p{i}", f"Bo: filler words number {i} here.", f"Ana: I tried hobby {i} today.", day=i), 1 - i / 100
        )
        for i in range(6)
    ]
    room = 6 * (side_words(ranked[0].page, "agent") + 1)  # Ana's six turns and their date lines, no more
    got = pack_turns(ranked, query="What hobbies has Ana tried?", room=room, max_units=40, speaker_weight=0.2)
    assert [(h.page.id, h.side) for h in got] == [(f"p{i}", "agent") for i in range(6)]
    assert all("Ana:" in h.page.agent_response and not h.page.user_input for h in got)
    # no speaker named: pages in rank order, whole while they fit
    plain = pack_turns(ranked, query="What hobbies were tried?", room=room, max_units=40, speaker_weight=0.2)
    assert [h.side for h in plain[:3]] == [None, None, None]
    assert [h.page.id for h in plain] == sorted(h.page.id for h in plain)
    # speaker_weight 0: the named speaker gets no preference
    flat = pack_turns(ranked, query="What hobbies has Ana tried?", room=room, max_units=40, speaker_weight=0.0)
    assert [(h.page.id, h.side) for h in flat] == [(h.page.id, h.side) for h in plain]


def test_a_refill_keeps_the_turns_already_chosen() -> None:
    ranked = [ScoredPage(_page(f"p{i}", f"Bo: words {i}.", f"Ana: hobby {i}.", day=0), 1 - i / 100) for i in range(4)]
    # a side costs 4 words ("Assistant: Ana: hobby N."), the day's date line 1
    first = pack_turns(ranked, query="Ana's hobbies?", room=9, max_units=40, speaker_weight=0.2)
    assert [(h.page.id, h.side) for h in first] == [("p0", "agent"), ("p1", "agent")]
    more = pack_turns(ranked, query="Ana's hobbies?", room=17, max_units=40, speaker_weight=0.2, keep=first)
    assert [(h.page.id, h.side) for h in more][:2] == [("p0", "agent"), ("p1", "agent")]
    assert len(more) == 4 and all(h.side == "agent" for h in more)


def _conversation(memory: MemoryOS) -> None:
    hobbies = ["pottery", "camping", "painting", "swimming", "the violin", "hiking", "chess", "baking"]
    for i, hobby in enumerate(hobbies):
        memory.add_turn(
            f"Bo: I spent the whole weekend fixing my old car engine again, number {i}, which took many hours.",
            f"Ana: This month I took up {hobby} with my kids.",
            user_id="u",
            thread_id="t",
            timestamp=T0 + dt.timedelta(days=i),
            metadata={"source_id": [f"D{i}:1", f"D{i}:2"]},
        )
    for i in range(8):
        memory.add_turn(
            "Bo: ok", "Ana: ok", user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(days=20, minutes=i)
        )


def test_retrieve_shows_more_of_the_named_speakers_evidence_within_the_budget() -> None:
    budget = 160
    turns = MemoryOS(config=MemoryOSConfig(context_words=budget))
    pages = MemoryOS(config=MemoryOSConfig(context_words=budget, page_units="pages"))
    for memory in (turns, pages):
        _conversation(memory)
    question = "What activities has Ana taken up with her kids?"
    by_turn = turns.retrieve(question, user_id="u", thread_id="q")
    by_page = pages.retrieve(question, user_id="u", thread_id="q")
    ana_ids = {f"D{i}:2" for i in range(8)}
    assert len(set(by_turn.source_ids()) & ana_ids) > len(set(by_page.source_ids()) & ana_ids)
    assert context_words(by_turn.to_prompt()) <= budget and context_words(by_page.to_prompt()) <= budget
    halves = [h for h in by_turn.pages if h.side is not None]
    assert halves and all(h.side == "agent" and not h.page.user_input for h in halves)
    assert all(h.side is None for h in by_page.pages)
    # the stored pages keep both sides
    assert all(p.user_input and p.agent_response for p in turns.list_pages(user_id="u"))


def test_without_a_budget_whole_pages_are_shown() -> None:
    memory = MemoryOS(config=MemoryOSConfig(context_words=None, top_pages=4))
    _conversation(memory)
    ctx = memory.retrieve("What activities has Ana taken up?", user_id="u", thread_id="q")
    assert len(ctx.pages) == 4 and all(h.side is None for h in ctx.pages)


def test_page_units_is_validated() -> None:
    with pytest.raises(ValueError, match="page_units must be one of"):
        MemoryOSConfig(page_units="sentences")
    with pytest.raises(ValueError, match="speaker_weight"):
        MemoryOSConfig(speaker_weight=-1.0)
    assert MemoryOSConfig.paper().page_units == "pages"


def _pack_by_sorting_every_unit(
    ranked: list[ScoredPage], *, query: str, room: int, max_units: int, speaker_weight: float, keep: list[ScoredPage]
) -> list[tuple[str, str | None, float, str, str]]:
    """The packing rule written plainly (every unit made and sorted; no early stop): what pack_turns must match."""
    named = named_speaker(query, (h.page for h in ranked[:50])) if speaker_weight else None
    taken: dict[str, set[str]] = {}
    hits: dict[str, ScoredPage] = {}
    used, days = 0, set()
    originals = {h.page.id: h for h in ranked}
    for hit in keep:
        for side in (hit.side,) if hit.side else [s for s in ("user", "agent") if side_words(hit.page, s)]:
            used += side_words(hit.page, side)
            taken.setdefault(hit.page.id, set()).add(side)
        days.add(hit.page.timestamp.date())
        hits[hit.page.id] = originals.get(hit.page.id, hit)
    used += len(days)
    units = []
    for rank, hit in enumerate(ranked):
        for index, side in enumerate(("user", "agent")):  # type: ignore[assignment]
            if not side_words(hit.page, side) or side in taken.get(hit.page.id, ()):
                continue
            bonus = speaker_weight if named is not None and side_speaker(hit.page, side) == named else 0.0
            units.append((-(hit.score + bonus), rank, index, side, hit))
    units.sort(key=lambda u: u[:3])
    count = sum(len(s) for s in taken.values())
    for _, _, _, side, hit in units:
        if count >= max_units or room - used < 3:
            break
        day = hit.page.timestamp.date()
        cost = side_words(hit.page, side) + (0 if day in days else 1)
        if used + cost <= room:
            used, count = used + cost, count + 1
            days.add(day)
            taken.setdefault(hit.page.id, set()).add(side)
            hits.setdefault(hit.page.id, hit)
    order = {h.page.id: i for i, h in enumerate(ranked)}
    out = []
    for pid in sorted(hits, key=lambda key: order.get(key, -1)):
        present = {s for s in ("user", "agent") if side_words(hits[pid].page, s)}
        side = None if taken.get(pid, present) >= present else next(iter(taken[pid]))  # type: ignore[arg-type,assignment]
        page = hits[pid].page if side is None else one_side(hits[pid].page, side)
        out.append((pid, side, hits[pid].score, page.user_input, page.agent_response))
    return out  # type: ignore[return-value]


@pytest.mark.parametrize("seed", range(80))
def test_packing_stops_early_yet_takes_exactly_what_sorting_every_unit_takes(seed: int) -> None:
    import random

    rng = random.Random(seed)
    names = ["Ana", "Bo", "Cy"]
    words = "I went to the lake and we painted birds all day long".split()
    fewest = rng.choice([0, 6, 10])  # long shortest sides: the packing stops once less room than that is left

    def said(who: str) -> str:
        return "" if rng.random() < 0.1 else f"{who}: " + " ".join(rng.choices(words, k=rng.randint(fewest, 14)))

    pages = [_page(f"p{i}", said(rng.choice(names)), said(rng.choice(names)), day=rng.randint(0, 4)) for i in range(40)]
    # ties, and now and then rising scores (then every unit is made before the first is taken)
    scores = sorted((rng.choice([0.5, 0.25, rng.random()]) for _ in pages), reverse=rng.random() < 0.9)
    ranked = [ScoredPage(p, s) for p, s in zip(pages, scores, strict=True) if p.user_input or p.agent_response]
    keep = [ScoredPage(h.page, h.score) for h in rng.sample(ranked, rng.randint(0, 3))]
    args = {
        "query": f"What did {rng.choice(names)} paint?",
        "room": rng.choice([0, 3, rng.randint(4, 150), 400]),
        "max_units": rng.choice([1, 5, 80]),
        "speaker_weight": rng.choice([0.0, 0.1, 0.2, 5.0]),
    }
    got = pack_turns(ranked, keep=keep, **args)  # type: ignore[arg-type]
    shown = [(h.page.id, h.side, h.score, h.page.user_input, h.page.agent_response) for h in got]
    assert shown == _pack_by_sorting_every_unit(ranked, keep=keep, **args)  # type: ignore[arg-type]


def test_the_shortest_side_is_counted_once_however_many_sides_do_not_fit() -> None:
    """A read whose shortest side has 3 words or fewer once counted it again for every side too long for the
    room left: 600 counts over 400 pages on some LoCoMo questions, 30 ms a read. Now once, and the same hits."""
    counted: list[tuple[str, str]] = []

    def words_of(page: DialoguePage, side: str) -> int:
        counted.append((page.id, side))
        return side_words(page, side)  # type: ignore[arg-type]

    long = " ".join(["word"] * 30)
    pages = [_page(f"p{i}", f"Ana: {long}", "Bo: ok" if i == 5 else f"Bo: {long}", day=i % 3) for i in range(60)]
    ranked = [ScoredPage(p, 1.0 - i / 100) for i, p in enumerate(pages)]
    args = {"query": "What did Ana say?", "room": 105, "max_units": 80, "speaker_weight": 0.2}  # 6 words left after 3
    got = pack_turns(ranked, words_of=words_of, **args)  # type: ignore[arg-type]
    assert [(h.page.id, h.side) for h in got] == [("p0", "user"), ("p1", "user"), ("p2", "user"), ("p5", "agent")]
    sides = 2 * len(pages)
    assert len(counted) <= 3 * sides  # the units' own counts (and their heap), plus one pass for the shortest
    shown = [(h.page.id, h.side, h.score, h.page.user_input, h.page.agent_response) for h in got]
    assert shown == _pack_by_sorting_every_unit(ranked, keep=[], **args)  # type: ignore[arg-type]
