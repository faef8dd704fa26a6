"""Which user facts the read path shows: those that add evidence the pages do not, within the budget.

A fact read off a page restates that page. While the page is still stored (STM or
MTM) the page itself can be shown, so such a fact earns its words only when it is
clearly about the question, and facts may not crowd the pages out. With a word
budget (``context_words``) the **strict-blind** rule (issue 20; research/issue20-facts/REPORT.md §4.3)
applies to them:

* its **name-blind** cosine to the query (as asked, or in the third person) is
  ≥ :data:`BLIND_SIMILARITY` — people's names, "the user" and "the assistant" are
  replaced by "someone" on both sides first, since MiniLM scores any fact about a
  person high for any question naming them;
* the facts shown take at most :data:`FACTS_SHARE` of the budget (in rank order);
* its source page is not shown (the read path drops it after the pages are
  chosen, and refills the words: ``assemble_context``).

A fact with no stored source (``add_fact``, a tool, or pages heat-evicted since)
is the only copy of what it says: it keeps the plain rule (``tau_r``), within the
same share. Without a budget (the paper preset) facts are shown as ranked.

Example:
    >>> blind_text("Caroline told the user about Melanie's kids.", {"Caroline", "Melanie"})
    "someone told someone about someone's kids."
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from langchain_memoryos.pipeline.effects import Embed, Step
from langchain_memoryos.pipeline.settings import EngineSettings, embedding_text
from langchain_memoryos.schema import ScoredRecord
from langchain_memoryos.store.repository import UserState

__all__ = ["BLIND_SIMILARITY", "FACTS_SHARE", "blind_text", "evidence_facts", "people"]

#: The least name-blind cosine between the query and a fact whose page is still stored (set a priori, not fitted).
BLIND_SIMILARITY = 0.5
#: The most of the word budget the user facts take (set a priori, not fitted).
FACTS_SHARE = 0.10

_GENERIC = ("the user", "The user", "the assistant", "The assistant")
_CACHE: dict[str, np.ndarray] = {}
_CACHE_SIZE = 8192


def blind_text(text: str, names: Iterable[str]) -> str:
    """The text with every name in ``names``, "the user" and "the assistant" as "someone".

    Example:
        >>> blind_text("Where does Ana's sister live?", ["Ana"])
        "Where does someone's sister live?"
    """
    for name in [*sorted(n for n in names if n), *_GENERIC]:
        text = re.sub(rf"\b{re.escape(name)}'s\b", "someone's", text)
        text = re.sub(rf"\b{re.escape(name)}\b", "someone", text)
    return text


def people(state: UserState) -> set[str]:
    """The names the user's facts are about, and the persona's name.

    Example:
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> s.put_fact(MemoryRecord(id="f1", summary="Ana paints.", subject="Ana"), np.ones(2, dtype=np.float32))
        >>> sorted(people(s))
        ['Ana']
    """
    names = {f.subject for f in state.facts["user"].values() if f.subject}
    name = state.persona.user_profile.get("name")
    if name:
        names.add(str(name))
    return names


def _stored(state: UserState, hit: ScoredRecord) -> bool:
    """Whether one of the fact's source pages is still stored (MTM or a thread's STM)."""
    sources = hit.record.source_page_ids
    if not sources:
        return False
    if any(p in state.pages for p in sources):
        return True
    stm = {p.id for pages in state.stm.values() for p in pages}
    return any(p in stm for p in sources)


def _words(hit: ScoredRecord) -> int:
    return len(hit.record.summary.split()) + 1  # the list marker


def evidence_facts(
    state: UserState, settings: EngineSettings, queries: Sequence[str], hits: Sequence[ScoredRecord]
) -> Step[list[ScoredRecord]]:
    """Step: the user facts to show, in rank order, from those ``tau_r`` admitted (see the module rule).

    Args:
        state: the user's state.
        settings: the memory's settings (``context_words``).
        queries: the query as asked and as facts are written (third person).
        hits: the facts above ``tau_r``, best first.

    Returns:
        The facts shown: without a budget all of ``hits``; with one, the facts whose page is
        stored only at name-blind cosine ≥ :data:`BLIND_SIMILARITY`, all within
        :data:`FACTS_SHARE` of the budget.

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> from langchain_memoryos.pipeline.effects import run_sync
        >>> from langchain_memoryos.schema import DialoguePage, MemoryRecord
        >>> m = MemoryOS(config=MemoryOSConfig(context_words=1000))
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> s.put_page(DialoguePage(id="p1", user_input="I'm vegan.", agent_response=""), np.ones(2, dtype=np.float32))
        >>> hit = lambda text: ScoredRecord(MemoryRecord(summary=text, subject="Ana", source_page_ids=["p1"]), 0.6)
        >>> step = evidence_facts(s, m.settings, ["Is Ana vegan?"], [hit("Ana is vegan."), hit("Ana met Bo.")])
        >>> [h.record.summary for h in run_sync(step, m._services)]
        ['Ana is vegan.']
    """
    budget = settings.config.context_words
    if budget is None or not hits:
        return list(hits)
    names = people(state) | {h.record.subject for h in hits if h.record.subject}
    strict = [h for h in hits if _stored(state, h)]
    shown: list[ScoredRecord] = []
    if strict:
        limit = settings.config.max_embedding_chars
        query_texts = list(dict.fromkeys(embedding_text(blind_text(q, names), limit) for q in queries))
        fact_texts = [embedding_text(blind_text(h.record.summary, names), limit) for h in strict]
        missing = tuple(dict.fromkeys(t for t in query_texts + fact_texts if t not in _CACHE))
        if missing:
            if len(_CACHE) + len(missing) > _CACHE_SIZE:
                _CACHE.clear()
            _CACHE.update(zip(missing, (yield Embed(missing)), strict=True))
        qv = np.stack([_CACHE[t] for t in query_texts])
        passed = {
            id(h) for h, t in zip(strict, fact_texts, strict=True) if float((qv @ _CACHE[t]).max()) >= BLIND_SIMILARITY
        }
    else:
        passed = set()
    share = int(budget * FACTS_SHARE)
    used = 0
    for hit in hits:
        if id(hit) in {id(h) for h in strict} and id(hit) not in passed:
            continue
        cost = _words(hit)
        if used + cost > share:
            continue
        shown.append(hit)
        used += cost
    return shown
