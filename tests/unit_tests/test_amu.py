"""The AMU write path end to end: candidates, fuse, capacity, corrections, retrieval pre-filter."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.amu.corrections import FactNotFoundError
from langchain_memoryos.controllers import HeuristicController
from langchain_memoryos.controllers.rules import query_aspects
from langchain_memoryos.controllers.slots import agent_slot, canonical_summary, slot_of
from langchain_memoryos.kernel.controller import RelationJudgement
from langchain_memoryos.schema import MemoryRecord, Relation
from langchain_memoryos.scoring import select_candidates
from tests.conftest import at

MakeMemory = Callable[..., MemoryOS]


def _actions(events: list) -> list[str]:  # type: ignore[type-arg]
    return [e.action for e in events]


# -- candidates: slot and entity widening (hand-built records) -------------------------


def test_same_slot_is_a_candidate_below_tau_s() -> None:
    new = MemoryRecord(aspect="personal_profile", intent="inform", slot="employer")
    old = MemoryRecord(id="a", aspect="personal_profile", intent="inform", slot="employer")
    other = MemoryRecord(id="b", aspect="personal_profile", intent="inform", slot="location")
    assert [r.id for r, _ in select_candidates(new, [(old, 0.3), (other, 0.3)], 0.6)] == ["a"]


def test_shared_name_is_a_candidate_only_under_the_same_aspect() -> None:
    new = MemoryRecord(aspect="social_relationship", entities=["Felix"])
    same = MemoryRecord(id="a", aspect="social_relationship", entities=["Felix", "musician"])
    other_aspect = MemoryRecord(id="b", aspect="activity", entities=["Felix"])
    lower = MemoryRecord(id="c", aspect="social_relationship", entities=["felix"])  # not a name: lower case
    got = select_candidates(new, [(same, 0.1), (other_aspect, 0.1), (lower, 0.1)], 0.6)
    assert [r.id for r, _ in got] == ["a"]


def test_no_candidate_below_tau_s_without_slot_or_name() -> None:
    new = MemoryRecord(aspect="preference", entities=["jazz"])
    old = MemoryRecord(id="a", aspect="preference", entities=["opera"])
    assert select_candidates(new, [(old, 0.59)], 0.6) == []


# -- slots and canonical statements ----------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "slot"),
    [
        ("The user lives in Denver.", ("location", "denver")),
        ("The user moved to Denver last month for a new job.", ("location", "denver")),
        ("The user's sister lives in Paris.", ("sister.location", "paris")),
        ("The user works at Stripe.", ("employer", "stripe")),
        ("The user quit the user's job at Deloitte.", ("employer", "none")),
        ("The user's girlfriend and the user broke up.", ("relationship_status", "single")),
        ("Marco and the user are separating.", ("relationship_status", "separated")),
        ("The user doesn't eat meat anymore.", ("diet", "no meat")),
        ("The user is eating fish again now.", ("diet", "pescatarian")),
        ("The user can't stand horror movies.", ("preference:horror", "-")),
        ("The user visited the user's sister who lives in Paris.", None),
        ("The user loves the weather.", ("preference:weather", "+")),
        ("Their dog is called Rocky.", ("dog.name", "rocky")),
        ("Our neighbour is called Tom.", None),
    ],
)
def test_slot_of(summary: str, slot: tuple[str, str] | None) -> None:
    assert slot_of(summary) == slot


def test_canonical_summary_states_the_current_state_and_keeps_other_names() -> None:
    assert canonical_summary("The user used to live in Boston but now the user lives in Chicago.") == (
        "The user lives in Chicago."
    )
    assert canonical_summary("The user got a job at Stripe.") == "The user works at Stripe."
    # a second name would be lost: the statement stays as it is
    assert canonical_summary("The user is an engineer at Google.") == "The user is an engineer at Google."
    assert slot_of("The user is an engineer at Google.") == ("employer", "google")


def test_agent_slots() -> None:
    assert agent_slot("The assistant should keep answers brief.") == ("agent.length", "short")
    assert agent_slot("The assistant should give detailed answers.") == ("agent.length", "detailed")
    assert agent_slot("The assistant should use no emojis.") == ("agent.emoji", "no")
    assert agent_slot("The assistant should switch back to English.") == ("agent.language", "english")
    assert agent_slot("The assistant should be nice.") is None


# -- the write path through the facade (real stores) ------------------------------------


def test_change_of_city_under_tau_s_is_an_update(make_memory: MakeMemory) -> None:
    m = make_memory()
    (first,) = m.add_fact("I live in Portland.", user_id="u", timestamp=at(0))
    (moved,) = m.add_fact("Big news: I moved to Denver last month!", user_id="u", timestamp=at(1))
    assert moved.action == "updated" and moved.replaced_ids == [first.record.id]
    assert moved.relations[0].label == "update" and "location changed" in moved.relations[0].reason
    # an explicit add_fact keeps every content word of the statement, its relative time as a date
    assert [f.summary for f in m.list_facts(user_id="u")] == [
        "The user lives in Denver, having moved there in December 2023."
    ]
    assert m.list_facts(user_id="u")[0].created_at == at(0)  # the fused record keeps the first creation time


def test_new_employer_third_party_and_breakup(make_memory: MakeMemory) -> None:
    m = make_memory()
    m.add_fact("I work at Deloitte as an auditor.", user_id="u", timestamp=at(0))
    (sister,) = m.add_fact("My sister lives in Paris.", user_id="u", timestamp=at(1))
    (job,) = m.add_fact("I quit Deloitte, I'm at Ledgerly now.", user_id="u", timestamp=at(2))
    assert sister.action == "stored" and job.action == "updated" and job.relations[0].label == "update"
    assert not any(f.summary == "The user works at Deloitte." for f in m.list_facts(user_id="u"))
    (felix,) = m.add_fact("My boyfriend Felix is a session musician.", user_id="u", timestamp=at(3))
    events = m.add_fact("Felix and I called it quits last month.", user_id="u", timestamp=at(4))
    assert _actions(events)[0] == "updated" and felix.record.id in events[0].replaced_ids
    summaries = [f.summary for f in m.list_facts(user_id="u")]
    assert "The user's sister lives in Paris." in summaries
    assert "Felix and the user called it quits in December 2023." in summaries  # every word kept, dated
    assert not any("boyfriend" in s for s in summaries)


def test_fuse_deletes_update_and_duplicate_candidates() -> None:
    class Scripted(HeuristicController):
        """Separate while seeding; then: Oslo → update, Oslo, Norway → duplicate, Bergen → separate."""

        seeding = True

        def judge_relations(self, record, candidates):  # type: ignore[no-untyped-def]
            def label(summary: str) -> str:
                if self.seeding or "Bergen" in summary:
                    return "separate"
                return "duplicate" if "Norway" in summary else "update"

            return RelationJudgement([Relation(c.id, label(c.summary), s) for c, s in candidates])  # type: ignore[arg-type]

    controller = Scripted()
    m = MemoryOS(controller=controller)
    seeds = ["The user lives in Oslo.", "The user lives in Oslo, Norway.", "The user lives in Bergen."]
    ids = {text: m.add_fact(text, user_id="u", timestamp=at(i))[0].record.id for i, text in enumerate(seeds)}
    assert len(m.list_facts(user_id="u")) == 3
    controller.seeding = False
    (event,) = m.add_fact("The user lives in Trondheim.", user_id="u", timestamp=at(5))
    assert event.action == "updated"
    assert sorted(event.replaced_ids) == sorted([ids[seeds[0]], ids[seeds[1]]])
    assert "duplicates" in event.reason
    assert sorted(f.summary for f in m.list_facts(user_id="u")) == [
        "The user lives in Bergen.",
        "The user lives in Trondheim.",
    ]


def test_capacity_eviction_is_logged_as_its_own_event(make_memory: MakeMemory) -> None:
    m = make_memory(MemoryOSConfig(agent_traits_capacity=1))
    (first,) = m.add_fact("Answer in bullet points.", user_id="u", kind="agent", timestamp=at(0))
    events = m.add_fact("Always reply in French.", user_id="u", kind="agent", timestamp=at(1))
    assert _actions(events) == ["stored", "evicted"]
    assert events[1].record.id == first.record.id and "capacity 1" in events[1].reason
    assert [f.summary for f in m.list_facts(user_id="u", kind="agent")] == [events[0].record.summary]


def test_request_with_a_fact_keeps_the_fact_only(make_memory: MakeMemory) -> None:
    m = make_memory()
    events = m.add_fact("Book me a table somewhere vegan, I'm vegan.", user_id="u")
    assert _actions(events) == ["filtered", "stored"]
    assert events[1].record.summary == "The user is vegan." and events[1].record.aspect == "health"
    assert [f.summary for f in m.list_facts(user_id="u")] == ["The user is vegan."]


def test_one_text_many_facts(make_memory: MakeMemory) -> None:
    m = make_memory()
    events = m.add_fact("Hi! My name is Ana and I live in Lisbon.", user_id="u")
    assert _actions(events) == ["stored", "stored"]
    assert sorted(f.slot for f in m.list_facts(user_id="u")) == ["location", "name"]


def test_hedged_and_transient_statements_are_filtered() -> None:
    m = MemoryOS()
    for text in [
        "maybe I'll learn to dive someday, not sure",
        "I'm sitting in a cafe waiting for my table",
        "ugh, so tired today",
        "haha thanks!",
    ]:
        assert _actions(m.add_fact(text, user_id="u")) == ["filtered"], text
    assert m.list_facts(user_id="u") == []


def test_update_and_delete_fact(make_memory: MakeMemory) -> None:
    m = make_memory()
    (stored,) = m.add_fact("I'm allergic to peanuts.", user_id="u", timestamp=at(0))
    fid = stored.record.id
    edited = m.update_fact(fid, "The user is allergic to peanuts and cashews.", user_id="u")
    assert edited.action == "edited" and "was: The user is allergic to peanuts." in edited.reason
    (fact,) = m.list_facts(user_id="u")
    assert fact.summary == "The user is allergic to peanuts and cashews." and fact.id == fid
    ctx = m.retrieve("Is there anything I can't eat, like cashews?", user_id="u")
    assert ctx.user_facts and ctx.user_facts[0].record.summary == fact.summary  # re-embedded
    deleted = m.delete_fact(fid, user_id="u")
    assert deleted.action == "deleted" and m.list_facts(user_id="u") == []
    log = m.write_log(user_id="u")
    assert _actions(log) == ["stored", "edited", "deleted"]
    assert all("peanut" not in (e.record.summary + " ".join(e.record.entities)).lower() for e in log)
    with pytest.raises(FactNotFoundError, match="list_facts"):
        m.delete_fact(fid, user_id="u")
    with pytest.raises(ValueError, match="delete_fact"):
        m.update_fact("f_1", "   ", user_id="u")


def test_async_corrections() -> None:
    async def main() -> list[str]:
        m = MemoryOS()
        (stored,) = await m.aadd_fact("I live in Oslo.", user_id="u")
        await m.aupdate_fact(stored.record.id, "The user lives in Bergen.", user_id="u")
        facts = await m.alist_facts(user_id="u")
        await m.adelete_fact(stored.record.id, user_id="u")
        return [f.summary for f in facts] + [str(len(await m.alist_facts(user_id="u")))]

    assert asyncio.run(main()) == ["The user lives in Bergen.", "0"]


# -- retrieval: aspect pre-filter --------------------------------------------------------


def test_query_aspects() -> None:
    assert query_aspects("Where do I live?") == {"personal_profile"}
    assert "health" in query_aspects("Am I allergic to anything?")
    assert query_aspects("What did we talk about?") == frozenset()


def test_facts_of_the_queried_aspect_come_first_and_others_fill() -> None:
    m = MemoryOS(config=MemoryOSConfig(top_facts=2))
    m.add_fact("I live in Oslo.", user_id="u", timestamp=at(0))
    m.add_fact("I'm allergic to peanuts.", user_id="u", timestamp=at(1))
    m.add_fact("I love hiking in the Oslo hills.", user_id="u", timestamp=at(2))
    ctx = m.retrieve("Where do I live?", user_id="u")
    aspects = [hit.record.aspect for hit in ctx.user_facts]
    assert aspects[0] == "personal_profile" and len(aspects) <= 2
    assert all(hit.score >= m.settings.thresholds.retrieval_similarity for hit in ctx.user_facts)
    # a query naming no aspect still retrieves by similarity alone
    ctx = m.retrieve("peanuts", user_id="u")
    assert ctx.user_facts[0].record.summary == "The user is allergic to peanuts."
