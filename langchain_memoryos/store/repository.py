"""MemoryRepository: the memory's layout in a LangGraph ``BaseStore``.

Namespaces (``<u>`` is the reversibly encoded user id, ``<t>`` the thread id)::

    ("memoryos", <u>, "stm", <t>)      short-term pages of one thread
    ("memoryos", <u>, "pages")         mid-term pages
    ("memoryos", <u>, "segments")      mid-term segments
    ("memoryos", <u>, "facts", "user") user knowledge base
    ("memoryos", <u>, "facts", "agent") agent traits
    ("memoryos", <u>, "persona")       persona (key "persona")
    ("memoryos", <u>, "log")           AMU write events
    ("memoryos", <u>, "meta")          conversation clock and counters (key "state")
    ("memoryos", <u>, "version")       version stamp (key "v"), in stores shared by processes
    ("memoryos", <u>, "deleting")      tombstone (key "tombstone") while the user is being deleted

Vectors live inside the item values (base64 float32). Each user's vectors are
also held in FAISS indices (:class:`UserState`), a cache rebuilt from the store
on first use. Writes are buffered as ``PutOp``s and flushed in one batch per
operation, so on SQL stores a turn is one transaction.

A user's deletion is all or nothing in effect: its first transaction stores a
tombstone, and until the last row is gone every access to the user finishes
the deletion before doing anything else (see :meth:`MemoryRepository.delete_all`).
"""

from __future__ import annotations

import asyncio
import copy
import datetime as _dt
import hashlib
import itertools
import logging
import threading
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from langgraph.store.base import GetOp, Item, Op, PutOp, SearchOp

from langchain_memoryos.pipeline.effects import Embed, Purge, Step, StoreBatch
from langchain_memoryos.retrieval.lexical import LexicalIndex, page_tokens
from langchain_memoryos.schema import (
    DialoguePage,
    FactKind,
    MemoryRecord,
    MemoryStats,
    Persona,
    Segment,
    WriteEvent,
    ensure_utc,
)
from langchain_memoryos.store.vector_index import Vector, VectorIndex, decode_vector, encode_vector

logger = logging.getLogger(__name__)

__all__ = [
    "ROOT",
    "MemoryRepository",
    "UserLease",
    "UserState",
    "decode_label",
    "encode_label",
    "page_key",
]

ROOT = "memoryos"
_PAGE_SIZE = 1000
#: the first read of a namespace asks for this many items; a larger one is read again with twice the limit
_FIRST_READ = 10_000
#: the namespace part and key of a user's tombstone (see ``MemoryRepository.delete_all``)
_DELETING, _TOMBSTONE = "deleting", "tombstone"

#: Revisions of cached user states: every load and every flushed write takes the next one, so a writer that
#: worked on a copy can tell, at commit, whether the user moved since it took the copy.
_revisions = itertools.count(1)


def _next_revision() -> int:
    return next(_revisions)


def encode_label(value: str) -> str:
    """Encode an id as a namespace label LangGraph accepts, reversibly.

    LangGraph rejects labels with ``.``, NUL or empty labels; ``%`` is escaped
    first so that decoding is exact.

    Args:
        value: a non-empty id.

    Returns:
        The label.

    Raises:
        ValueError: for an empty or non-string id.

    Example:
        >>> encode_label("a.b@x.com")
        'a%2Eb@x%2Ecom'
        >>> decode_label(encode_label("a.b@x.com"))
        'a.b@x.com'
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"ids must be non-empty strings, got {value!r}.")
    return value.replace("%", "%25").replace(".", "%2E").replace("\x00", "%00")


def decode_label(label: str) -> str:
    """Invert :func:`encode_label`.

    Example:
        >>> decode_label("50%25%2E")
        '50%.'
    """
    out: list[str] = []
    i = 0
    while i < len(label):
        if label[i] == "%" and label[i + 1 : i + 3] in ("25", "2E", "00"):
            out.append({"25": "%", "2E": ".", "00": "\x00"}[label[i + 1 : i + 3]])
            i += 3
        else:
            out.append(label[i])
            i += 1
    return "".join(out)


def page_key(thread_id: str, turn_id: str | None, *parts: str) -> str:
    """Deterministic page key: the same turn always gets the same key.

    Args:
        thread_id: the thread.
        turn_id: a caller-given turn id (preferred), or ``None``.
        *parts: what identifies the turn when there is no turn id (timestamp,
            user input, agent response).

    Returns:
        ``"p_"`` + 24 hex digits.

    Example:
        >>> page_key("t", "turn-1") == page_key("t", "turn-1")
        True
    """
    material = "\x1f".join([thread_id, "id", turn_id] if turn_id is not None else [thread_id, "content", *parts])
    return "p_" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:24]


@dataclass
class UserState:
    """One user's memory in process: records plus FAISS caches, and a write buffer.

    Every mutation goes through a method that updates the cache *and* buffers
    the matching store operation; :meth:`take_ops` hands the buffer to a flush.

    Example:
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> s.stats().segments
        0
    """

    user_id: str
    label: str
    dimension: int
    pages: dict[str, DialoguePage] = field(default_factory=dict)
    segments: dict[str, Segment] = field(default_factory=dict)
    facts: dict[str, dict[str, MemoryRecord]] = field(default_factory=lambda: {"user": {}, "agent": {}})
    persona: Persona = field(default_factory=Persona)
    persona_stored: bool = False
    stm: dict[str, list[DialoguePage]] = field(default_factory=dict)
    stm_vectors: dict[str, Vector] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    pending: list[Op] = field(default_factory=list)
    shared: bool = False
    version: str | None = None
    load_problems: list[str] = field(default_factory=list)
    revision: int = field(default_factory=_next_revision)
    #: rows of an interrupted deletion that loading this user deleted (0 normally)
    completed_deletion: int = 0
    page_index: VectorIndex = field(init=False)
    segment_index: VectorIndex = field(init=False)
    fact_index: dict[str, VectorIndex] = field(init=False)
    stm_index: VectorIndex = field(init=False)
    _lexicon: LexicalIndex | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.stm_index = VectorIndex(self.dimension)
        self.page_index = VectorIndex(self.dimension)
        self.segment_index = VectorIndex(self.dimension)
        self.fact_index = {"user": VectorIndex(self.dimension), "agent": VectorIndex(self.dimension)}

    @property
    def lexicon(self) -> LexicalIndex:
        """BM25 index over every page (MTM and every thread's STM), built on first use.

        Example:
            >>> from langchain_memoryos.retrieval.lexical import tokenize
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_page(DialoguePage(id="p", user_input="pottery class", agent_response=""),
            ...            np.ones(2, dtype=np.float32))
            >>> [k for k, _ in s.lexicon.search(tokenize("pottery"), 3)]
            ['p']
        """
        if self._lexicon is None:
            self._lexicon = LexicalIndex()
            for page in self.pages.values():
                self._lexicon.add(page.id, page_tokens(page))
            for pages in self.stm.values():
                for page in pages:
                    self._lexicon.add(page.id, page_tokens(page))
        return self._lexicon

    def _lexicon_add(self, page: DialoguePage) -> None:
        if self._lexicon is not None:
            self._lexicon.add(page.id, page_tokens(page))

    def _lexicon_remove(self, page_ids: list[str]) -> None:
        if self._lexicon is not None:
            self._lexicon.remove(page_ids)

    # -- namespaces ----------------------------------------------------------
    def ns(self, *parts: str) -> tuple[str, ...]:
        """The namespace ``("memoryos", <user>, *parts)``.

        Example:
            >>> UserState(user_id="a.b", label="a%2Eb", dimension=2).ns("pages")
            ('memoryos', 'a%2Eb', 'pages')
        """
        return (ROOT, self.label, *parts)

    def stm_ns(self, thread_id: str) -> tuple[str, ...]:
        """The STM namespace of a thread.

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).stm_ns("t.1")
            ('memoryos', 'u', 'stm', 't%2E1')
        """
        return self.ns("stm", encode_label(thread_id))

    def _put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any] | None) -> None:
        self.pending.append(PutOp(namespace, key, value, index=False))

    def take_ops(self) -> tuple[Op, ...]:
        """Hand over and clear the buffered store operations.

        In a store that several processes share, a write also stamps the user
        with a new version, so the others know their cached state is stale.

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).take_ops()
            ()
        """
        if self.pending and self.shared:
            self.version = uuid.uuid4().hex
            self._put(self.ns("version"), "v", {"v": self.version})
        if self.pending:
            self.load_problems.clear()  # the rewrites of records loaded without a usable vector go with this flush
            self.revision = _next_revision()
        ops, self.pending = tuple(self.pending), []
        return ops

    def fork(self) -> UserState:
        """A private working copy: records, caches and write buffer, sharing nothing mutable.

        A writer whose judgements may be slow (a model call) works on a fork
        without holding the user's lock, then commits it only if the user has
        not moved meanwhile (:meth:`MemoryRepository.install`).

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> twin = s.fork(); twin.meta["clock"] = "2024-01-01T00:00:00+00:00"
            >>> s.clock is None, twin.clock.year, twin.revision == s.revision
            (True, 2024, True)
        """
        return copy.deepcopy(self)

    # -- clock and counters -------------------------------------------------
    @property
    def clock(self) -> Any:
        """The conversation clock: the user's latest turn timestamp (or ``None``).

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).clock is None
            True
        """
        raw = self.meta.get("clock")
        return ensure_utc(raw) if raw else None

    def advance_clock(self, timestamp: Any) -> None:
        """Move the clock forward to ``timestamp`` (never backwards).

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2); s.advance_clock("2023-01-02T00:00:00")
            >>> s.clock.year
            2023
        """
        ts = ensure_utc(timestamp)
        current = self.clock
        if current is None or ts > current:
            self.meta["clock"] = ts.isoformat()
            self.save_meta()

    def next_seq(self) -> int:
        """A per-user monotonic counter (ordering of STM pages and log events).

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2); s.next_seq(), s.next_seq()
            (1, 2)
        """
        seq = int(self.meta.get("seq", 0)) + 1
        self.meta["seq"] = seq
        self.save_meta()
        return seq

    def count_usage(self, judgement: str, calls: int, tokens: int, *, fallback: bool = False) -> None:
        """Add model usage to the user's counters, in total and per judgement type.

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2); s.count_usage("fuse", 1, 10)
            >>> s.stats().llm_tokens, s.stats().llm_usage["fuse"]["calls"]
            (10, 1)
        """
        if not (calls or tokens or fallback):
            return
        self.meta["llm_calls"] = int(self.meta.get("llm_calls", 0)) + calls
        self.meta["llm_tokens"] = int(self.meta.get("llm_tokens", 0)) + tokens
        by = self.meta.setdefault("llm_usage", {}).setdefault(judgement, {"calls": 0, "tokens": 0, "fallbacks": 0})
        by["calls"] += calls
        by["tokens"] += tokens
        by["fallbacks"] += int(fallback)
        self.save_meta()

    def save_meta(self) -> None:
        """Buffer a write of the meta item (deduplicated within one flush)."""
        ns = self.ns("meta")
        self.pending = [op for op in self.pending if not (isinstance(op, PutOp) and op.namespace == ns)]
        self._put(ns, "state", dict(self.meta))

    # -- STM -----------------------------------------------------------------
    def stm_append(self, page: DialoguePage, vector: Vector) -> None:
        """Append a page to its thread's STM queue.

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2); s.stm["t"] = []
            >>> s.stm_append(DialoguePage(id="p", user_input="a", agent_response="b", thread_id="t"),
            ...              np.zeros(2, dtype=np.float32))
            >>> [p.id for p in s.stm["t"]]
            ['p']
        """
        seq = self.next_seq()
        page.metadata.setdefault("_seq", seq)
        self.stm.setdefault(page.thread_id, []).append(page)
        self.stm_vectors[page.id] = vector
        self.stm_index.add(page.id, vector)
        self._lexicon_add(page)
        value = page.to_dict()
        value["vector"] = encode_vector(vector)
        value["seq"] = seq
        self._put(self.stm_ns(page.thread_id), page.id, value)

    def stm_pop_oldest(self, thread_id: str) -> tuple[DialoguePage, Vector]:
        """Remove and return the oldest page of a thread's STM.

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2); s.stm["t"] = []
            >>> s.stm_append(DialoguePage(id="p", user_input="a", agent_response="b", thread_id="t"),
            ...              np.zeros(2, dtype=np.float32))
            >>> s.stm_pop_oldest("t")[0].id
            'p'
        """
        page = self.stm[thread_id].pop(0)
        vector = self.stm_vectors.pop(page.id)
        self.stm_index.remove([page.id])
        self._put(self.stm_ns(thread_id), page.id, None)
        return page, vector

    def stm_update(self, page: DialoguePage) -> None:
        """Rewrite an STM page (e.g. its chain meta).

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).stm_update  # doctest: +ELLIPSIS
            <bound method ...>
        """
        value = page.to_dict()
        value["vector"] = encode_vector(self.stm_vectors[page.id])
        value["seq"] = page.metadata.get("_seq", 0)
        self._put(self.stm_ns(page.thread_id), page.id, value)

    def stm_clear(self, thread_id: str) -> list[str]:
        """Drop a thread's STM (pages are not moved to MTM).

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).stm_clear("t")
            []
        """
        removed = [p.id for p in self.stm.get(thread_id, [])]
        self.stm_index.remove(removed)
        self._lexicon_remove(removed)
        for pid in removed:
            self.stm_vectors.pop(pid, None)
            self._put(self.stm_ns(thread_id), pid, None)
        self.stm[thread_id] = []
        return removed

    # -- MTM -----------------------------------------------------------------
    def put_page(self, page: DialoguePage, vector: Vector) -> None:
        """Store a mid-term page.

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_page(DialoguePage(id="p", user_input="a", agent_response="b"), np.ones(2, dtype=np.float32))
            >>> len(s.page_index)
            1
        """
        self.pages[page.id] = page
        self.page_index.add(page.id, vector)
        self._lexicon_add(page)
        value = page.to_dict()
        value["vector"] = encode_vector(vector)
        self._put(self.ns("pages"), page.id, value)

    def delete_pages(self, page_ids: list[str]) -> None:
        """Delete mid-term pages.

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).delete_pages(["x"])
        """
        self.page_index.remove(page_ids)
        self._lexicon_remove(page_ids)
        for pid in page_ids:
            self.pages.pop(pid, None)
            self._put(self.ns("pages"), pid, None)

    def put_segment(self, segment: Segment, vector: Vector | None = None) -> None:
        """Store a segment (with its embedding when given or already cached).

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_segment(Segment(id="s"), np.ones(2, dtype=np.float32)); list(s.segments)
            ['s']
        """
        self.segments[segment.id] = segment
        if vector is not None:
            self.segment_index.add(segment.id, vector)
        else:
            vector = self.segment_index.get(segment.id)
        value = segment.to_dict()
        value["vector"] = encode_vector(vector)
        self._put(self.ns("segments"), segment.id, value)

    def delete_segment(self, segment_id: str) -> Segment | None:
        """Delete a segment and its pages.

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).delete_segment("s") is None
            True
        """
        seg = self.segments.pop(segment_id, None)
        if seg is None:
            return None
        self.segment_index.remove([segment_id])
        self._put(self.ns("segments"), segment_id, None)
        self.delete_pages(list(seg.page_ids))
        return seg

    # -- LPM -----------------------------------------------------------------
    def put_fact(self, record: MemoryRecord, vector: Vector) -> None:
        """Store a user fact or agent trait.

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_fact(MemoryRecord(id="f", summary="x"), np.ones(2, dtype=np.float32)); list(s.facts["user"])
            ['f']
        """
        self.facts[record.kind][record.id] = record
        self.fact_index[record.kind].add(record.id, vector)
        value = record.to_dict()
        value["vector"] = encode_vector(vector)
        self._put(self.ns("facts", record.kind), record.id, value)

    def delete_fact(self, kind: FactKind, record_id: str) -> None:
        """Delete a user fact or agent trait.

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).delete_fact("user", "f")
        """
        self.facts[kind].pop(record_id, None)
        self.fact_index[kind].remove([record_id])
        self._put(self.ns("facts", kind), record_id, None)

    def save_persona(self) -> None:
        """Buffer a write of the persona.

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2); s.save_persona(); len(s.pending)
            1
        """
        self.persona_stored = True
        self._put(self.ns("persona"), "persona", self.persona.to_dict())

    def log_event(self, event: WriteEvent) -> None:
        """Append a write event to the user's log.

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.log_event(WriteEvent("filtered", MemoryRecord())); len(s.pending)
            2
        """
        event.id = f"{self.next_seq():012d}"
        self._put(self.ns("log"), event.id, event.to_dict())

    def stats(self) -> MemoryStats:
        """Counts over all threads.

        Example:
            >>> UserState(user_id="u", label="u", dimension=2).stats().mtm_pages
            0
        """
        return MemoryStats(
            stm_pages=sum(len(v) for v in self.stm.values()),
            segments=len(self.segments),
            mtm_pages=len(self.pages),
            user_facts=len(self.facts["user"]),
            agent_facts=len(self.facts["agent"]),
            llm_calls=int(self.meta.get("llm_calls", 0)),
            llm_tokens=int(self.meta.get("llm_tokens", 0)),
            llm_usage={k: dict(v) for k, v in self.meta.get("llm_usage", {}).items()},
        )


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


def _every(namespace: tuple[str, ...]) -> Step[list[Item]]:
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


class ProcessLocks(Protocol):
    """Per-user locks between processes (PostgreSQL advisory locks, SQLite file locks).

    ``acquire(user_id)`` blocks until this process holds the user's lock and
    returns the function that releases it.
    """

    def acquire(self, user_id: str) -> Callable[[], None]:
        """Take the user's lock; return its release."""
        ...


def _version(item: Any) -> str | None:
    value = getattr(item, "value", None)
    return str(value.get("v")) if isinstance(value, dict) and value.get("v") else None


class UserLease:
    """A held per-user write lock, released exactly once.

    ``release()`` ends a write that went well; ``fail()`` first drops the
    user's cached state (it is reloaded from the store, so a half-applied
    write is never seen). A lease that is dropped without either — a graph run
    abandoned between two nodes — fails when it is garbage-collected, so the
    lock is never leaked.

    Example:
        >>> released = []
        >>> lease = UserLease(lambda: released.append(1), lambda: None)
        >>> lease.release(); lease.release(); released
        [1]
    """

    def __init__(self, release: Callable[[], None], invalidate: Callable[[], None]) -> None:
        self._release = release
        self._invalidate = invalidate
        self._finalizer = weakref.finalize(self, _abandon, release, invalidate)

    @property
    def held(self) -> bool:
        """Whether the lock is still held."""
        return self._finalizer.alive

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._finalizer.detach() is not None:
            self._release()

    def fail(self) -> None:
        """Drop the user's cached state, then release the lock (idempotent)."""
        if self._finalizer.detach() is not None:
            _abandon(self._release, self._invalidate)

    def __enter__(self) -> UserLease:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        """Release the lock; fail when the block raised."""
        if exc_type is not None:
            self.fail()
        else:
            self.release()


def _abandon(release: Callable[[], None], invalidate: Callable[[], None]) -> None:
    try:
        invalidate()
    finally:
        release()


class MemoryRepository:
    """The memory's store layout, per-user caches and per-user write locks.

    Args:
        dimension: the embedding dimension.

    Example:
        >>> repo = MemoryRepository(384)
        >>> repo.namespace("a.b@x.com", "pages")
        ('memoryos', 'a%2Eb@x%2Ecom', 'pages')
    """

    def __init__(
        self, dimension: int, *, locks: ProcessLocks | None = None, shared: bool = False, embed_chars: int = 8000
    ) -> None:
        self.dimension = dimension
        self.embed_chars = embed_chars
        self.shared = shared or locks is not None
        self._process_locks = locks
        self._states: dict[str, UserState] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._alocks: dict[tuple[int, str], asyncio.Lock] = {}
        self._guard = threading.Lock()

    def namespace(self, user_id: str, *parts: str) -> tuple[str, ...]:
        """The namespace ``("memoryos", <encoded user>, *parts)``.

        Example:
            >>> MemoryRepository(2).namespace("u")
            ('memoryos', 'u')
        """
        return (ROOT, encode_label(user_id), *parts)

    # -- locks ---------------------------------------------------------------
    def _lock(self, user_id: str) -> threading.Lock:
        with self._guard:
            lock = self._locks.get(user_id)
            if lock is None:
                lock = self._locks[user_id] = threading.Lock()
            return lock

    def lease(self, user_id: str) -> UserLease:
        """Take the user's write lock (blocking) as a lease that may outlive a call (a graph run).

        Example:
            >>> repo = MemoryRepository(2)
            >>> lease = repo.lease("u"); lease.release()
        """
        lock = self._lock(user_id)
        lock.acquire()
        try:
            release = self._with_process_lock(lock.release, self._acquire_process_lock(user_id))
        except BaseException:
            lock.release()
            raise
        return UserLease(release, self._invalidator(user_id))

    def _acquire_process_lock(self, user_id: str) -> Callable[[], None] | None:
        return self._process_locks.acquire(user_id) if self._process_locks is not None else None

    @staticmethod
    def _with_process_lock(release: Callable[[], None], process: Callable[[], None] | None) -> Callable[[], None]:
        if process is None:
            return release

        def both() -> None:
            try:
                process()
            finally:
                release()

        return both

    async def alease(self, user_id: str) -> UserLease:
        """Take the user's write lock from a coroutine (see :meth:`alocked`) as a lease.

        Example:
            >>> import asyncio
            >>> async def main():
            ...     (await MemoryRepository(2).alease("u")).release()
            >>> asyncio.run(main())
        """
        loop = asyncio.get_running_loop()
        with self._guard:
            alock = self._alocks.get((id(loop), user_id))
            if alock is None:
                alock = self._alocks[(id(loop), user_id)] = asyncio.Lock()
        await alock.acquire()
        lock = self._lock(user_id)
        try:
            if not lock.acquire(blocking=False):
                await asyncio.to_thread(lock.acquire)
        except BaseException:
            alock.release()
            raise
        try:
            process = await asyncio.to_thread(self._process_locks.acquire, user_id) if self._process_locks else None
        except BaseException:
            lock.release()
            alock.release()
            raise

        def release() -> None:
            if process is not None:
                process()
            lock.release()
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                alock.release()
            elif not loop.is_closed():
                loop.call_soon_threadsafe(alock.release)

        return UserLease(release, self._invalidator(user_id))

    def _invalidator(self, user_id: str) -> Callable[[], None]:
        return lambda: self.invalidate(user_id)

    @contextmanager
    def locked(self, user_id: str) -> Iterator[None]:
        """Hold the user's write lock (threads); on an error the cached state is dropped.

        Example:
            >>> with MemoryRepository(2).locked("u"):
            ...     pass
        """
        with self.lease(user_id):
            yield

    @asynccontextmanager
    async def alocked(self, user_id: str) -> AsyncIterator[None]:
        """Hold the user's write lock from a coroutine; on an error the cached state is dropped.

        Coroutines of one event loop queue on an ``asyncio.Lock``; the thread
        lock (shared with sync callers) is then taken without blocking the loop.

        Example:
            >>> import asyncio
            >>> async def main():
            ...     async with MemoryRepository(2).alocked("u"):
            ...         return 1
            >>> asyncio.run(main())
            1
        """
        with await self.alease(user_id):
            yield

    # -- cache ---------------------------------------------------------------
    def install(self, state: UserState) -> None:
        """Make a committed working copy (:meth:`UserState.fork`) the user's cached state.

        Example:
            >>> repo = MemoryRepository(2); s = UserState(user_id="u", label="u", dimension=2)
            >>> repo.install(s); repo.cached("u") is s
            True
        """
        self._states[state.user_id] = state

    def cached(self, user_id: str) -> UserState | None:
        """The user's cached state, if any (no store access).

        Example:
            >>> MemoryRepository(2).cached("u") is None
            True
        """
        return self._states.get(user_id)

    def invalidate(self, user_id: str) -> None:
        """Forget the cached state of a user (it is reloaded from the store).

        Example:
            >>> MemoryRepository(2).invalidate("u")
        """
        self._states.pop(user_id, None)

    def load(self, user_id: str) -> Step[UserState]:
        """Step: the user's state, loaded from the store on first use.

        A user whose deletion was interrupted (its tombstone is there) is not
        loaded: the deletion is finished first and the user starts empty
        (``state.completed_deletion`` counts the rows it deleted). In a store
        shared by processes, a cached state is used only while the user's
        version stamp is unchanged.

        Example:
            >>> from langchain_memoryos.pipeline.effects import run_sync, Services
            >>> from langgraph.store.memory import InMemoryStore
            >>> services = Services(InMemoryStore(), None, None)  # type: ignore[arg-type]
            >>> st = run_sync(MemoryRepository(2).load("u"), services)
            >>> st.user_id
            'u'
        """
        state = self._states.get(user_id)
        if state is not None:
            if not self.shared:
                return state
            stamp = yield StoreBatch((GetOp(state.ns("version"), "v"),))
            if _version(stamp[0]) == state.version:
                return state  # no other process wrote since this cache was built
        label = encode_label(user_id)
        state = UserState(user_id=user_id, label=label, dimension=self.dimension, shared=self.shared)
        head = yield StoreBatch((GetOp(state.ns(_DELETING), _TOMBSTONE), GetOp(state.ns("version"), "v")))
        if head[0] is not None:  # an interrupted deletion: finish it, the user starts empty
            state.completed_deletion = yield from self._finish_deletion(user_id)
            self._states[user_id] = state
            return state
        state.version = _version(head[1])
        pages = yield from self.search_all(state.ns("pages"))
        segments = yield from self.search_all(state.ns("segments"))
        user_facts = yield from self.search_all(state.ns("facts", "user"))
        agent_facts = yield from self.search_all(state.ns("facts", "agent"))
        stm_items = yield from self.search_all(state.ns("stm"), exact=False)
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
            thread = decode_label(it.namespace[3]) if len(it.namespace) > 3 else page.thread_id
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
            yield from self._heal(state)
        for page in moved:
            if page.id in state.stm_vectors:
                state.stm_update(page)  # the row says its own thread again
        if singles[0]:
            state.persona = Persona.from_dict(singles[0][0].value)
            state.persona_stored = True
        if singles[1]:
            state.meta = dict(singles[1][0].value)
        self._states[user_id] = state
        return state

    def _heal(self, state: UserState) -> Step[None]:
        """Step: give every record stored without a usable vector a new one, and buffer its rewrite.

        Pages, STM pages and facts are embedded again from their text (as they
        were written); a segment gets its pages' centroid. The rewrites are
        flushed with the next write (or by ``repair()``); until then
        ``check()`` reports them. A corrupted row never makes a user unreadable.
        """
        limit = self.embed_chars
        pages = [p for p in state.pages.values() if p.id not in state.page_index]
        stm = [p for t in state.stm.values() for p in t if p.id not in state.stm_index]
        facts = [
            r for kind in ("user", "agent") for r in state.facts[kind].values() if r.id not in state.fact_index[kind]
        ]
        texts = [p.embedding_text[:limit] for p in pages + stm] + [r.summary[:limit] for r in facts]
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

    def load_thread(self, state: UserState, thread_id: str) -> Step[list[DialoguePage]]:
        """Step: a thread's STM pages, oldest first (loaded with the user's state).

        Example:
            >>> MemoryRepository(2).load_thread  # doctest: +ELLIPSIS
            <bound method ...>
        """
        return state.stm.setdefault(thread_id, [])
        yield  # pragma: no cover - makes this a generator like every step

    def search_all(self, namespace: tuple[str, ...], *, exact: bool = True) -> Step[list[Item]]:
        """Step: every item of a namespace (``exact=False``: and of its sub-namespaces).

        Example:
            >>> from langchain_memoryos.pipeline.effects import Services, run_sync
            >>> from langgraph.store.memory import InMemoryStore
            >>> store = InMemoryStore(); store.put(("a",), "k", {}); store.put(("a", "b"), "k", {})
            >>> services = Services(store, None, None)  # type: ignore[arg-type]
            >>> [len(run_sync(MemoryRepository(2).search_all(("a",), exact=e), services)) for e in (True, False)]
            [1, 2]
        """
        items = yield from _every(namespace)
        return [it for it in items if not exact or it.namespace == namespace]

    def all_items(self, user_id: str) -> Step[list[Item]]:
        """Step: every stored item of a user, in every namespace.

        Example:
            >>> from langchain_memoryos.pipeline.effects import Services, run_sync
            >>> from langgraph.store.memory import InMemoryStore
            >>> store = InMemoryStore(); store.put(("memoryos", "u", "pages"), "p", {})
            >>> store.put(("memoryos", "u2", "pages"), "p", {})
            >>> [it.namespace for it in run_sync(MemoryRepository(2).all_items("u"), Services(store, None, None))]
            [('memoryos', 'u', 'pages')]
        """
        return (yield from _every(self.namespace(user_id)))

    def _marks(self, user_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The namespaces of the user's tombstone and version stamp."""
        return self.namespace(user_id, _DELETING), self.namespace(user_id, "version")

    def delete_all(self, user_id: str) -> Step[int]:
        """Step: delete every item of a user in every namespace; returns the count.

        A deletion that has started always finishes. Its first transaction
        stores a tombstone for the user and a new version stamp (so other
        processes drop their cached state of the user); the rows then go in
        batches of up to 1,000, the tombstone and the stamp last, and the store is
        purged (:class:`~langchain_memoryos.pipeline.effects.Purge`). If the deletion is
        interrupted (a crash, ``kill -9``, a store error), every later access to
        the user — :meth:`load` (so any read, write, ``check`` or ``repair``),
        :meth:`finish_deletion`, or ``delete_all`` again — finishes it first: a
        half-deleted user is never seen and never rebuilt from what is left.

        Example:
            >>> from langchain_memoryos.pipeline.effects import run_sync, Services
            >>> from langgraph.store.memory import InMemoryStore
            >>> store, repo = InMemoryStore(), MemoryRepository(2)
            >>> services = Services(store, None, None)  # type: ignore[arg-type]
            >>> store.put(repo.namespace("u", "log"), "1", {"note": "secret"})
            >>> run_sync(repo.delete_all("u"), services), store.search(("memoryos", "u"))
            (1, [])
        """
        tombstone, version = self._marks(user_id)
        first, stamp = yield StoreBatch((SearchOp(self.namespace(user_id), limit=1), GetOp(version, "v")))
        if not first:
            self.invalidate(user_id)
            return 0  # nothing stored: nothing to mark or purge
        since = _dt.datetime.now(_dt.UTC).isoformat()
        yield StoreBatch(
            (
                PutOp(tombstone, _TOMBSTONE, {"since": since}, index=False),
                PutOp(version, "v", {"v": uuid.uuid4().hex}, index=False),
            )
        )
        deleted = yield from self._erase(user_id)
        return deleted + int(stamp is not None)

    def finish_deletion(self, user_id: str) -> Step[int]:
        """Step: finish the user's interrupted deletion, if there is one; returns the rows it deleted.

        :meth:`load` does this itself; the steps that read the store without
        loading the user (the write log, export, import) call it first.

        Example:
            >>> from langchain_memoryos.pipeline.effects import run_sync, Services
            >>> from langgraph.store.memory import InMemoryStore
            >>> store, repo = InMemoryStore(), MemoryRepository(2)
            >>> store.put(repo.namespace("u", "log"), "1", {"note": "left over"})
            >>> run_sync(repo.finish_deletion("u"), Services(store, None, None))  # type: ignore[arg-type]
            0
            >>> store.put(repo.namespace("u", "deleting"), "tombstone", {"rows": 9})
            >>> run_sync(repo.finish_deletion("u"), Services(store, None, None))  # type: ignore[arg-type]
            1
            >>> store.search(("memoryos", "u"))
            []
        """
        tombstone, _ = self._marks(user_id)
        found = yield StoreBatch((GetOp(tombstone, _TOMBSTONE),))
        if found[0] is None:
            return 0
        return (yield from self._finish_deletion(user_id))

    def _finish_deletion(self, user_id: str) -> Step[int]:
        logger.warning("user %r: finishing an interrupted deletion", user_id)
        return (yield from self._erase(user_id))

    def _erase(self, user_id: str) -> Step[int]:
        """Step: delete the user's rows, then the tombstone and the stamp; returns the rows deleted.

        Each round deletes the rows of the first page of the user's prefix
        (never an offset: a store that pages rows written together in an
        unstable order would skip some), until only the marks are left.
        """
        tombstone, version = self._marks(user_id)
        done: set[tuple[tuple[str, ...], str]] = set()
        while True:
            res = yield StoreBatch((SearchOp(self.namespace(user_id), limit=_PAGE_SIZE),))
            rows = [(it.namespace, it.key) for it in res[0] if it.namespace not in (tombstone, version)]
            if not rows:
                break
            if done.intersection(rows):
                raise RuntimeError(
                    f"rows of user {user_id!r} are still there after their deletion: the store did not delete them, "
                    "or another process rewrites this user without the memory's locks (open the store with "
                    "MemoryOS.from_sqlite or MemoryOS.from_postgres in every process); the user stays marked "
                    "for deletion and the next access tries again."
                )
            done.update(rows)
            yield StoreBatch(tuple(PutOp(ns, key, None) for ns, key in rows))
        yield StoreBatch((PutOp(tombstone, _TOMBSTONE, None), PutOp(version, "v", None)))
        self.invalidate(user_id)
        yield Purge()
        return len(done)
