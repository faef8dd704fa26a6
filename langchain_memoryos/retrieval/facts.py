"""Which user facts the read path shows: those that add evidence the pages do not, within the budget.

A fact read off a page restates that page. While the page is still stored (STM or
MTM) the page itself can be shown, so such a fact earns its words only when it is
clearly about the question, and facts may not crowd the pages out. With a word
budget (``context_words``) the **strict-blind** rule (docs/research.md, "Long-term facts")
applies to them:

* it shares a **content word** with the query (as asked, or in the third person)
  once people's names, "the user" and "the assistant" are set aside on both
  sides — a fact about a person matches any question naming them otherwise. (The
  study's rule was a name-blind MiniLM cosine ≥ 0.5; it needs the name-blind
  query embedded on every read, an encoder pass as long as the whole ranking, so
  the read path uses the word test, which needs none);
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

import functools
import re
from collections.abc import Iterable, Sequence

from langchain_memoryos.pipeline.settings import EngineSettings
from langchain_memoryos.retrieval.lexical import tokenize
from langchain_memoryos.schema import ScoredRecord
from langchain_memoryos.store.repository import UserState

__all__ = ["FACTS_SHARE", "blind_text", "evidence_facts", "people"]

#: The most of the word budget the user facts take (set a priori, not fitted).
FACTS_SHARE = 0.10

_GENERIC = ("the user", "The user", "the assistant", "The assistant")


def blind_text(text: str, names: Iterable[str]) -> str:
    """The text with every name in ``names``, "the user" and "the assistant" as "someone".

    Example:
        >>> blind_text("Where does Ana's sister live?", ["Ana"])
        "Where does someone's sister live?"
    """
    for name in [*sorted(n for n in names if n), *_GENERIC]:
        possessive, plain = _name_patterns(name)
        text = possessive.sub("someone's", text)
        text = plain.sub("someone", text)
    return text


@functools.lru_cache(maxsize=4096)
def _name_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The patterns of a name's possessive and of the name (compiled once: a read blinds a few texts per name)."""
    return re.compile(rf"\b{re.escape(name)}'s\b"), re.compile(rf"\b{re.escape(name)}\b")


def people(state: UserState) -> set[str]:
    """The names the user's facts are about, and the persona's name.

    Example:
        >>> import numpy as np
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


def _stored(state: UserState, hit: ScoredRecord, stm_ids: set[str]) -> bool:
    """Whether one of the fact's source pages is still stored (MTM or, by ``stm_ids``, a thread's STM)."""
    return any(p in state.pages or p in stm_ids for p in hit.record.source_page_ids)


def _words(hit: ScoredRecord) -> int:
    return len(hit.record.summary.split()) + 1  # the list marker


def evidence_facts(
    state: UserState, settings: EngineSettings, queries: Sequence[str], hits: Sequence[ScoredRecord]
) -> list[ScoredRecord]:
    """The user facts to show, in rank order, from those ``tau_r`` admitted (see the module rule).

    Args:
        state: the user's state.
        settings: the memory's settings (``context_words``).
        queries: the query as asked and as facts are written (third person).
        hits: the facts above ``tau_r``, best first.

    Returns:
        The facts shown: without a budget all of ``hits``; with one, the facts whose page is
        stored only when they share a content word with the query, all within
        :data:`FACTS_SHARE` of the budget.

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> import numpy as np
        >>> from langchain_memoryos.schema import DialoguePage, MemoryRecord
        >>> m = MemoryOS(config=MemoryOSConfig(context_words=1000))
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> s.put_page(DialoguePage(id="p1", user_input="I'm vegan.", agent_response=""), np.ones(2, dtype=np.float32))
        >>> hit = lambda text: ScoredRecord(MemoryRecord(summary=text, subject="Ana", source_page_ids=["p1"]), 0.6)
        >>> facts = [hit("Ana is vegan."), hit("Ana met Bo.")]
        >>> [h.record.summary for h in evidence_facts(s, m.settings, ["Is Ana vegan?"], facts)]
        ['Ana is vegan.']
    """
    budget = settings.config.context_words
    if budget is None or not hits:
        return list(hits)
    names = frozenset(people(state) | {h.record.subject for h in hits if h.record.subject})
    asked = set().union(*(_content(q, names) for q in queries))
    stm_ids = {p.id for pages in state.stm.values() for p in pages}
    share = int(budget * FACTS_SHARE)
    used = 0
    shown: list[ScoredRecord] = []
    for hit in hits:
        if _stored(state, hit, stm_ids) and not (_content(hit.record.summary, names) & asked):
            continue
        cost = _words(hit)
        if used + cost > share:
            continue
        shown.append(hit)
        used += cost
    return shown


@functools.lru_cache(maxsize=8192)
def _content(text: str, names: frozenset[str]) -> frozenset[str]:
    """The stemmed content words of ``text``, people's names and generic labels set aside.

    Remembered: the same facts and names come back read after read (the stemmer loads on first use).
    """
    return frozenset(tokenize(blind_text(text, names))) - frozenset(tokenize("someone"))
