"""The read path's context budget, speaker names and the dedupe of facts already shown as pages."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from langchain_core.embeddings import Embeddings

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.index.lexical import page_tokens, tokenize
from langchain_memoryos.retrieval.copies import copied
from langchain_memoryos.retrieval.facts import Shown
from langchain_memoryos.retrieval.recall import COMPACT_STM_WORDS
from langchain_memoryos.schema import DialoguePage, Persona, page_words, past_conversation, stm_line

T0 = dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)


def _feed(memory: MemoryOS, turns: list[tuple[str, str]], *, names: bool = False, hours: int = 1) -> None:
    meta = {"user_name": "Ana", "agent_name": "Ben"} if names else {}
    for i, (user, agent) in enumerate(turns):
        memory.add_turn(
            user, agent, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(hours=hours * i), metadata=dict(meta)
        )


def test_past_conversation_words_are_page_words_plus_one_per_day() -> None:
    pages = [
        DialoguePage(
            id=f"p{i}",
            user_input=f"Turn number {i} here",
            agent_response="Sure thing." if i % 2 else "",
            timestamp=T0 + dt.timedelta(hours=10 * i),
        )
        for i in range(6)
    ]
    days = len({p.timestamp.date() for p in pages})
    assert days == 3
    assert len(past_conversation(pages).split()) == sum(page_words(p) for p in pages) + days


def test_named_speakers_are_shown_embedded_and_indexed() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
    _feed(memory, [("I joined a pottery class.", "Lovely!"), ("ok", "ok"), ("ok", "ok")], names=True)
    page = next(p for p in memory.list_pages(user_id="u") if "pottery" in p.user_input)
    assert page.text == "Ana: I joined a pottery class.\nBen: Lovely!"
    assert page.embedding_text == page.text
    assert {"ana", "ben"} <= set(page_tokens(page))
    ctx = memory.retrieve("What class did Ana join?", user_id="u", thread_id="other")
    assert "Ana: I joined a pottery class." in ctx.to_prompt()
    # without names the generic labels are shown and not indexed
    plain = DialoguePage(id="p", user_input="I joined a pottery class.", agent_response="Lovely!")
    assert plain.lines() == ["User: I joined a pottery class.", "Assistant: Lovely!"]
    assert "user" not in page_tokens(plain) and tokenize("Ana") == ["ana"]


TURNS = [
    ("I live in Lisbon and I work as a nurse at the city hospital.", "Nice!"),
    ("My sister Lena studies marine biology in Porto.", "Cool."),
    ("I started learning the guitar this spring.", "Fun!"),
    ("I adopted a dog named Pico last year.", "Cute!"),
    ("I am allergic to peanuts.", "Noted."),
    ("I go surfing every weekend at Carcavelos.", "Great."),
] * 2 + [(f"Filler chat number {i}, nothing much.", "ok") for i in range(12)]


def test_facts_already_shown_as_pages_are_dropped_and_their_words_refilled() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=2, promotion_heat=2.0, context_words=400))
    _feed(memory, TURNS)
    facts = memory.list_facts(user_id="u")
    assert facts and all(f.source_page_ids for f in facts)  # promoted facts carry their pages
    ctx = memory.retrieve("Where does the user live and work?", user_id="u", thread_id="q")
    shown = {h.page.id for h in ctx.pages}
    assert shown
    said = Shown.of(copied(ctx, user_facts=[], stm=[]).to_prompt())
    for hit in ctx.user_facts:  # no fact only repeats what the pages shown say
        assert any(said.new_in(hit.record.summary)), hit.record.summary
    covered = [f for f in facts if set(f.source_page_ids) <= shown and not any(said.new_in(f.summary))]
    assert covered and not {f.id for f in covered} & {h.record.id for h in ctx.user_facts}
    assert len(ctx.to_prompt().split()) <= 400
    # the paper preset keeps every fact (no dedupe, no budget)
    paper = MemoryOS(store=memory.store, config=MemoryOSConfig.paper(stm_capacity=2, promotion_heat=2.0))
    pctx = paper.retrieve("Where does the user live and work?", user_id="u", thread_id="q")
    assert len(pctx.user_facts) >= len(ctx.user_facts)


def test_a_fact_without_provenance_is_never_dropped() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=2, context_words=400))
    _feed(memory, TURNS[:6])
    memory.add_fact("The user was born in Faro.", user_id="u")
    ctx = memory.retrieve("Where was the user born?", user_id="u", thread_id="q")
    assert any("Faro" in h.record.summary for h in ctx.user_facts)


def test_the_budget_counts_everything_and_fills_in_rank_order() -> None:
    for budget in (100, 150, 300):  # the fence, STM and persona alone take ~60 words
        memory = MemoryOS(config=MemoryOSConfig(stm_capacity=2, context_words=budget))
        _feed(memory, TURNS)
        ctx = memory.retrieve("surfing at Carcavelos", user_id="u", thread_id="t")  # same thread: STM counts too
        words = len(ctx.to_prompt().split())
        assert words <= budget
        if ctx.pages:
            assert "Carcavelos" in ctx.pages[0].page.user_input


@pytest.mark.parametrize("view", ["full", "compact"])
def test_an_over_long_stm_page_is_shown_cut_and_stays_stored_whole(view: str) -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_view=view, max_message_chars=3_000_000))  # context_words=1000
    memory.add_turn("I live in Lisbon.", "Nice!", user_id="u", timestamp=T0)
    big = " ".join(f"word{i}" for i in range(200_000))
    memory.add_turn(big, "That is a long message.", user_id="u", timestamp=T0 + dt.timedelta(hours=1))
    memory.add_fact("I am allergic to peanuts.", user_id="u")
    ctx = memory.retrieve("What am I allergic to?", user_id="u")
    prompt = ctx.to_prompt()
    assert len(prompt.split()) <= 1000
    marker = re.search(r"word(\d+) \u2026 \[cut: (\d+) more words\]", prompt)
    assert marker is not None
    assert int(marker.group(1)) + 1 + int(marker.group(2)) == 200_000  # the first words shown, the rest counted
    assert "Assistant: That is a long message." in prompt  # the short side is shown whole
    assert "peanuts" in prompt  # the facts keep their place
    stored = memory.get_stm(user_id="u")
    assert [p.user_input for p in stored] == ["I live in Lisbon.", big]  # stored whole
    assert [p.id for p in ctx.stm] == [stored[1].id]
    if view == "full":
        assert "Lisbon" not in prompt  # the older page gave way
    else:  # compact: the newest page within a few dozen words; the older one ranked with the rest
        assert len(stm_line(ctx.stm[0]).split()) <= COMPACT_STM_WORDS and "Lisbon" in prompt


def test_when_stm_alone_is_over_budget_the_oldest_pages_give_way() -> None:
    memory = MemoryOS(config=MemoryOSConfig(context_words=300, stm_view="full"))
    for i in range(7):
        words = " ".join(f"p{i}w{j}" for j in range(100))
        memory.add_turn(f"Page {i}: {words}", "ok", user_id="u", timestamp=T0 + dt.timedelta(minutes=i))
    stored = memory.get_stm(user_id="u")
    assert len(stored) == 7 and all(len(p.user_input.split()) == 102 for p in stored)
    for query in ("what did I say?", ""):  # with a query, and the read that returns STM alone
        ctx = memory.retrieve(query, user_id="u")
        assert len(ctx.to_prompt().split()) <= 300
        shown = [p.id for p in ctx.stm]
        assert 1 <= len(shown) < 7 and shown == [p.id for p in stored[-len(shown) :]]  # the newest kept
        assert ctx.stm[-1].user_input == stored[-1].user_input  # the newest page whole
        assert all("[cut:" not in p.user_input for p in ctx.stm[1:])  # only the oldest shown may be cut


class _CountingEmbeddings(Embeddings):
    """The offline encoder, counting the texts each read embeds."""

    def __init__(self) -> None:
        self.inner = resolve_embeddings()
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls.append([text])
        return self.inner.embed_query(text)


def test_a_read_makes_one_encoder_call_with_the_question_as_asked_and_as_facts_are_written() -> None:
    emb = _CountingEmbeddings()
    memory = MemoryOS(embeddings=emb, config=MemoryOSConfig(stm_capacity=1))
    memory.add_fact("The user lives in Denver now.", user_id="u")
    _feed(memory, [("I moved to Denver last spring.", "Nice city!"), ("My dog is called Rex.", "Cute.")])
    emb.calls.clear()
    ctx = memory.retrieve("Where do I live?", user_id="u", thread_id="t", touch=False)
    # one call: the question as asked (for pages: "I live…") and in the third person (for facts, 0.27 → 0.63)
    assert len(emb.calls) == 1 and emb.calls[0][0] == "Where do I live?"
    assert len(emb.calls[0]) == 2 and "the user" in emb.calls[0][1]
    assert any("lives in Denver" in f.record.summary for f in ctx.user_facts)
    assert any("Denver" in s.page.user_input for s in ctx.pages)
    emb.calls.clear()
    memory.retrieve("What is Rex?", user_id="u", thread_id="t", touch=False)
    assert emb.calls == [["What is Rex?"]]  # not in the first person: one text


@pytest.mark.parametrize("ranking", ["hybrid", "segments"])
def test_the_context_is_the_callers_copy(ranking: str) -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, page_ranking=ranking))
    _feed(memory, [("I play chess every Sunday.", "Fun!"), ("Chess club tonight.", "Enjoy."), ("Bye.", "Bye.")])
    state = memory.repository.cached("u")
    assert state is not None
    state.persona = Persona(user_profile={"name": "Ana"}, user_traits={"interests": ["chess"]})
    ctx = memory.retrieve("chess", user_id="u", thread_id="t")
    assert ctx.segments and ctx.persona.user_traits["interests"] == ["chess"]
    # changing what the read returned leaves the memory as it was
    ctx.persona.user_traits["interests"].append("poker")
    ctx.persona.user_profile["name"] = "Eve"
    ctx.segments[0].segment.page_ids.clear()
    ctx.segments[0].segment.keywords.append("poker")
    again = memory.retrieve("chess", user_id="u", thread_id="t", touch=False)
    assert again.persona.user_traits["interests"] == ["chess"] and again.persona.user_profile["name"] == "Ana"
    stored = again.segments[0].segment
    assert stored.page_ids and "poker" not in stored.keywords
