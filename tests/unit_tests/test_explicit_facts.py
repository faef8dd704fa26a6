"""An explicit ``add_fact`` loses nothing silently, through the public API."""

from __future__ import annotations

import asyncio
import datetime as dt
import re

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.amu.explicit import content_words


def at(day: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=day)


def _letters(i: int) -> str:
    return chr(97 + i // 26) + chr(97 + i % 26)


def test_a_named_person_is_the_subject_not_refused_as_not_personal() -> None:
    m = MemoryOS()
    (event,) = m.add_fact("Joanna adopted a dog named Max in May 2022.", user_id="u")
    assert event.action == "stored", event.reason
    (fact,) = m.list_facts(user_id="u")
    assert fact.summary == "Joanna adopted a dog named Max in May 2022." and fact.subject == "Joanna"
    hits = m.search("Joanna's dog", user_id="u", limit=3)
    assert any(h.text == fact.summary for h in hits)


@pytest.mark.parametrize(
    "statement",
    [
        "The user works as a nurse in Oslo.",
        "I work as a nurse in Oslo.",
        "I work as a nurse at Google.",
        "Caroline went to a pride parade on 7 May 2023.",
        "Gina opened an online clothing store in 2023.",
        "My brother Tim is a dentist in Rome.",
    ],
)
def test_what_is_stored_keeps_every_content_word(statement: str) -> None:
    m = MemoryOS()
    events = m.add_fact(statement, user_id="u")
    assert [e.action for e in events] and all(e.action == "stored" for e in events), [e.reason for e in events]
    kept: set[str] = set()
    for fact in m.list_facts(user_id="u"):
        kept |= content_words(fact.summary)
    assert content_words(statement) <= kept, (statement, [f.summary for f in m.list_facts(user_id="u")])


def test_the_occupation_is_kept_beside_the_place() -> None:
    m = MemoryOS()
    m.add_fact("The user works as a nurse in Oslo.", user_id="u")
    assert [f.summary for f in m.list_facts(user_id="u")] == ["The user works as a nurse in Oslo."]


def test_the_judge_still_merges_duplicates_and_updates_of_a_named_person() -> None:
    m = MemoryOS()
    assert [e.action for e in m.add_fact("Joanna lives in Oslo.", user_id="u", timestamp=at(0))] == ["stored"]
    assert [e.action for e in m.add_fact("Joanna moved to Bergen.", user_id="u", timestamp=at(1))] == ["updated"]
    assert [e.action for e in m.add_fact("Joanna moved to Bergen.", user_id="u", timestamp=at(2))] == ["discarded"]
    assert [f.summary for f in m.list_facts(user_id="u")] == ["Joanna moved to Bergen."]
    # two people's facts never merge
    assert [e.action for e in m.add_fact("Nate lives in Oslo.", user_id="u", timestamp=at(3))] == ["stored"]


SAID = dt.datetime(2023, 5, 8, 10, tzinfo=dt.UTC)  # a Monday


@pytest.mark.parametrize(
    ("statement", "dated"),
    [
        ("I ran my first half marathon yesterday.", "on 7 May 2023"),
        ("I moved to Denver last month for a new job.", "in April 2023"),
        ("Joanna adopted a dog named Max two years ago.", "in 2021"),
        ("My sister Ana starts at Stripe next week.", "in the week after 8 May 2023"),
        ("I have a dentist appointment next Tuesday.", "on 9 May 2023"),
    ],
)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_relative_time_in_an_explicit_fact_becomes_a_date(statement: str, dated: str, mode: str) -> None:
    # issue 31, point 4: the date is resolved against add_fact's timestamp, and every other word is kept
    m = MemoryOS()
    if mode == "sync":
        events = m.add_fact(statement, user_id="u", timestamp=SAID)
    else:
        events = asyncio.run(m.aadd_fact(statement, user_id="u", timestamp=SAID))
    assert [e.action for e in events] == ["stored"], [e.reason for e in events]
    (fact,) = m.list_facts(user_id="u")
    assert m.get_fact(fact.id, user_id="u").fact.summary == fact.summary
    assert dated in fact.summary, fact.summary
    assert not re.search(r"(?i)\b(?:yesterday|last|next|ago)\b", fact.summary), fact.summary
    relative = {"yesterday", "last", "next", "ago", "month", "week", "two", "year", "tuesday"}
    assert content_words(statement) - relative <= content_words(fact.summary), fact.summary


def test_an_explicit_fact_without_a_timestamp_is_dated_by_the_conversation_clock() -> None:
    m = MemoryOS()
    m.add_turn("I live in Oslo.", "Nice.", user_id="u", thread_id="t", timestamp=SAID)
    (event,) = m.add_fact("I went hiking yesterday.", user_id="u")
    assert event.record.summary == "The user went hiking on 7 May 2023."


def test_a_named_relative_is_the_subject_of_an_explicit_fact_and_their_own_update() -> None:
    m = MemoryOS()
    (first,) = m.add_fact("My sister Ana lives in Rome.", user_id="u", timestamp=SAID)
    assert first.record.subject == "Ana"
    (moved,) = m.add_fact("Ana moved to Paris last month.", user_id="u", timestamp=SAID)
    assert moved.action == "updated" and moved.replaced_ids == [first.record.id]
    assert [(f.subject, f.summary) for f in m.list_facts(user_id="u")] == [
        ("Ana", "Ana lives in Paris, having moved there in April 2023.")
    ]


@pytest.mark.parametrize(
    ("statement", "stored"),
    [
        ("Please remember that I'm vegan.", "The user is vegan."),
        ("Remember: gate code 4471.", "The user's gate code is 4471."),
        ("i dont eat meat", "The user doesn't eat meat."),
    ],
)
def test_an_explicit_fact_keeps_the_statement_not_the_request_or_the_typing(statement: str, stored: str) -> None:
    # the request to remember is no content word of the fact, and "dont" is "don't" as written
    m = MemoryOS()
    (event,) = m.add_fact(statement, user_id="u")
    assert event.action == "stored", event.reason
    assert [f.summary for f in m.list_facts(user_id="u")] == [stored]


def test_chit_chat_and_hedges_are_still_filtered() -> None:
    m = MemoryOS()
    for text in ("haha thanks!", "maybe I'll learn to dive someday, not sure"):
        assert [e.action for e in m.add_fact(text, user_id="u")] == ["filtered"], text
    assert m.list_facts(user_id="u") == []


def test_the_default_knowledge_base_holds_thousands_and_the_paper_preset_100() -> None:
    assert MemoryOSConfig().user_kb_capacity >= 2000
    assert MemoryOSConfig.paper().user_kb_capacity == 100
    assert MemoryOSConfig.paper(user_kb_capacity=7).user_kb_capacity == 7


def test_beyond_capacity_the_least_useful_fact_goes_logged_with_its_reason() -> None:
    m = MemoryOS(config=MemoryOSConfig.paper())
    cities = [f"Town{_letters(i)}" for i in range(101)]
    for day, city in enumerate(cities):
        m.add_fact(f"Friend{_letters(day)} lives in {city}.", user_id="u", timestamp=at(day))
    facts = m.list_facts(user_id="u")
    assert len(facts) == 100 and not any(cities[0] in f.summary for f in facts)
    (evicted,) = [e for e in m.write_log(user_id="u") if e.action == "evicted"]
    assert cities[0] in evicted.record.summary
    assert "capacity 100 reached" in evicted.reason and "least useful: lowest confidence, then oldest" in evicted.reason


def test_the_default_keeps_what_the_paper_preset_evicts() -> None:
    m = MemoryOS()
    for day in range(120):
        m.add_fact(f"Friend{_letters(day)} plays chess.", user_id="u", timestamp=at(day))
    assert len(m.list_facts(user_id="u")) == 120
    assert not [e for e in m.write_log(user_id="u") if e.action == "evicted"]


def test_a_negated_end_of_a_named_person_updates_none_of_their_facts() -> None:
    """'Jon won't quit' states no end, and Jon's name alone makes no fact a candidate to end."""
    memory = MemoryOS()
    for text in ("Jon works as a teacher.", "Jon loves contemporary dance.", "Jon has a dog named Rex."):
        memory.add_fact(text, user_id="g")
    events = memory.add_fact("Jon won't quit, no matter what.", user_id="g")
    assert [e.action for e in events] == ["stored"]
    kept = {f.summary for f in memory.list_facts(user_id="g")}
    assert {"Jon works as a teacher.", "Jon loves contemporary dance.", "Jon has a dog named Rex."} <= kept
