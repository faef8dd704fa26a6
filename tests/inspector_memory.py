"""The memory the inspector's tests browse: Ana (two threads, segments, a corrected fact, a duplicate) and Bob."""

from __future__ import annotations

from langchain_memoryos import MemoryOS, MemoryOSConfig
from tests.conftest import at

#: STM holds two pages, so Ana's first thread moves pages to MTM (segments with heat)
CONFIG = MemoryOSConfig(stm_capacity=2)


def build(memory: MemoryOS) -> dict[str, str]:
    """Ana: two threads, pages moved to MTM (segments), a fact corrected (history: stored, edited), a duplicate."""
    turns = [
        ("I play the cello in an orchestra.", "Lovely instrument!"),
        ("Our orchestra rehearses every Tuesday.", "A steady rhythm."),
        ("I adopted a cat called Miso.", "Cute name!"),
        ("Miso loves sleeping on the piano.", "Cats and music."),
    ]
    for i, (said, answer) in enumerate(turns):
        memory.add_turn(said, answer, user_id="ana", thread_id="t1", timestamp=at(0, i))
    memory.add_turn("I am planning a trip to Kyoto.", "Exciting!", user_id="ana", thread_id="t2", timestamp=at(0, 5))
    fid = memory.add_fact("I live in Oslo.", user_id="ana")[0].record.id
    memory.update_fact(fid, "Ana lives in Bergen.", user_id="ana")
    memory.add_fact("I'm allergic to peanuts.", user_id="ana")
    memory.add_fact("I'm allergic to peanuts.", user_id="ana")  # a duplicate: discarded
    memory.add_turn("hi", "hello", user_id="bob", timestamp=at(0))
    return {"fact": fid}
