"""The read path's ranking: dialogue-chain windows, named dates, the compact STM view, the flat-hybrid floor."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable

import numpy as np
import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.index.chain import WINDOW_SIZES, ChainWindows, chain_order
from langchain_memoryos.index.lexical import rrf, tokenize
from langchain_memoryos.retrieval.dates import named_dates
from langchain_memoryos.schema import DialoguePage

T0 = dt.datetime(2023, 5, 8, 13, 0, tzinfo=dt.UTC)
FLAT = MemoryOSConfig(chain_weights=(0.0, 0.0), date_weight=0.0)


def _page(i: int, thread: str = "t", minutes: float = 1.0, text: str = "x") -> DialoguePage:
    return DialoguePage(
        id=f"{thread}{i}",
        user_input=f"{text} {i}",
        agent_response="",
        thread_id=thread,
        timestamp=T0 + dt.timedelta(minutes=minutes * i),
        metadata={"_seq": i},
    )


def _windows(w: ChainWindows) -> dict[int, dict[str, tuple[str, ...]]]:
    return {size: dict(w._members[size]) for size in WINDOW_SIZES}


def _expected(pages: list[DialoguePage], gap: float) -> dict[int, dict[str, tuple[str, ...]]]:
    """The windows by definition: runs of consecutive pages of a thread, each step within the gap."""
    out: dict[int, dict[str, tuple[str, ...]]] = {size: {} for size in WINDOW_SIZES}
    for thread in {p.thread_id for p in pages}:
        chain = sorted((p for p in pages if p.thread_id == thread), key=chain_order)
        for size in WINDOW_SIZES:
            for end in range(size - 1, len(chain)):
                run = chain[end - size + 1 : end + 1]
                gaps = [(b.timestamp - a.timestamp).total_seconds() for a, b in zip(run, run[1:], strict=False)]
                if all(abs(g) <= gap for g in gaps):
                    out[size][run[-1].id] = tuple(p.id for p in run)
    return out


def test_windows_kept_in_step_equal_windows_built_from_scratch() -> None:
    rng = random.Random(7)
    vector = np.ones(4, dtype=np.float32) / 2
    pages = [_page(i, thread=rng.choice("ab"), minutes=rng.choice([1, 1, 1, 90])) for i in range(60)]
    alive: dict[str, DialoguePage] = {}
    w = ChainWindows(4, gap_seconds=1800)
    for step in range(200):
        if alive and rng.random() < 0.35:
            gone = rng.sample(sorted(alive), k=min(len(alive), rng.choice([1, 1, 3])))
            w.remove(gone)
            for pid in gone:
                del alive[pid]
        else:
            page = rng.choice(pages)
            alive[page.id] = page
            w.add(page, vector)  # type: ignore[arg-type]
        assert _windows(w) == _expected(list(alive.values()), 1800), f"step {step}"
    fresh = ChainWindows(4, gap_seconds=1800)
    fresh.build((p, vector) for p in alive.values())  # type: ignore[misc]
    assert _windows(fresh) == _windows(w)
    assert len(w._lexicons[2]) == len(w._members[2]) and len(w._vectors[3]) == len(w._members[3])


def test_a_pause_longer_than_the_gap_starts_a_new_chain() -> None:
    w = ChainWindows(2, gap_seconds=1800)
    for i, minute in enumerate([0, 20, 90, 100]):
        page = _page(i)
        page.timestamp = T0 + dt.timedelta(minutes=minute)
        w.add(page, np.ones(2, dtype=np.float32))
    # t1 -> t2 is 70 minutes apart
    assert w.members(2, "t1") == ("t0", "t1")
    assert w.members(2, "t2") is None and w.members(3, "t3") is None
    assert w.members(2, "t3") == ("t2", "t3")


def test_a_question_spread_over_two_turns_is_found_by_its_window() -> None:
    """The question's words are split between a question page and its answer page: the window holds both."""
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=2, context_words=120))
    asked = "Caroline: Guess what I bought yesterday for the garden?"
    answer = "Caroline: A little apricot tree, from the Saturday market."
    turns = [
        (asked, "Melanie: Tell me!"),
        (answer, "Melanie: Lovely."),
        ("Caroline: My garden looks so green this spring, the garden is my happy place.", "Melanie: Nice."),
        ("Caroline: The market downtown was so crowded, what a market.", "Melanie: Busy!"),
        ("Caroline: I bought new shoes.", "Melanie: Cool."),
    ] + [(f"Caroline: Random chatter about topic number {i} and the weather.", "Melanie: Sure.") for i in range(30)]
    for i, (a, b) in enumerate(turns):
        # the first two pages are one session; every other page is a day apart
        when = T0 + dt.timedelta(days=0 if i < 2 else i, minutes=i)
        memory.add_turn(a, b, user_id="u", thread_id="c", timestamp=when)
    question = "What did Caroline buy for the garden at the market?"
    chained = [hit.page.user_input for hit in memory.retrieve(question, user_id="u", thread_id="q").pages]
    assert chained[:2] == [asked, answer]
    flat = MemoryOS(memory.store, config=replace_config(memory.config, chain_weights=(0.0, 0.0)))
    flat_top = [hit.page.user_input for hit in flat.retrieve(question, user_id="u", thread_id="q").pages]
    assert flat_top.index(answer) > 1  # a page with "market" twice comes before the answer


def replace_config(config: MemoryOSConfig, **changes: object) -> MemoryOSConfig:
    from dataclasses import replace

    return replace(config, **changes)  # type: ignore[arg-type]


def test_with_no_chain_and_no_dates_the_ranking_is_the_flat_hybrid(make_memory: Callable[..., MemoryOS]) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=1, context_words=None, top_pages=200, **_flat_changes()))  # type: ignore[arg-type]
    topics = ["pottery class", "camping trip", "violin lessons", "new job", "sister's wedding", "garden"]
    for i in range(24):
        memory.add_turn(
            f"Talking about the {topics[i % 6]} again, part {i}.",
            "ok",
            user_id="u",
            thread_id="t",
            timestamp=T0 + dt.timedelta(minutes=i),
        )
    query = "How was the camping trip and the violin?"
    got = [hit.page.id for hit in memory.retrieve(query, user_id="u", thread_id="other").pages]
    state = memory.repository.cached("u")
    assert state is not None
    vector = memory.embeddings.embed_query(query)
    candidates = {**state.pages, **{p.id: p for pages in state.stm.values() for p in pages}}
    dense = sorted(candidates, key=lambda pid: -float(np.dot(_vector(state, pid), vector)))
    lexical = [key for key, _ in state.lexicon.search(tokenize(query), 1000) if key in candidates]
    assert got == rrf([dense, lexical], k=memory.config.rrf_k)[: len(got)]


def _flat_changes() -> dict[str, object]:
    return {"chain_weights": (0.0, 0.0), "date_weight": 0.0}


def _vector(state: object, pid: str) -> np.ndarray:
    s = state  # UserState
    if pid in s.stm_vectors:  # type: ignore[attr-defined]
        return np.asarray(s.stm_vectors[pid])  # type: ignore[attr-defined]
    return np.asarray(s.page_index.get(pid))  # type: ignore[attr-defined]


def test_a_named_date_brings_that_days_page_first() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, chain_weights=(0.0, 0.0)))
    for i in range(6):
        when = T0 + dt.timedelta(days=3 * i)
        memory.add_turn("I went to the farmers market.", "Nice.", user_id="u", thread_id="t", timestamp=when)
    day = T0 + dt.timedelta(days=9)
    question = f"What did I do on {day.day} {day:%B}, {day.year}?"
    assert named_dates(question)
    first = memory.retrieve(question, user_id="u", thread_id="q").pages[0].page
    assert first.timestamp.date() == day.date()
    no_date = MemoryOS(memory.store, config=MemoryOSConfig(stm_capacity=1, chain_weights=(0.0, 0.0), date_weight=0))
    assert no_date.retrieve(question, user_id="u", thread_id="q").pages[0].page.timestamp.date() != day.date()


def test_the_compact_stm_view_shows_the_newest_page_and_ranks_the_rest() -> None:
    config = MemoryOSConfig(context_words=300)
    memory = MemoryOS(config=config)
    long_answer = " ".join(["word"] * 80)
    turns = [("I adopted a cat called Miso.", "Cute!")] + [(f"Chat {i} about nothing much.", "ok") for i in range(4)]
    turns.append(("And the weather today?", long_answer))
    for i, (a, b) in enumerate(turns):
        memory.add_turn(a, b, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))
    ctx = memory.retrieve("What is my cat called?", user_id="u", thread_id="t")
    assert [p.user_input for p in ctx.stm] == ["And the weather today?"]
    assert "[cut:" in ctx.to_prompt()  # the newest page is shown compactly
    assert ctx.pages and ctx.pages[0].page.user_input == "I adopted a cat called Miso."
    full = MemoryOS(memory.store, config=MemoryOSConfig(context_words=300, stm_view="full"))
    shown = full.retrieve("What is my cat called?", user_id="u", thread_id="t")
    assert len(shown.stm) > 1 and not any(h.page.thread_id == "t" for h in shown.pages)


def test_the_page_cap_grows_with_the_word_budget() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, context_words=4000))
    for i in range(90):
        memory.add_turn(f"Note {i}: tea.", "ok", user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))
    assert len(memory.retrieve("tea", user_id="u", thread_id="q").pages) > 40


@pytest.mark.parametrize("bad", [(1.0,), (1.0, -1.0), [1.0, 1.0], (1.0, float("nan"))])
def test_chain_weights_are_validated(bad: object) -> None:
    with pytest.raises(ValueError, match="chain_weights"):
        MemoryOSConfig(chain_weights=bad)  # type: ignore[arg-type]


def test_the_windows_survive_a_reload(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "m.db"
    with MemoryOS.from_sqlite(path, config=MemoryOSConfig(stm_capacity=2)) as memory:
        for i in range(8):
            memory.add_turn(f"turn {i}", "ok", user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))
        state = memory.repository.cached("u")
        assert state is not None
        before = _windows(state.chain(1800))
    with MemoryOS.from_sqlite(path, config=MemoryOSConfig(stm_capacity=2)) as again:
        again.retrieve("turn", user_id="u", thread_id="q")
        state = again.repository.cached("u")
        assert state is not None
        assert _windows(state.chain(1800)) == before and len(before[3]) == 6


def _segments(memory: MemoryOS) -> dict[str, tuple[int, float]]:
    return {s.id: (s.n_visit, s.heat) for s in memory.list_segments(user_id="u")}


def test_a_read_with_touch_false_writes_nothing(make_memory: Callable[..., MemoryOS]) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=2))
    for i in range(12):
        memory.add_turn(f"I practised the violin, day {i}.", "ok", user_id="u", timestamp=T0 + dt.timedelta(days=i))
    before = _segments(memory)
    rows = sorted((i.namespace, i.key, str(i.value)) for i in memory.store.search(("memoryos",), limit=10_000))
    for _ in range(2):
        ctx = memory.retrieve("How is the violin going?", user_id="u", thread_id="q", touch=False)
        assert ctx.pages and ctx.segments  # the segments hit are listed, unchanged
    after = sorted((i.namespace, i.key, str(i.value)) for i in memory.store.search(("memoryos",), limit=10_000))
    assert _segments(memory) == before and after == rows
    memory.retrieve("How is the violin going?", user_id="u", thread_id="q")
    touched = _segments(memory)
    assert any(touched[k][0] == before[k][0] + 1 for k in before)  # the paper's visit counting
    with pytest.raises(TypeError, match="touch"):
        memory.retrieve("violin", user_id="u", touch="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stm_view"):
        memory.retrieve("violin", user_id="u", stm_view="all")


def test_the_messages_view_returns_the_whole_stm_and_spends_no_budget_on_it() -> None:
    memory = MemoryOS(config=MemoryOSConfig(context_words=200, stm_capacity=4))
    long = " ".join(["chatter"] * 60)
    turns = [("I adopted a cat called Miso.", "Cute!")] + [(f"Day {i}: {long}", "ok") for i in range(8)]
    for i, (a, b) in enumerate(turns):
        memory.add_turn(a, b, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))
    ctx = memory.retrieve("What is my cat called?", user_id="u", thread_id="t", stm_view="messages")
    stored = memory.get_stm(user_id="u", thread_id="t")
    assert [p.user_input for p in ctx.stm] == [p.user_input for p in stored]  # whole, uncut: the chat history
    assert not {h.page.id for h in ctx.pages} & {p.id for p in stored}  # never shown twice
    assert len(ctx.without_stm().to_prompt().split()) <= 200 < len(ctx.to_prompt().split())
    assert "Miso" in ctx.without_stm().to_prompt()


def test_a_large_users_windows_ranked_on_the_other_core_give_the_same_context(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_memoryos.retrieval import recall
    from langchain_memoryos.threads import side_threads

    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=2, context_words=200))
    rng = random.Random(7)
    words = ["garden", "market", "apricot", "tree", "shoes", "weather", "marathon", "chess", "paint", "lake"]
    for i in range(60):
        text = " ".join(rng.choice(words) for _ in range(8))
        memory.add_turn(
            f"Ana: {text}", "Bo: ok", user_id="u", thread_id="c", timestamp=T0 + dt.timedelta(minutes=3 * i)
        )
    questions = ["What did Ana buy at the market?", "apricot tree in the garden", "chess and paint"]

    def contexts() -> list[str]:
        return [memory.retrieve(q, user_id="u", thread_id="q", touch=False).to_prompt() for q in questions]

    here = contexts()
    ranked_beside: list[str] = []
    submit = side_threads().submit

    def counted(fn: Callable[[], object]) -> object:
        ranked_beside.append("window ranking")
        return submit(fn)

    monkeypatch.setattr(recall, "PARALLEL_RANKING_PAGES", 0)
    monkeypatch.setattr(side_threads(), "submit", counted)
    assert contexts() == here
    assert len(ranked_beside) == len(questions)
