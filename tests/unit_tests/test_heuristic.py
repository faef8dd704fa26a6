"""HeuristicController: typed records, chain link, judge, fuse, promotion — and the AMU path end to end."""

from __future__ import annotations

import pytest

from langchain_memoryos import HeuristicController, MemoryOS, MemoryOSConfig
from langchain_memoryos.controllers import MemoryController
from langchain_memoryos.controllers.rules import slot_of, third_person
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Persona, Segment
from tests.conftest import at


def test_is_a_memory_controller() -> None:
    assert isinstance(HeuristicController(), MemoryController)


@pytest.mark.parametrize(
    ("sentence", "summary"),
    [
        ("I live in Boston.", "The user lives in Boston."),
        ("Wow, I really love hiking with my dog!", "The user loves hiking with the user's dog."),
        ("I'm a nurse.", "The user is a nurse."),
        ("I no longer like coffee.", "The user no longer likes coffee."),
        ("I go to the gym.", "The user goes to the gym."),
        ("I have two kids.", "The user has two kids."),
    ],
)
def test_third_person_summaries(sentence: str, summary: str) -> None:
    assert third_person(sentence) == summary


@pytest.mark.parametrize(
    ("summary", "slot"),
    [
        ("The user lives in Denver.", ("location", "denver")),
        ("The user moved to Denver last spring.", ("location", "denver")),
        ("The user's name is Caroline.", ("name", "caroline")),
        ("The user is 34 years old.", ("age", "34")),
        ("The user is vegan.", ("diet", "vegan")),
        ("The user's favorite band is Radiohead.", ("favorite_band", "radiohead")),
        ("The user loves hiking with the user's dog.", ("preference:hiking", "+")),
        ("The user does not like coffee.", ("preference:coffee", "-")),
        ("The user went to a concert.", None),
    ],
)
def test_slots(summary: str, slot: tuple[str, str] | None) -> None:
    assert slot_of(summary) == slot


def test_request_with_a_personal_fact_yields_the_fact() -> None:
    records = HeuristicController().records_from_text("Book a vegan place for Friday. I'm vegan.")
    assert [(r.intent, r.personal) for r in records] == [("request", False), ("inform", True)]
    fact = records[1]
    assert (fact.aspect, fact.summary, fact.entities) == ("health", "The user is vegan.", ["vegan"])


def test_confidence_rubric() -> None:
    c = HeuristicController()
    assert c.parse_records("I live in Oslo.", "user").records[0].confidence == 1.0
    assert c.parse_records("Maybe I live in Oslo.", "user").records[0].confidence == pytest.approx(0.6)
    assert c.parse_records("I'm tired today.", "user").records[0].confidence == pytest.approx(0.4)


def test_agent_directive_becomes_an_agent_trait() -> None:
    records = HeuristicController().records_from_text("From now on, please call me Sam.")
    assert len(records) == 1
    assert records[0].kind == "agent" and records[0].summary == "The assistant should call the user Sam."


def test_chain_link_by_similarity_cue_and_gap() -> None:
    c = HeuristicController()
    prev = DialoguePage(
        id="a",
        user_input="I'm planning a trip to Japan.",
        agent_response="Fun!",
        timestamp=at(0),
        thread_id="t",
        meta="I'm planning a trip to Japan.",
    )
    near = DialoguePage(
        id="b", user_input="Which cities should I visit?", agent_response="Kyoto.", timestamp=at(0, 2), thread_id="t"
    )
    analysis = c.analyze_page(near, prev, 0.6)
    assert analysis.linked and analysis.chain_meta == "I'm planning a trip to Japan. → Which cities should I visit?"
    cue = DialoguePage(
        id="c", user_input="And what about food?", agent_response="Ramen.", timestamp=at(0, 3), thread_id="t"
    )
    assert c.analyze_page(cue, prev, 0.05).linked
    assert not c.analyze_page(near, prev, 0.05).linked
    late = DialoguePage(
        id="d", user_input="And what about food?", agent_response="Ramen.", timestamp=at(2), thread_id="t"
    )
    assert not c.analyze_page(late, prev, 0.9).linked
    assert c.analyze_page(late, prev, 0.9).chain_meta == "And what about food?"


def test_judge_same_slot_update_and_duplicate_and_separate() -> None:
    c = HeuristicController()
    new = MemoryRecord(summary="The user lives in Denver.", entities=["Denver"])
    boston = MemoryRecord(id="b", summary="The user lives in Boston.", entities=["Boston"])
    denver = MemoryRecord(id="d", summary="The user lives in Denver.", entities=["Denver"])
    job = MemoryRecord(id="j", summary="The user works as a nurse.", entities=["nurse"])
    labels = [r.label for r in c.judge_relations(new, [(boston, 0.8), (denver, 0.99), (job, 0.61)]).relations]
    assert labels == ["update", "duplicate", "separate"]


def test_fuse_keeps_the_new_state_and_merges_provenance() -> None:
    new = MemoryRecord(summary="The user lives in Denver.", source_page_ids=["p2"], created_at=at(5))
    old = MemoryRecord(id="o", summary="The user lives in Boston.", source_page_ids=["p1"], created_at=at(1))
    fused = HeuristicController().fuse(new, [old]).record
    assert fused.summary == "The user lives in Denver." and fused.source_page_ids == ["p1", "p2"]
    assert fused.created_at == at(1)


def test_promotion_fills_profile_and_traits() -> None:
    pages = [
        DialoguePage(id="1", user_input="My name is Ana and I live in Lisbon.", agent_response="Hi Ana."),
        DialoguePage(id="2", user_input="I love chess. I don't like coffee.", agent_response="Noted."),
    ]
    persona = Persona(user_traits={"interests": ["coffee"]})
    result = HeuristicController().promote_segment(Segment(id="s"), pages, persona)
    assert result.user_profile == {"name": "Ana", "location": "Lisbon"}
    assert result.user_traits["interests"] == ["chess"]
    assert result.user_traits["dislikes"] == ["coffee"]
    assert result.segment_summary.startswith("Conversation about")


def test_amu_path_end_to_end() -> None:
    m = MemoryOS(config=MemoryOSConfig())
    (stored,) = m.add_fact("I live in Boston.", user_id="u", timestamp=at(0))
    assert stored.action == "stored" and stored.gate_score == 1.0
    (dup,) = m.add_fact("I live in Boston.", user_id="u", timestamp=at(1))
    assert dup.action == "discarded" and stored.record.id in dup.reason
    (upd,) = m.add_fact("I live in Denver now.", user_id="u", timestamp=at(2))
    assert upd.action == "updated" and upd.replaced_ids == [stored.record.id]
    assert [r.label for r in upd.relations] == ["update"]
    assert [f.summary for f in m.list_facts(user_id="u")] == ["The user lives in Denver."]
    (filt,) = m.add_fact("Can you recommend a movie for tonight?", user_id="u")
    assert filt.action == "filtered" and "write-gate" in filt.reason
    (sep,) = m.add_fact("I work as a nurse.", user_id="u")
    assert sep.action == "stored"
    (agent,) = m.add_fact("Answer in short bullet points.", user_id="u", kind="agent")
    assert agent.action == "stored" and m.list_facts(user_id="u", kind="agent")[0].kind == "agent"
    log = m.write_log(user_id="u")
    assert [e.action for e in log] == ["stored", "discarded", "updated", "filtered", "stored", "stored"]
    ctx = m.retrieve("Where do I live?", user_id="u")
    assert ctx.user_facts and ctx.user_facts[0].record.summary == "The user lives in Denver."
    assert all(h.score >= m.settings.thresholds.retrieval_similarity for h in ctx.user_facts)


def test_user_kb_capacity_is_fifo() -> None:
    m = MemoryOS(config=MemoryOSConfig(user_kb_capacity=2))
    facts = ["I live in Boston.", "I work as a nurse.", "I'm allergic to peanuts."]
    events = [m.add_fact(f, user_id="u", timestamp=at(i)) for i, f in enumerate(facts)]
    assert [f.summary for f in m.list_facts(user_id="u")] == [
        "The user works as a nurse.",
        "The user is allergic to peanuts.",
    ]
    assert [e.action for e in events[2]] == ["stored", "evicted"]
    evicted = events[2][1]
    assert evicted.record.id == events[0][0].record.id and evicted.replaced_ids == [evicted.record.id]
    assert "capacity 2" in evicted.reason and events[2][0].record.id in evicted.reason
    assert [e.action for e in m.write_log(user_id="u")] == ["stored", "stored", "stored", "evicted"]


def test_third_person_fact_is_taken_as_given() -> None:
    record = HeuristicController().parse_records("The user lives in Oslo", "user").records[0]
    assert (record.summary, record.aspect, record.personal) == ("The user lives in Oslo.", "personal_profile", True)
    assert "Oslo" in record.entities


@pytest.mark.parametrize(
    ("sentence", "slot"),
    [
        ("Mateo here again, in case you forgot my name lol", ("name", "mateo")),
        ("And here's one of the adoption agencies I'm looking into.", None),  # seen in LoCoMo: not a name
        ("Oh, and here's a pic I got from my walk last week.", None),
        ("I'm happy you found something that makes you happy.", None),  # not the occupation "happy the assistant"
        ("I'm a high school teacher.", ("occupation", "high school teacher")),
    ],
)
def test_slot_rules_on_chat_openers(sentence: str, slot: tuple[str, str] | None) -> None:
    from langchain_memoryos.controllers.rules import analyze_sentence
    from langchain_memoryos.controllers.slots import slot_of

    summary = analyze_sentence(sentence).summary
    assert (slot_of(summary) if summary else None) == slot
