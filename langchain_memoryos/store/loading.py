"""Loading a user's state from the store: its records read, or its snapshot restored and journal replayed.

What :meth:`~langchain_memoryos.store.repository.MemoryRepository.load` does
once it knows the user must be read: the records read into an empty state
(:func:`read_records`), their rows without a usable vector healed
(:func:`heal`), or in a store shared by processes the index snapshot restored
(:func:`restore`) and brought to the current version stamp with the write
journal (:func:`replay`; :mod:`~langchain_memoryos.store.snapshot`).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from langgraph.store.base import GetOp, Item, SearchOp

from langchain_memoryos.index.vector_index import Vector, VectorIndex, decode_vector
from langchain_memoryos.kernel.effects import Embed, Step, StoreBatch
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Persona, Segment
from langchain_memoryos.schema.layout import decode_label, is_hash_label
from langchain_memoryos.store.snapshot import JOURNAL, REPLAY_LIMIT, STATE_PARTS, apply_changes, decode_snapshot
from langchain_memoryos.store.state import UserState

__all__ = ["Change", "every_item", "heal", "read_records", "replay", "restore", "search_all", "version_of"]

logger = logging.getLogger("langchain_memoryos.store.repository")  # the messages' logger as before the split

#: the first read of a namespace asks for this many items; a larger one is read again with twice the limit
_FIRST_READ = 10_000


def _usable_vector(item: Item, dimension: int) -> Vector | None:
    """The item's stored vector, or ``None`` when it is missing, malformed, of another size or not finite."""
    raw = item.value.get("vector") if isinstance(item.value, dict) else None
    if raw is None:
        return None
    try:
        vector = decode_vector(str(raw))
    except (ValueError, TypeError):
        return None
    if vector.shape != (dimension,) or not np.all(np.isfinite(vector)):
        return None
    return vector


def _index(index: VectorIndex, items: list[Item], problems: list[str], what: str) -> None:
    """Put the items' usable vectors into ``index``; note the others in ``problems``."""
    keys: list[str] = []
    vectors: list[Vector] = []
    for it in items:
        vector = _usable_vector(it, index.dimension)
        if vector is None:
            problems.append(f"{what} {it.key}: stored without a usable vector (re-embedded in memory; not yet stored)")
        else:
            keys.append(it.key)
            vectors.append(vector)
    if keys:
        index.add_many(keys, np.stack(vectors))


def every_item(namespace: tuple[str, ...]) -> Step[list[Item]]:
    """Step: every item under ``namespace``, read whole in one search (never paged by offset).

    Paging by offset loses rows: ``PostgresStore`` orders a search by
    ``updated_at``, which the rows written in one transaction share, so pages
    of a tie overlap and miss rows. One search returns a consistent set; a
    namespace with more items than the limit is read again with a doubled limit.
    """
    limit = _FIRST_READ
    while True:
        res = yield StoreBatch((SearchOp(namespace, limit=limit),))
        items: list[Item] = list(res[0])
        if len(items) < limit:
            return items
        limit *= 2


#: A change a journal row names: the namespace after the user's label, and the key.
Change = tuple[tuple[str, ...], str]


def _journal_link(value: Any) -> tuple[str, list[Change]] | None:
    """A journal row's value as ``(previous version, changes)``; ``None`` when it is not a well-formed link.

    Well-formed: a dict with ``"prev"`` a string and ``"keys"`` a list of
    changes, each a list of strings — a namespace part of the user's state
    (:data:`~langchain_memoryos.store.snapshot.STATE_PARTS`), any further parts, then the key.

    Example:
        >>> _journal_link({"prev": "v1", "keys": [["pages", "p_1"], ["stm", "t", "p_2"]]})
        ('v1', [(('pages',), 'p_1'), (('stm', 't'), 'p_2')])
        >>> broken = (5, {"keys": []}, {"prev": "v1", "keys": [["pages"]]}, {"prev": "v", "keys": "x"})
        >>> [_journal_link(v) for v in broken]
        [None, None, None, None]
    """
    if not isinstance(value, dict):
        return None
    prev, keys = value.get("prev"), value.get("keys")
    if not isinstance(prev, str) or not isinstance(keys, list):
        return None
    changes: list[Change] = []
    for change in keys:
        if not isinstance(change, list) or len(change) < 2 or not all(isinstance(x, str) and x for x in change):
            return None
        if change[0] not in STATE_PARTS:
            return None
        changes.append((tuple(change[:-1]), change[-1]))
    return prev, changes


def version_of(item: Any) -> str | None:
    """The version stamp a ``version`` row holds (``None``: no row, or none in it)."""
    value = getattr(item, "value", None)
    return str(value.get("v")) if isinstance(value, dict) and value.get("v") else None


def search_all(namespace: tuple[str, ...], *, exact: bool = True) -> Step[list[Item]]:
    """Step: every item of a namespace (``exact=False``: and of its sub-namespaces).

    Example:
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = InMemoryStore(); store.put(("a",), "k", {}); store.put(("a", "b"), "k", {})
        >>> services = Services(store, None, None)  # type: ignore[arg-type]
        >>> [len(run_sync(search_all(("a",), exact=e), services)) for e in (True, False)]
        [1, 2]
    """
    items = yield from every_item(namespace)
    return [it for it in items if not exact or it.namespace == namespace]


def read_records(state: UserState, embed_chars: int) -> Step[None]:
    """Step: the user's records read into the empty ``state``, their vectors indexed, unusable rows healed.

    What is wrong with a row (no usable vector, an STM page under another
    thread than it says) is noted in ``state.load_problems`` and mended in
    memory (:func:`heal`); the rewrites are buffered for the next flush.
    """
    pages = yield from search_all(state.ns("pages"))
    segments = yield from search_all(state.ns("segments"))
    user_facts = yield from search_all(state.ns("facts", "user"))
    agent_facts = yield from search_all(state.ns("facts", "agent"))
    stm_items = yield from search_all(state.ns("stm"), exact=False)
    singles = yield StoreBatch(
        (
            SearchOp(state.ns("persona"), limit=1),
            SearchOp(state.ns("meta"), limit=1),
        )
    )
    for it in pages:
        state.pages[it.key] = DialoguePage.from_dict(it.value)
    _index(state.page_index, pages, state.load_problems, "page")
    for it in segments:
        state.segments[it.key] = Segment.from_dict(it.value)
    _index(state.segment_index, segments, state.load_problems, "segment")
    for kind, items in (("user", user_facts), ("agent", agent_facts)):
        for it in items:
            state.facts[kind][it.key] = MemoryRecord.from_dict(it.value)
        _index(state.fact_index[kind], items, state.load_problems, f"{kind} fact")
    stm_items.sort(key=lambda it: int(it.value.get("seq", 0)))
    moved: list[DialoguePage] = []
    for it in stm_items:
        page = DialoguePage.from_dict(it.value)
        page.metadata.setdefault("_seq", int(it.value.get("seq", 0)))
        depth = len(state.root) + 2  # (*root, user, "stm", thread)
        tl = it.namespace[depth] if len(it.namespace) > depth else None
        # a hash label (a long thread id) cannot be decoded: the page's value holds the thread id
        thread = page.thread_id if tl is None or is_hash_label(tl) else decode_label(tl)
        if page.thread_id != thread:  # the namespace is where the row is: it decides
            state.load_problems.append(
                f"STM page {it.key}: stored under thread {thread!r} but says {page.thread_id!r} (corrected)"
            )
            page.thread_id = thread
            moved.append(page)
        state.stm.setdefault(thread, []).append(page)
    _index(state.stm_index, stm_items, state.load_problems, "STM page")
    for key in state.stm_index.keys():
        state.stm_vectors[key] = state.stm_index.get(key)
    if state.load_problems:
        yield from heal(state, embed_chars)
    for page in moved:
        if page.id in state.stm_vectors:
            state.stm_update(page)  # the row says its own thread again
    if singles[0]:
        state.persona = Persona.from_dict(singles[0][0].value)
        state.persona_stored = True
    if singles[1]:
        state.meta = dict(singles[1][0].value)


def restore(state: UserState, item: Item | None) -> Step[UserState | None]:
    """Step: the user from its snapshot and the journal since (``None``: rebuild from the records).

    ``state`` is the empty state being loaded, with the current version
    stamp. The snapshot is used only at that version, or when the journal
    links the snapshot's version to it: then the records the linking
    flushes changed are read again and applied. Journal rows found that
    lead nowhere are noted in ``state.journal`` (the next snapshot deletes them).
    """
    if item is None:
        return None
    restored = decode_snapshot(item.value, state)
    if restored is None or restored.version is None:
        logger.warning(
            "user %r: snapshot unusable (torn, altered, copied from another user or scope, restamped, or of "
            "another format): rebuilt from the records",
            state.user_id,
        )
        return None
    restored.chain_gap, restored.snapshot_every = state.chain_gap, state.snapshot_every
    restored.pending_visits = state.pending_visits
    if restored.version == state.version:
        return restored
    assert state.version is not None
    if (yield from replay(restored, state.version, state)):
        return restored
    return None


def replay(target: UserState, stamp: str, note: UserState) -> Step[bool]:
    """Step: bring ``target`` from its version to ``stamp`` with the journal (``False``: no way; rebuild).

    The records the flushes on the journal path changed are read again and
    applied. When there is no path (or a change cannot be applied), the
    journal rows found are noted in ``note.journal`` for the next snapshot
    to delete, and ``target`` must not be used (it may be half changed).
    """
    try:
        rows = yield from search_all(target.ns(JOURNAL))
    except ValueError as exc:  # a row the store cannot parse (SQLite: JSON text cut or edited)
        logger.warning("user %r: the journal cannot be read (%s): rebuilt from the records", target.user_id, exc)
        return False
    links: dict[str, tuple[str, list[Change]]] = {}
    broken: list[str] = []
    for row in rows:
        link = _journal_link(row.value)
        if link is None or link[0] in links:  # not a link, or a second row from one version: not followed
            broken.append(row.key)
        else:
            links[link[0]] = (row.key, link[1])
    if broken:
        logger.warning(
            "user %r: %d journal rows are not well-formed links (%s): rebuilt from the records",
            target.user_id,
            len(broken),
            ", ".join(repr(key) for key in broken[:3]),
        )
        note.journal = [row.key for row in rows]
        return False
    path: list[tuple[str, list[Change]]] = []
    version = target.version
    while version != stamp:
        step = links.get(version) if version is not None else None
        if step is None or len(path) > len(rows):
            logger.info("user %r: no journal path from %s to the stamp: rebuilt", target.user_id, version)
            note.journal = [row.key for row in rows]
            return False
        path.append(step)
        version = step[0]
    changed = list(dict.fromkeys(change for _, keys in path for change in keys))
    current = yield StoreBatch(tuple(GetOp(target.ns(*tail), key) for tail, key in changed))
    values = [
        (tail, key, it.value if it is not None else None) for (tail, key), it in zip(changed, current, strict=True)
    ]
    try:
        applied = apply_changes(target, values)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a changed record that does not parse
        logger.warning("user %r: a journaled change cannot be applied (%r): rebuilt", target.user_id, exc)
        applied = False
    if not applied:
        note.journal = [row.key for row in rows]
        return False
    target.version = stamp
    target.journal += [key for key, _ in path]
    target.snapshot_due = target.snapshot_due or len(path) > REPLAY_LIMIT
    return True


def heal(state: UserState, embed_chars: int) -> Step[None]:
    """Step: give every record stored without a usable vector a new one, and buffer its rewrite.

    Pages, STM pages and facts are embedded again from their text (as they
    were written); a segment gets its pages' centroid. The rewrites are
    flushed with the next write (or by ``repair()``); until then
    ``check()`` reports them. A corrupted row never makes a user unreadable.
    """
    pages = [p for p in state.pages.values() if p.id not in state.page_index]
    stm = [p for t in state.stm.values() for p in t if p.id not in state.stm_index]
    facts = [r for kind in ("user", "agent") for r in state.facts[kind].values() if r.id not in state.fact_index[kind]]
    texts = [p.embedding_text[:embed_chars] for p in pages + stm] + [r.summary[:embed_chars] for r in facts]
    if texts:
        logger.warning("user %r: %d records stored without a usable vector: re-embedded", state.user_id, len(texts))
    vectors = list((yield Embed(tuple(texts)))) if texts else []
    for page, vector in zip(pages, vectors[: len(pages)], strict=True):
        state.put_page(page, vector)
    for page, vector in zip(stm, vectors[len(pages) : len(pages) + len(stm)], strict=True):
        state.stm_vectors[page.id] = vector
        state.stm_index.add(page.id, vector)
        state.stm_update(page)
    for record, vector in zip(facts, vectors[len(pages) + len(stm) :], strict=True):
        state.put_fact(record, vector)
    for segment in state.segments.values():
        if segment.id not in state.segment_index:
            members = [state.page_index.get(p) for p in segment.page_ids if p in state.page_index]
            if members:
                mean = np.mean(np.stack(members), axis=0).astype(np.float32)
                norm = float(np.linalg.norm(mean))
                state.put_segment(segment, mean / np.float32(norm) if norm > 0 else mean)
