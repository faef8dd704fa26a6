"""Which user facts a read shows (retrieval/facts.py): the strict-blind word test, read after read."""

from __future__ import annotations

import numpy as np

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.retrieval.facts import blind_text, evidence_facts
from langchain_memoryos.schema import DialoguePage, MemoryRecord, ScoredRecord
from langchain_memoryos.store.repository import UserState


def test_the_word_test_blinds_the_names_of_each_read_and_repeats_itself() -> None:
    settings = MemoryOS(config=MemoryOSConfig(context_words=1000)).settings
    state = UserState(user_id="u", label="u", dimension=2)
    state.put_page(DialoguePage(id="p1", user_input="Ana paints.", agent_response=""), np.ones(2, dtype=np.float32))

    def hit(text: str, subject: str) -> ScoredRecord:
        return ScoredRecord(MemoryRecord(summary=text, subject=subject, source_page_ids=["p1"]), 0.6)

    facts = [hit("Ana paints birds.", "Ana"), hit("Ana met Bo.", "Ana")]
    for _ in range(2):  # the same answer from the remembered words
        shown = evidence_facts(state, settings, ["What does Ana paint?"], facts)
        assert [h.record.summary for h in shown] == ["Ana paints birds."]
    # "Ana" is a name only while a fact is about her: then a question sharing just the name matches nothing
    assert evidence_facts(state, settings, ["Is Ana here?"], facts) == []
    about_bo = [hit("Ana met Bo.", "Bo")]
    assert [h.record.summary for h in evidence_facts(state, settings, ["Is Ana here?"], about_bo)] == ["Ana met Bo."]
    assert blind_text("Ana's cat met Ana.", ["Ana"]) == "someone's cat met someone."
