"""Which user facts a read shows (retrieval/facts.py): those that say what the shown pages do not."""

from __future__ import annotations

import datetime as dt

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.retrieval.facts import Shown, adding_facts
from langchain_memoryos.schema import MemoryRecord, ScoredRecord

MAY_8 = dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)


def _hit(text: str) -> ScoredRecord:
    return ScoredRecord(MemoryRecord(summary=text), 0.6)


def test_a_fact_that_restates_a_shown_page_is_left_out_and_one_with_a_resolved_date_is_shown() -> None:
    shown = Shown.of("[2023-05-08]\nUser: Ana: I went to a support group yesterday. I paint birds.")
    facts = [_hit("Ana paints birds."), _hit("Ana went to a support group on 7 May 2023.")]
    assert [h.record.summary for h in adding_facts(facts, shown, 100)] == [facts[1].record.summary]
    # a date the shown pages already name adds nothing
    assert adding_facts([_hit("Ana went to a support group on 8 May 2023.")], shown, 100) == []
    # the second of two facts saying the same new thing adds nothing once the first is taken
    twice = [_hit("Ana lives in Oslo."), _hit("Ana lives in Oslo now.")]
    assert [h.record.summary for h in adding_facts(twice, shown, 100)] == ["Ana lives in Oslo."]
    # within the words given: a fact that does not fit gives way to a shorter one further down
    long = _hit("Ana " + "really " * 30 + "likes Oslo.")
    assert [h.record.summary for h in adding_facts([long, _hit("Ana skis.")], shown, 10)] == ["Ana skis."]


def test_the_read_shows_the_fact_of_a_shown_page_when_it_resolves_the_page_s_relative_time() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, context_words=300))
    memory.add_turn("I went to a pottery workshop yesterday.", "Fun!", user_id="u", thread_id="t", timestamp=MAY_8)
    for i in range(3):
        memory.add_turn(f"Filler number {i}.", "Ok.", user_id="u", thread_id="t", timestamp=MAY_8)
    facts = memory.list_facts(user_id="u")
    assert any("7 May 2023" in f.summary for f in facts), [f.summary for f in facts]
    ctx = memory.retrieve("When did I go to the pottery workshop?", user_id="u", thread_id="other", touch=False)
    assert any("yesterday" in hit.page.user_input for hit in ctx.pages)  # the page is shown ...
    assert any("7 May 2023" in h.record.summary for h in ctx.user_facts)  # ... and the fact that dates it
    prompt = ctx.to_prompt()
    assert "7 May 2023" in prompt


def test_a_fact_that_only_restates_its_shown_page_is_not_shown_and_its_words_go_to_the_pages() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, context_words=300))
    memory.add_turn("I am allergic to peanuts.", "Noted.", user_id="u", thread_id="t", timestamp=MAY_8)
    for i in range(3):
        memory.add_turn(f"Filler number {i}.", "Ok.", user_id="u", thread_id="t", timestamp=MAY_8)
    assert memory.list_facts(user_id="u")
    ctx = memory.retrieve("Am I allergic to peanuts?", user_id="u", thread_id="other", touch=False)
    assert any("peanuts" in hit.page.user_input for hit in ctx.pages)
    assert ctx.user_facts == []
    # read without a budget (the paper's way) the fact is listed beside nothing: every source page shown drops it
    unbudgeted = MemoryOS(store=memory.store, config=MemoryOSConfig(stm_capacity=1, context_words=None))
    assert (
        unbudgeted.retrieve("Am I allergic to peanuts?", user_id="u", thread_id="other", touch=False).user_facts == []
    )
