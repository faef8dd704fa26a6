"""The long-term memory fills in ordinary use, with self-contained facts worth keeping."""

from __future__ import annotations

import datetime as dt
import re

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.controllers.llm import LLMController
from tests.scripted_model import ScriptedToolModel, page_answer

T0 = dt.datetime(2024, 5, 1, 9, tzinfo=dt.UTC)

ORDINARY = [
    ("Hi! How are you today?", "Good, thanks! How can I help?"),
    ("Can you suggest a quick dinner?", "How about a stir-fry?"),
    ("I'm allergic to peanuts, so no satay sauce.", "Noted, no peanuts."),
    ("What about dessert?", "Fruit salad works."),
    ("Sounds good.", "Enjoy!"),
    ("I work as a nurse at the city hospital.", "That must be demanding."),
    ("Yeah, long shifts.", "Take care of yourself."),
    ("Any tips for sleeping after night shifts?", "Blackout curtains help."),
    ("Thanks!", "You're welcome."),
    ("I adopted a dog named Pico last year.", "Lovely!"),
    ("He loves the beach.", "Nice."),
    ("What's the weather like?", "I can't check that."),
    ("Ok.", "Anything else?"),
    ("No, that's all.", "Bye!"),
]


def _feed(memory: MemoryOS, turns: list[tuple[str, str]], **meta: str) -> None:
    for i, (user, agent) in enumerate(turns):
        memory.add_turn(
            user, agent, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i), metadata=dict(meta)
        )


def test_after_14_ordinary_turns_the_knowledge_base_holds_the_allergy_in_the_third_person_with_the_name() -> None:
    memory = MemoryOS()  # the default config: no promotion is due after 14 turns
    _feed(memory, ORDINARY, user_name="Sam")
    facts = [f.summary for f in memory.list_facts(user_id="u")]
    allergy = [f for f in facts if "peanut" in f]
    assert allergy and allergy[0].startswith("Sam is allergic to peanuts")
    for fact in facts:
        assert not re.search(r"\b(?:I|I'm|my|me|you|the user)\b", fact), fact  # third person, named
        assert not re.match(r"^[A-Z]\w+:\s", fact), fact  # no speaker prefix
        assert not fact.rstrip().endswith("?"), fact  # no question
    assert all(e.source == "page" for e in memory.write_log(user_id="u") if e.action == "stored")


def test_a_pronoun_only_sentence_is_not_stored_and_a_dangling_one_joins_its_sentence() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
    _feed(memory, [("It was so much fun!", "Glad to hear."), ("That's great.", "Yes."), ("ok", "ok")])
    assert memory.list_facts(user_id="u") == []
    _feed(memory, [("I went to a Coldplay concert in Lisbon. It was in a huge stadium.", "Wow."), ("ok", "ok")])
    assert [f.summary for f in memory.list_facts(user_id="u")] == [
        "The user went to a Coldplay concert in Lisbon; it was in a huge stadium."
    ]


def test_both_named_speakers_keep_their_own_facts_when_the_user_is_unknown() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
    memory.add_turn(
        "Caroline: Hey Mel! I'm a counselor at a youth center.",
        "Melanie: Oh nice! I paint landscapes in my free time.",
        user_id="u",
        thread_id="t",
        timestamp=T0,
    )
    memory.add_turn("Caroline: ok", "Melanie: ok", user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=1))
    facts = {f.subject: f.summary for f in memory.list_facts(user_id="u")}
    assert facts == {
        "Caroline": "Caroline works as a counselor.",
        "Melanie": "Melanie paints landscapes in Melanie's free time.",
    }


def test_capacity_evicts_the_least_confident_fact_not_the_oldest() -> None:
    memory = MemoryOS(config=MemoryOSConfig(user_kb_capacity=2))
    memory.add_fact("I live in Oslo.", user_id="u", timestamp=T0)
    memory.add_fact("I think I like jazz.", user_id="u", timestamp=T0 + dt.timedelta(days=1))
    hedged = [f for f in memory.list_facts(user_id="u") if "jazz" in f.summary]
    assert hedged and hedged[0].confidence < 1.0
    events = memory.add_fact("I work at Bosch.", user_id="u", timestamp=T0 + dt.timedelta(days=2))
    assert sorted(f.summary for f in memory.list_facts(user_id="u")) == [
        "The user lives in Oslo.",
        "The user works at Bosch.",
    ]
    evicted = [e for e in events if e.action == "evicted"]
    assert [e.record.summary for e in evicted] == [hedged[0].summary] and "least useful" in evicted[0].reason


def test_a_new_job_updates_the_employer_and_a_change_cue_alone_fuses_nothing() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
    _feed(
        memory,
        [
            ("I work at Bosch as an engineer.", "Nice."),
            ("I painted a lake at sunset last week.", "Lovely."),
            ("I just started a new job at Siemens.", "Congrats!"),
            ("I just started a new painting class on Mondays.", "Fun!"),
            ("ok", "ok"),
        ],
    )
    facts = [f.summary for f in memory.list_facts(user_id="u")]
    assert not any("Bosch" in f for f in facts) and any("Siemens" in f for f in facts)  # the employer changed
    assert any("lake" in f for f in facts) and any("painting class" in f for f in facts)  # two separate facts
    actions = {e.record.summary: e.action for e in memory.write_log(user_id="u") if e.action in ("stored", "updated")}
    assert actions[next(f for f in facts if "Siemens" in f)] == "updated"
    assert actions[next(f for f in facts if "painting class" in f)] == "stored"


def test_the_llm_controller_makes_one_call_per_page_added_and_no_more() -> None:
    def page(messages: list[object]) -> dict[str, object]:
        current = str(getattr(messages[-1], "content", "")).split("Current page", 1)[1]
        answer = page_answer()
        if "Porto" in current:
            answer["records"] = [
                {
                    "aspect": "personal_profile",
                    "intent": "inform",
                    "personal": True,
                    "entities": ["Porto"],
                    "summary": "Ana lives in Porto.",
                    "subject": "Ana",
                    "confidence": 1,
                },
            ]
        if "Lisbon" in current:
            answer["records"] = [
                {
                    "aspect": "personal_profile",
                    "intent": "inform",
                    "personal": True,
                    "entities": ["Lisbon"],
                    "summary": "Ana lives in Lisbon.",
                    "subject": "Ana",
                    "confidence": 1,
                },
                {
                    "aspect": "activity",
                    "intent": "inform",
                    "personal": True,
                    "entities": ["surfing"],
                    "summary": "Ana surfs at Carcavelos.",
                    "subject": "Ana",
                    "confidence": 1,
                },
            ]
        return answer

    model = ScriptedToolModel(script={"PageAnalysisOutput": [page]})  # type: ignore[list-item]
    memory = MemoryOS(controller=LLMController(model), config=MemoryOSConfig(stm_capacity=1, promotion_heat=100.0))
    turns = [
        ("Ana: I live in Porto.", "Ben: Nice."),
        ("Ana: ok", "Ben: ok"),
        ("Ana: I moved to Lisbon and I surf at Carcavelos.", "Ben: Cool."),
        ("Ana: ok", "Ben: ok"),
    ]
    _feed(memory, turns)
    evicted = memory.stats(user_id="u").mtm_pages
    assert evicted == 3 and model.count("PageAnalysisOutput") == len(turns)  # one per page added, none as it leaves
    assert len(model.calls) == len(turns)  # no relation-judge or fuse call: page facts are judged offline
    assert sorted(f.summary for f in memory.list_facts(user_id="u")) == [
        "Ana lives in Lisbon.",
        "Ana surfs at Carcavelos.",
    ]
    assert "Known names" in model.calls[0][1]


def test_the_read_rule_drops_a_fact_whose_source_page_is_shown() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, context_words=400))
    _feed(
        memory,
        [("I am allergic to peanuts.", "Noted."), ("ok", "ok")] + [(f"Chat {i}, nothing.", "ok") for i in range(3)],
        user_name="Sam",
    )
    assert any("peanuts" in f.summary for f in memory.list_facts(user_id="u"))
    ctx = memory.retrieve("Is Sam allergic to peanuts?", user_id="u", thread_id="q")
    assert any("peanuts" in hit.page.user_input for hit in ctx.pages)  # the page itself is shown …
    assert not any("peanuts" in hit.record.summary for hit in ctx.user_facts)  # … so its fact is not
    ctx = memory.retrieve("What does Sam do on weekends?", user_id="u", thread_id="q")
    assert ctx.user_facts == []  # the page is stored and the fact is not about the question (name-blind)
