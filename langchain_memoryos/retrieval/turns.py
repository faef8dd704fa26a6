"""Turn packing: the word budget is filled with *turns* (one side of a page), not whole pages.

A page is an exchange of two turns, but what a question needs is usually one of
them — and evidence spread over many sessions (LoCoMo's multi-hop questions)
needs more of them than whole pages leave room for. So the read path ranks pages
(``S(p)``, :mod:`langchain_memoryos.retrieval.recall`) and then fills the budget
side by side:

* each non-empty side of a ranked page is a unit scored ``S(p)``, plus
  ``speaker_weight`` when the question names exactly one of the speakers and this
  side is theirs (a question about Ana is answered by what Ana said: on the
  LoCoMo dev set 97 % of the evidence turns of a question naming one speaker are
  that speaker's);
* units are taken best first while they fit (a side costs its label and words,
  and its day's date line once); when both sides of a page are taken the page is
  shown whole, otherwise only the side taken (a display copy: the other side is
  blank and ``metadata["source_id"]`` keeps that side's id).

A side's speaker is the ``Name:`` its text starts with, else the page's
``user_name`` / ``agent_name`` metadata (:func:`side_speaker`); a page without
names has no speaker to match, and then the unit order is the page order. With
``page_units="pages"`` (or no word budget) whole pages are packed, as before.

Example:
    >>> p = DialoguePage(id="p", user_input="Ana: I paint.", agent_response="Bo: I run.",
    ...                  metadata={"source_id": ["D1:1", "D1:2"]})
    >>> q = one_side(p, "agent")
    >>> q.lines(), q.source_ids()
    (['Assistant: Bo: I run.'], ['D1:2'])
"""

from __future__ import annotations

import datetime as _dt
import functools
import heapq
import itertools
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Literal

from langchain_memoryos.retrieval.copies import copied
from langchain_memoryos.schema import DialoguePage, ScoredPage
from langchain_memoryos.schema.pages import split_speaker

__all__ = ["SIDES", "Side", "named_speaker", "one_side", "pack_turns", "side_speaker", "side_words"]

Side = Literal["user", "agent"]

#: The two sides of a page, in conversation order.
SIDES: tuple[Side, Side] = ("user", "agent")


@functools.lru_cache(maxsize=1 << 16)
def _prefix(text: str) -> str | None:
    return split_speaker(text)[0]  # cached: a read asks it of a few hundred sides


def _text(page: DialoguePage, side: Side) -> str:
    return page.user_input if side == "user" else page.agent_response


def side_speaker(page: DialoguePage, side: Side) -> str | None:
    """Who speaks one side of a page: the ``Name:`` its text starts with, else the side's name metadata.

    Example:
        >>> p = DialoguePage(id="p", user_input="Ana: hi", agent_response="yo", metadata={"agent_name": "Bo"})
        >>> side_speaker(p, "user"), side_speaker(p, "agent")
        ('Ana', 'Bo')
        >>> side_speaker(DialoguePage(id="q", user_input="hi", agent_response="yo"), "user") is None
        True
    """
    name = _prefix(_text(page, side))
    if name:
        return name
    meta = page.metadata.get("user_name" if side == "user" else "agent_name")
    return str(meta) if meta else None


def side_words(page: DialoguePage, side: Side) -> int:
    """Words one side adds to the past-conversation section (its label and text).

    Example:
        >>> side_words(DialoguePage(id="p", user_input="I paint daily.", agent_response="Nice!"), "user")
        4
    """
    text = _text(page, side)
    if not text:
        return 0
    return _count(page.user_label if side == "user" else page.agent_label) + _count(text)


@functools.lru_cache(maxsize=1 << 16)
def _count(text: str) -> int:
    return len(text.split())


def one_side(page: DialoguePage, side: Side) -> DialoguePage:
    """A display copy of ``page`` showing only ``side``: the other side blank, its source id dropped.

    ``metadata["source_id"]`` is trimmed only when it lists exactly one id per
    side (two ids, both sides non-empty: the first the user side's, the second the
    agent side's); otherwise it is kept whole. The stored page is never changed.

    Example:
        >>> p = DialoguePage(id="p", user_input="I paint.", agent_response="Nice!",
        ...                  metadata={"source_id": ["D1:1", "D1:2"]})
        >>> q = one_side(p, "user")
        >>> q.lines(), q.source_ids(), p.source_ids()
        (['User: I paint.'], ['D1:1'], ['D1:1', 'D1:2'])
    """
    metadata = dict(page.metadata)
    ids = page.source_ids()
    if len(ids) == 2 and page.user_input and page.agent_response:
        metadata["source_id"] = [ids[0] if side == "user" else ids[1]]
    if side == "user":
        return copied(page, agent_response="", metadata=metadata)
    return copied(page, user_input="", metadata=metadata)


def named_speaker(query: str, pages: Iterable[DialoguePage]) -> str | None:
    """The one speaker of ``pages`` whose name the query contains as a word (``None``: none, or several).

    Example:
        >>> pages = [DialoguePage(id="p", user_input="Ana: hi", agent_response="Bo: yo")]
        >>> named_speaker("What does Ana paint?", pages), named_speaker("Did Ana meet Bo?", pages)
        ('Ana', None)
    """
    names = {side_speaker(p, s) for p in pages for s in SIDES if _text(p, s)} - {None}
    named = [n for n in names if n is not None and _names(query, n)]
    return named[0] if len(named) == 1 else None


def _names(query: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", query) is not None


def pack_turns(
    ranked: Sequence[ScoredPage],
    *,
    query: str,
    room: int,
    max_units: int,
    speaker_weight: float,
    keep: Sequence[ScoredPage] = (),
    words_of: Callable[[DialoguePage, Side], int] = side_words,
) -> list[ScoredPage]:
    """The turns that fit in ``room`` words, best first (see the module rule); the result in rank order.

    The units are made lazily in their order (:func:`_units`) and the packing
    stops once no side ranked could fit in the room left: what sorting every
    unit and looking at each would take, at a fraction of the cost (a read looks
    at about 50 of 400 units).

    Args:
        ranked: candidate pages, best first (their ``score`` is ``S(p)``).
        query: the question (for the speaker it names).
        room: words left for the past-conversation section's pages and date lines.
        max_units: the most sides taken.
        speaker_weight: added to a side of the one speaker the query names.
        keep: hits already chosen (a refill keeps them, whole or one-sided, first).
        words_of: a side's words (the read path passes its cached count).

    Returns:
        Hits in rank order; a hit showing one side holds a :func:`one_side` copy and
        that side in :attr:`ScoredPage.side`.

    Example:
        >>> pages = [DialoguePage(id="a", user_input="Ana: I paint every day.", agent_response="Bo: Cool."),
        ...          DialoguePage(id="b", user_input="Bo: I like to run.", agent_response="Ana: I love oil painting.")]
        >>> hits = [ScoredPage(pages[0], 0.3), ScoredPage(pages[1], 0.2)]
        >>> got = pack_turns(hits, query="What does Ana paint?", room=20, max_units=10, speaker_weight=0.2)
        >>> [(h.page.id, h.side) for h in got]
        [('a', None), ('b', 'agent')]
    """
    named = named_speaker(query, (h.page for h in ranked[:50])) if speaker_weight else None
    taken: dict[str, set[Side]] = {}
    hits: dict[str, ScoredPage] = {}
    used = 0
    days: set[_dt.date] = set()
    originals = {hit.page.id: hit for hit in ranked} if keep else {}
    fixed: dict[str, ScoredPage] = {}
    for hit in keep:
        sides: tuple[Side, ...] = (hit.side,) if hit.side else tuple(s for s in SIDES if _text(hit.page, s))
        for side in sides:
            used += words_of(hit.page, side)
            taken.setdefault(hit.page.id, set()).add(side)
        days.add(hit.page.timestamp.date())
        hits[hit.page.id] = originals.get(hit.page.id, hit)
        if hit.page.id not in originals:
            fixed[hit.page.id] = hit  # not ranked any more (cannot happen on one read): kept as it was
    used += len(days)
    count = sum(len(s) for s in taken.values())
    kept = {page_id: frozenset(sides) for page_id, sides in taken.items()}
    floor = 3  # the fewest words of room worth looking on with
    fewest: int | None = None  # the shortest side ranked, counted once (on the first side that does not fit)
    for _, _, _, words, day, side, hit in _units(ranked, named, speaker_weight, kept, words_of):
        if count >= max_units or room - used < floor:
            break
        cost = words + (0 if day in days else 1)
        if used + cost > room:
            if fewest is None:  # no side costs fewer words than the shortest one ranked: below that, none fits
                fewest = _fewest_words(ranked, words_of)
                floor = max(floor, fewest)
            continue
        used += cost
        days.add(day)
        taken.setdefault(hit.page.id, set()).add(side)
        hits.setdefault(hit.page.id, hit)
        count += 1
    return _in_rank_order(ranked, hits, taken, fixed)


def _in_rank_order(
    ranked: Sequence[ScoredPage],
    hits: dict[str, ScoredPage],
    taken: dict[str, set[Side]],
    fixed: dict[str, ScoredPage],
) -> list[ScoredPage]:
    """The packed hits in rank order, each whole or as the one side taken of it (``fixed``: kept as they were)."""
    order = {hit.page.id: i for i, hit in enumerate(ranked)}
    out: list[ScoredPage] = []
    for page_id in sorted(hits, key=lambda key: order.get(key, -1)):
        hit = hits[page_id]
        if page_id in fixed:
            out.append(fixed[page_id])
            continue
        sides_taken = taken[page_id]
        present = {s for s in SIDES if _text(hit.page, s)}
        if sides_taken >= present:
            out.append(ScoredPage(hit.page, hit.score))
        else:
            (side,) = sides_taken
            out.append(ScoredPage(one_side(hit.page, side), hit.score, side=side))
    return out


def _fewest_words(ranked: Sequence[ScoredPage], words_of: Callable[[DialoguePage, Side], int]) -> int:
    """The fewest words of a non-empty side of the ranked pages (what no unit costs less than).

    Example:
        >>> page = DialoguePage(id="p", user_input="I paint daily.", agent_response="")
        >>> _fewest_words([ScoredPage(page, 1.0)], side_words)
        4
    """
    fewest = 1 << 62
    for hit in ranked:  # a plain loop: it runs over every ranked page
        page = hit.page
        words = words_of(page, "user") if page.user_input else fewest
        if words < fewest:
            fewest = words
        words = words_of(page, "agent") if page.agent_response else fewest
        if words < fewest:
            fewest = words
    return fewest


_Unit = tuple[float, int, int, int, _dt.date, Side, ScoredPage]


def _units(
    ranked: Sequence[ScoredPage],
    named: str | None,
    speaker_weight: float,
    taken: Mapping[str, Collection[Side]],
    words_of: Callable[[DialoguePage, Side], int],
) -> Iterator[_Unit]:
    """The sides not in ``taken`` as units ``(-(score + bonus), rank, side's index, words, day, side, hit)``, sorted.

    Made lazily, as the packing asks for them: a page's units wait in a heap
    until no later page can sort before them. When the scores do not rise down
    the ranking, a later page's unit key is at least ``-(score + top bonus)`` of
    the page before it (float addition is monotone), and the rank breaks a tie;
    otherwise every unit is made before the first is given. The order is that of
    sorting all the units by their first three fields, which are unique.

    Example:
        >>> pages = [DialoguePage(id="a", user_input="Bo: hi", agent_response="Ana: yo"),
        ...          DialoguePage(id="b", user_input="Ana: hey", agent_response="")]
        >>> hits = [ScoredPage(pages[0], 0.3), ScoredPage(pages[1], 0.2)]
        >>> [(u[0], u[1], u[5]) for u in _units(hits, "Ana", 0.2, {}, side_words)]
        [(-0.5, 0, 'agent'), (-0.4, 1, 'user'), (-0.3, 0, 'user')]
    """
    top = max(speaker_weight, 0.0) if named is not None else 0.0
    ordered = all(a.score >= b.score for a, b in itertools.pairwise(ranked))
    heap: list[_Unit] = []
    for rank, hit in enumerate(ranked):
        if ordered:
            bound = -(hit.score + top)  # no unit of this page or a later one has a smaller key
            while heap and heap[0][0] <= bound:  # (its rank is smaller, so it sorts first on a tie)
                yield heapq.heappop(heap)
        page = hit.page
        on = page.timestamp.date()
        for index, side in enumerate(SIDES):
            if not _text(page, side) or side in taken.get(page.id, ()):
                continue
            bonus = speaker_weight if named is not None and side_speaker(page, side) == named else 0.0
            heapq.heappush(heap, (-(hit.score + bonus), rank, index, words_of(page, side), on, side, hit))
    while heap:
        yield heapq.heappop(heap)
