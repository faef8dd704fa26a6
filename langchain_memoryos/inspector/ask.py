"""Ask: what ``retrieve(question, touch=False)`` would inject, itemised with tier, score and the score's parts.

No starlette here. The parts are computed beside the retrieval, from the
stored vectors and the question's words; nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from langchain_memoryos.embeddings import encode_texts
from langchain_memoryos.index.lexical import tokenize
from langchain_memoryos.inspector.data import _read
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.memory import MemoryOS
from langchain_memoryos.schema import MemoryContext
from langchain_memoryos.schema.context import fact_ref, page_ref
from langchain_memoryos.scoring import jaccard, segment_heat

__all__ = ["AskItem", "AskView", "ask"]


@dataclass
class AskItem:
    """One item of what retrieval would inject: its tier, id, text, score and the parts of the score.

    Attributes:
        tier: ``"STM"``, ``"MTM page"``, ``"MTM segment"``, ``"LPM fact"`` or ``"LPM agent trait"``.
        score: the score the retrieval ranked it by (``None`` for STM, which comes first unranked).
        parts: named parts: the cosine of the question and the item, the words they share
            (the lexical side of the page ranking), a segment's keyword Jaccard and heat.

    Example:
        >>> AskItem("MTM page", "p:3", "I live in Oslo.", 0.03, {"cosine": 0.61}).parts["cosine"]
        0.61
    """

    tier: str
    ref: str
    text: str
    score: float | None
    parts: dict[str, Any] = field(default_factory=dict)


@dataclass
class AskView:
    """What ``retrieve(question, touch=False)`` would inject, itemised.

    Attributes:
        context: the context itself.
        prompt: ``context.to_prompt()``, the text the model gets.
        words: the prompt's word count (:attr:`MemoryContext.word_count`).
        items: every item in the context, in the prompt's order of sections.
    """

    question: str
    thread_id: str
    agent_id: str | None
    context: MemoryContext
    prompt: str
    words: int
    tokens: int
    items: list[AskItem]


def _cosine(a: np.ndarray[Any, Any] | None, b: np.ndarray[Any, Any]) -> float | None:
    if a is None:
        return None
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        return None
    return round(float(np.dot(a, b) / (na * nb)), 4)


def _vector(index: Any, key: str) -> np.ndarray[Any, Any] | None:
    try:
        return np.asarray(index.get(key), dtype=np.float32) if key in index else None
    except KeyError:
        return None


def ask(memory: MemoryOS, user_id: str, question: str, *, thread_id: str = "default") -> AskView:
    """What ``retrieve(question, user_id=..., thread_id=..., touch=False)`` would inject, with each item's parts.

    Read-only: the retrieval counts no visit (no heat changes); the parts are
    computed beside it from the stored vectors and the question's words.

    Example:
        >>> memory = MemoryOS(); _ = memory.add_fact("I'm allergic to peanuts.", user_id="u")
        >>> view = ask(memory, "u", "What am I allergic to?")
        >>> [(item.tier, item.text) for item in view.items], "peanuts" in view.prompt
        ([('LPM fact', 'The user is allergic to peanuts.')], True)
    """
    ctx = memory.retrieve(question, user_id=user_id, thread_id=thread_id, touch=False)
    query_vector = encode_texts(memory.embeddings, [question])[0]
    query_words = set(tokenize(question))
    repository = memory.repository

    def shared(text: str) -> list[str]:
        return sorted(query_words & set(tokenize(text)))

    def step() -> Step[list[AskItem]]:
        state = yield from repository.load(user_id)
        items: list[AskItem] = []
        for page in ctx.stm:
            stm_parts: dict[str, Any] = {
                "cosine": _cosine(_vector(state.stm_index, page.id), query_vector),
                "shared words": shared(page.text),
            }
            items.append(AskItem("STM", page_ref(page), page.text, None, stm_parts))
        for hit in ctx.segments:
            seg = hit.segment
            seg_parts: dict[str, Any] = {
                "cosine": _cosine(_vector(state.segment_index, seg.id), query_vector),
                "keyword Jaccard": round(jaccard(set(seg.keywords), query_words), 4),
                "heat": round(segment_heat(seg, state.clock, memory.config), 3),
            }
            items.append(AskItem("MTM segment", seg.id, seg.summary or ", ".join(seg.keywords), hit.score, seg_parts))
        for scored in ctx.pages:
            page = scored.page
            parts: dict[str, Any] = {
                "cosine": _cosine(_vector(state.page_index, page.id), query_vector),
                "shared words": shared(page.text),
                "segment": page.segment_id or "",
            }
            if scored.side:
                parts["side shown"] = scored.side
            items.append(AskItem("MTM page", page_ref(page), page.text, scored.score, parts))
        for kind, tier, hits in (("user", "LPM fact", ctx.user_facts), ("agent", "LPM agent trait", ctx.agent_facts)):
            for rec in hits:
                fact_parts: dict[str, Any] = {
                    "cosine": _cosine(_vector(state.fact_index[kind], rec.record.id), query_vector),
                    "shared words": shared(rec.record.summary),
                }
                items.append(AskItem(tier, fact_ref(rec.record.id), rec.record.summary, rec.score, fact_parts))
        return items

    items = _read(memory, user_id, step())
    return AskView(
        question=question,
        thread_id=thread_id,
        agent_id=memory.agent_id,
        context=ctx,
        prompt=ctx.to_prompt(),
        words=ctx.word_count,
        tokens=ctx.token_estimate,
        items=items,
    )
