"""A resent conversation without message ids: aligned with the thread's stored turns by content.

mem0's users send the whole history with every call, and role dicts or
LangChain messages built by hand carry no ids, so ``MemoryOS.add_messages``
cannot tell a turn it stored from a new one by id. It aligns them by content
instead: the thread's stored turns (oldest first, the pages of its STM and of
MTM) are compared with the turns of the call, and the longest run of the
call's first turns that equals the thread's last stored turns is taken as
already stored — a full resend, one the caller trimmed at the front, or a
call that repeats only the last exchange. Only the turns after that run are
written, each with a turn id chained from the thread's last stored page and
its own content, so two processes resending the same history at once store
each new turn once (the page key derives from the turn id).

A call whose first turn has no human side (the caller trimmed the front in
the middle of an exchange) matches a stored turn by its answer alone.

A turn of the call that is a forgotten turn of the thread (its salted text
digests are a tombstone of the thread, or those of a page stored with
forgotten words cut: :mod:`~langchain_memoryos.amu.forgetting`) is never
written again, wherever it sits in the call: a resend whose turns
no longer line up with the stored ones (a reply the caller changed) does not
bring back what was forgotten.

What this cannot tell: an exchange repeated word for word (``"Thanks!"`` →
``"You're welcome."`` twice in a row) sent alone, without ids, after the
same exchange was stored is taken as a resend; give message ids (LangGraph's
``add_messages`` reducer does) or use ``add_turn`` to store a repeat.

Example:
    >>> stored = [("hi", "hello"), ("I'm vegan.", "Noted.")]
    >>> overlap(stored, [("hi", "hello"), ("I'm vegan.", "Noted."), ("I live in Oslo.", "Nice!")])
    2
    >>> overlap(stored, [("I'm vegan.", "Noted."), ("I live in Oslo.", "Nice!")])  # trimmed at the front
    1
    >>> overlap(stored, [("I live in Oslo.", "Nice!")])  # only the new exchange
    0
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_memoryos.amu.forgetting import thread_tombstones, turn_digest
from langchain_memoryos.index.chain import chain_order
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.operations.runtime import Locked, Operation, Runtime
from langchain_memoryos.schema import DialoguePage, WriteReport
from langchain_memoryos.store.repository import MemoryRepository, UserState
from langchain_memoryos.tiers.turn import TurnWrite, turn_page

__all__ = ["AlignedTurns", "chained_turn_id", "overlap", "thread_turns"]

Exchange = tuple[str, str]


def _same(call: Exchange, stored: Exchange, *, first: bool, empty: str) -> bool:
    if call == stored:
        return True
    return first and call[0] == empty and call[1] == stored[1]  # trimmed in the middle of an exchange


def overlap(stored: Sequence[Exchange], call: Sequence[Exchange], *, empty: str = "") -> int:
    """How many of the call's first turns are the thread's last stored turns (the longest such run).

    Args:
        stored: the thread's stored turns, oldest first, as ``(user_input, agent_response)``.
        call: the call's turns, in order.
        empty: what an empty side is (the digest of ``""`` when the exchanges are digests).

    Returns:
        ``k``: ``call[:k]`` equals ``stored[-k:]`` (0 when nothing matches).

    Example:
        >>> overlap([("a", "1"), ("b", "2")], [("", "2"), ("c", "3")])  # the first turn's answer alone matches
        1
        >>> overlap([("a", "1"), ("a", "1")], [("a", "1"), ("a", "1"), ("a", "1")])
        2
    """
    for k in range(min(len(stored), len(call)), 0, -1):
        tail = stored[len(stored) - k :]
        if all(_same(call[i], tail[i], first=i == 0, empty=empty) for i in range(k)):
            return k
    return 0


def chained_turn_id(previous: str, exchange: Exchange) -> str:
    """The id of a turn that follows the page ``previous`` (``""`` at the thread's start): the same turn, the same id.

    Example:
        >>> chained_turn_id("", ("hi", "hello")) == chained_turn_id("", ("hi", "hello"))
        True
        >>> chained_turn_id("p_1", ("hi", "hello")) == chained_turn_id("p_2", ("hi", "hello"))
        False
    """
    material = "\x1f".join((previous, *exchange))
    return "msg:" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def thread_turns(repo: MemoryRepository, user_id: str, thread_id: str) -> Step[list[DialoguePage]]:
    """Step: the thread's stored pages, oldest first: its MTM pages, then its STM (the caller holds the user's lock).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> _ = memory.add_turns([("hi", "hello"), ("bye", "ciao")], user_id="u", thread_id="t")
        >>> [p.user_input for p in memory._sync(Locked("u", thread_turns(memory.repository, "u", "t")))]
        ['hi', 'bye']
    """
    state = yield from repo.load(user_id)
    older = sorted((p for p in state.pages.values() if p.thread_id == thread_id), key=chain_order)
    return [*older, *(yield from repo.load_thread(state, thread_id))]


def _stored_digests(state: UserState, pages: list[DialoguePage], thread_id: str) -> list[tuple[Exchange, str]]:
    """The thread's turns as salted digests with their page ids, oldest first, in the order they were added.

    Its pages (a redacted one as it was said) and its forgotten pages' tombstones (no page id).
    """
    rows: list[tuple[int, Exchange, str]] = []
    for page in pages:
        kept = page.metadata.get("_digest")
        digest = (str(kept[0]), str(kept[1])) if isinstance(kept, list) and len(kept) == 2 else None
        seq = page.metadata.get("_seq")
        order = int(seq) if isinstance(seq, int) and not isinstance(seq, bool) else -1
        rows.append((order, digest or turn_digest(state, page.user_input, page.agent_response), page.id))
    rows += [(seq, digest, "") for seq, digest in thread_tombstones(state, thread_id)]
    rows.sort(key=lambda row: row[0])
    return [(digest, page_id) for _, digest, page_id in rows]


def _aligned(
    runtime: Runtime, user: str, thread: str, turns: tuple[TurnWrite, ...]
) -> Step[tuple[list[str], tuple[TurnWrite | None, ...]]]:
    """Step: the stored pages the call's first turns are, and the turns after them with chained turn ids.

    A turn after them that is a forgotten turn of the thread is ``None``: it is not written.
    """
    pages = yield from thread_turns(runtime.repository, user, thread)
    state = yield from runtime.repository.load(user)
    stored = _stored_digests(state, pages, thread)
    empty = turn_digest(state, "", "")[0]
    said = [t.said or (t.user_input if t.user_input.strip() else "", t.agent_response) for t in turns]
    call = [turn_digest(state, user_input, agent_response) for user_input, agent_response in said]
    k = overlap([digest for digest, _ in stored], call, empty=empty)
    matched = [page_id for _, page_id in stored[len(stored) - k :]] if k else []  # "" for a forgotten turn
    # what was forgotten, in whole (a tombstone) or in part (a page stored cut keeps the digest of what was said)
    forgotten = {digest for _, digest in thread_tombstones(state, thread)}
    forgotten |= {
        (str(d[0]), str(d[1])) for p in pages if isinstance(d := p.metadata.get("_digest"), list) and len(d) == 2
    }
    previous = pages[-1].id if pages else ""
    out: list[TurnWrite | None] = []
    for t, digest in zip(turns[k:], call[k:], strict=True):
        if digest in forgotten:
            out.append(None)
            continue
        turn_id = chained_turn_id(previous, (t.user_input, t.agent_response))
        aligned = TurnWrite(
            t.user_id,
            t.thread_id,
            t.user_input,
            t.agent_response,
            t.timestamp,
            t.metadata,
            turn_id,
            optimistic=t.optimistic,
        )
        aligned.forget, aligned.said = t.forget, t.said
        previous = turn_page(aligned).id
        out.append(aligned)
    return matched, tuple(out)


@dataclass(frozen=True)
class AlignedTurns:
    """``add_messages`` of turns without ids: aligned with the stored thread, then written by ``write``.

    ``write`` builds the write of the turns after the overlap (``add_turns``'
    operation); the reports of the turns found stored say ``added=False``.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> history = [{"role": "user", "content": "I'm vegan."}, {"role": "assistant", "content": "Noted."}]
        >>> [r.added for r in memory.add_messages(history, user_id="u")]
        [True]
        >>> history += [{"role": "user", "content": "I live in Oslo."}, {"role": "assistant", "content": "Nice!"}]
        >>> [r.added for r in memory.add_messages(history, user_id="u")]  # the resend stores the new turn only
        [False, True]
        >>> len(memory.get_stm(user_id="u"))
        2
    """

    user_id: str
    thread_id: str
    turns: tuple[TurnWrite, ...]
    write: Callable[[tuple[TurnWrite, ...]], Operation[list[WriteReport]]]

    def run(self, runtime: Runtime) -> list[WriteReport]:
        """Run with blocking IO."""
        matched, new = Locked(self.user_id, _aligned(runtime, self.user_id, self.thread_id, self.turns)).run(runtime)
        return _reports(matched, new, self.write(tuple(t for t in new if t is not None)).run(runtime))

    async def arun(self, runtime: Runtime) -> list[WriteReport]:
        """Run with async IO."""
        step = _aligned(runtime, self.user_id, self.thread_id, self.turns)
        matched, new = await Locked(self.user_id, step).arun(runtime)
        return _reports(matched, new, await self.write(tuple(t for t in new if t is not None)).arun(runtime))


def _reports(matched: list[str], new: tuple[TurnWrite | None, ...], written: list[WriteReport]) -> list[WriteReport]:
    """One report per turn of the call, in order: those found stored, then the new ones (a forgotten one not added)."""
    out = [WriteReport(page_id=page_id, added=False) for page_id in matched]
    reports = iter(written)
    out += [WriteReport(page_id="", added=False) if t is None else next(reports) for t in new]
    return out
