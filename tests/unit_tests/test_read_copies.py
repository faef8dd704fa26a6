"""The read path's copies (retrieval/copies.py): what dataclasses.replace gives, made faster."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.retrieval.copies import copied
from langchain_memoryos.retrieval.recall import copy_page


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and vars(a) == vars(b) and all(vars(a)[k] is vars(b)[k] for k in vars(a))


def test_copied_is_replace_for_the_records_a_read_hands_out() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
    for said in ("I play the cello in Oslo.", "My sister Ana paints.", "Hello again."):
        memory.add_turn(said, "Nice!", user_id="u")
    memory.add_fact("I am allergic to peanuts.", user_id="u")
    ctx = memory.retrieve("What do I play, and where?", user_id="u", thread_id="q")
    page, persona, segment = ctx.pages[0].page, ctx.persona, ctx.segments[0].segment
    fact = memory.retrieve("Am I allergic to anything?", user_id="u").user_facts[0].record
    for obj, changes in (
        (page, {"agent_response": "", "metadata": {}}),
        (fact, {"entities": ["x"]}),
        (segment, {"keywords": []}),
        (persona, {"user_profile": {}}),
        (ctx, {"stm": [], "pages": []}),
    ):
        twin = copied(obj, **changes)
        assert twin is not obj and _same(twin, dataclasses.replace(obj, **changes))
    # copy_page: equal, nothing mutable shared
    page.candidates = [fact]
    twin = copy_page(page)
    assert twin == page and twin.keywords is not page.keywords and twin.metadata is not page.metadata
    assert twin.candidates[0] == fact and twin.candidates[0].entities is not fact.entities


@dataclasses.dataclass
class _Checked:
    a: int
    b: list[int] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.b = sorted(self.b)


@dataclasses.dataclass
class _Derived:
    a: int
    b: int = dataclasses.field(init=False, default=0)


def test_anything_but_a_plain_dataclass_goes_to_replace() -> None:
    assert copied(_Checked(1, [3, 2]), b=[5, 4]).b == [4, 5]  # __post_init__ ran
    assert copied(_Derived(1), a=2) == _Derived(2)
    extra = _Derived(1)
    extra.note = "x"  # type: ignore[attr-defined]
    assert not hasattr(copied(extra, a=2), "note")  # replace drops what is not a field
    with pytest.raises(TypeError):
        copied(_Derived(1), c=3)
