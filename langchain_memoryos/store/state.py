"""One user's memory in process: the records, their derived indices (FAISS, BM25) and the write buffer."""

from __future__ import annotations

import copy
import itertools
import logging
import uuid
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import Op, PutOp

from langchain_memoryos.index.chain import ChainWindows
from langchain_memoryos.index.lexical import LexicalIndex
from langchain_memoryos.index.vector_index import Vector, VectorIndex, encode_vector
from langchain_memoryos.kernel.controller import ControllerUsage
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
from langchain_memoryos.schema.layout import ROOT, encode_label, escape_id, is_hash_label
from langchain_memoryos.store.indices import DerivedIndices
from langchain_memoryos.store.snapshot import JOURNAL, SNAPSHOT, SNAPSHOT_EVERY, STATE_PARTS, encode_snapshot
from langchain_memoryos.store.visits import PendingVisits

__all__ = ["UserState", "next_revision"]

logger = logging.getLogger(__name__)

#: Revisions of cached user states: every load and every flushed write takes the next one, so a writer that
#: worked on a copy can tell, at commit, whether the user moved since it took the copy.
_revisions = itertools.count(1)


def next_revision() -> int:
    """A new revision number (see :attr:`UserState.revision`).

    Example:
        >>> next_revision() < next_revision()
        True
    """
    return next(_revisions)


@dataclass
class UserState:
    """One user's memory in process: the records, their derived index cache (:attr:`indices`), a write buffer.

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
    pages: MutableMapping[str, DialoguePage] = field(default_factory=dict)
    segments: dict[str, Segment] = field(default_factory=dict)
    facts: dict[str, MutableMapping[str, MemoryRecord]] = field(default_factory=lambda: {"user": {}, "agent": {}})
    persona: Persona = field(default_factory=Persona)
    persona_stored: bool = False
    stm: dict[str, list[DialoguePage]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    pending: list[Op] = field(default_factory=list)
    shared: bool = False
    version: str | None = None
    #: the store's change token when this state was last known to be the stored one (:mod:`~.changes`)
    current_at: tuple[int, int] | None = None
    load_problems: list[str] = field(default_factory=list)
    revision: int = field(default_factory=next_revision)
    #: rows of an interrupted deletion that loading this user deleted (0 normally)
    completed_deletion: int = 0
    #: a read-only load found the user's deletion interrupted and left it so: the state is empty
    deletion_interrupted: bool = False
    #: the journal rows (versions) written since the user's snapshot: a new snapshot deletes them
    journal: list[str] = field(default_factory=list)
    #: write a snapshot with the next flush (set by a load that rebuilt the user or replayed a long journal)
    snapshot_due: bool = False
    #: the chain windows' gap, to build them for a snapshot when no read has (``None``: not in the snapshot)
    chain_gap: float | None = None
    #: a new snapshot after this many journal rows (0: neither journal nor snapshots; see :mod:`~.snapshot`)
    snapshot_every: int = SNAPSHOT_EVERY
    #: the memory's scope (:func:`~langchain_memoryos.schema.layout.scope_root`)
    root: tuple[str, ...] = (ROOT,)
    #: the repository's visits not written yet (:mod:`~.visits`): the next flush of this user applies them
    pending_visits: PendingVisits | None = field(default=None, repr=False)
    #: the user's ``"id"`` row is known stored (a user under a hash label keeps its id there; see schema/layout.py)
    id_stored: bool = False
    indices: DerivedIndices = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.indices = DerivedIndices(self.dimension)

    def blank(self) -> UserState:
        """An empty state of the same user, scope and dimension (what a snapshot is restored into).

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2, shared=True); s.meta["seq"] = 3
            >>> e = s.blank()
            >>> (e.user_id, e.dimension, e.shared, e.meta), e.revision > s.revision
            (('u', 2, True, {}), True)
        """
        return UserState(
            user_id=self.user_id, label=self.label, dimension=self.dimension, shared=self.shared, root=self.root
        )

    # -- the derived index cache (store/indices.py) ------------------------------
    @property
    def page_index(self) -> VectorIndex:
        """FAISS index of the MTM pages."""
        return self.indices.pages

    @property
    def segment_index(self) -> VectorIndex:
        """FAISS index of the segments."""
        return self.indices.segments

    @property
    def fact_index(self) -> dict[str, VectorIndex]:
        """FAISS index of the facts, per kind."""
        return self.indices.facts

    @property
    def stm_index(self) -> VectorIndex:
        """FAISS index of every thread's STM pages."""
        return self.indices.stm

    @property
    def stm_vectors(self) -> dict[str, Vector]:
        """The STM pages' vectors, by page id."""
        return self.indices.stm_vectors

    @property
    def lexicon(self) -> LexicalIndex:
        """BM25 index over every page (MTM and every thread's STM), built on first use.

        Example:
            >>> import numpy as np
            >>> from langchain_memoryos.index.lexical import tokenize
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_page(DialoguePage(id="p", user_input="pottery class", agent_response=""),
            ...            np.ones(2, dtype=np.float32))
            >>> [k for k, _ in s.lexicon.search(tokenize("pottery"), 3)]
            ['p']
        """
        every = itertools.chain(self.pages.values(), (p for pages in self.stm.values() for p in pages))
        return self.indices.lexicon(every)  # the pages are read only when the index is built

    def chain(self, gap_seconds: float) -> ChainWindows:
        """The dialogue-chain windows over every page (MTM and every thread's STM), built on first use.

        Example:
            >>> import numpy as np
            >>> s = UserState(user_id="u", label="u", dimension=2); s.stm["t"] = []
            >>> for i in "ab":
            ...     s.stm_append(DialoguePage(id=i, user_input="x", agent_response="", thread_id="t"),
            ...                  np.ones(2, dtype=np.float32))
            >>> s.chain(1800).members(2, "b")
            ('a', 'b')
        """

        def every_page() -> list[tuple[DialoguePage, Vector]]:
            every = [(p, self.page_index.get(p.id)) for p in self.pages.values()]
            return every + [(p, self.stm_vectors[p.id]) for pages in self.stm.values() for p in pages]

        return self.indices.chain(every_page, gap_seconds)

    # -- namespaces ----------------------------------------------------------
    def ns(self, *parts: str) -> tuple[str, ...]:
        """The namespace ``(*root, <user>, *parts)`` (``root`` is ``("memoryos",)`` by default).

        Example:
            >>> UserState(user_id="a.b", label="a%2Eb", dimension=2).ns("pages")
            ('memoryos', 'a%2Eb', 'pages')
        """
        return (*self.root, self.label, *parts)

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
            >>> s = UserState(user_id="u", label="u", dimension=2); s.save_persona()
            >>> [op.namespace for op in s.take_ops()], s.take_ops()
            ([('memoryos', 'u', 'persona')], ())
        """
        if self.pending and not self.id_stored and is_hash_label(self.label):
            self._put(self.ns("id"), "id", {"id": escape_id(self.user_id)})  # list_users reads the id back from it
            self.id_stored = True
        if self.pending and self.shared:
            self._stamp()
        if self.pending:
            self.load_problems.clear()  # the rewrites of records loaded without a usable vector go with this flush
            self.revision = next_revision()
        ops, self.pending = tuple(self.pending), []
        return ops

    def _stamp(self) -> None:
        """A new version stamp, and the journal row or a new snapshot at it (see :mod:`~.snapshot`)."""
        previous, self.version = self.version, uuid.uuid4().hex
        at = len(self.ns())  # where the part after the user's label starts
        changed = list(
            dict.fromkeys(
                (*op.namespace[at:], op.key)
                for op in self.pending
                if isinstance(op, PutOp) and len(op.namespace) > at and op.namespace[at] in STATE_PARTS
            )
        )
        self._put(self.ns("version"), "v", {"v": self.version})
        if self.snapshot_every <= 0:
            return
        if (self.snapshot_due or len(self.journal) + 1 >= self.snapshot_every) and not self.load_problems:
            if self.chain_gap is not None:
                self.chain(self.chain_gap)
            self._put(self.ns(SNAPSHOT), "state", encode_snapshot(self))
            for key in self.journal:
                self._put(self.ns(JOURNAL), key, None)
            self.journal, self.snapshot_due = [], False
        else:
            self._put(self.ns(JOURNAL), self.version, {"prev": previous, "keys": [list(c) for c in changed]})
            self.journal.append(self.version)

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

    def count_usage(self, judgement: str, usage: ControllerUsage) -> None:
        """Add one judgement's model usage to the user's counters (``MemoryOS.stats()``), in total and per type.

        Example:
            >>> from langchain_memoryos.kernel.controller import ControllerUsage
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.count_usage("fuse", ControllerUsage(llm_calls=2, llm_tokens=30, fallback=True))
            >>> s.stats().llm_tokens, s.stats().llm_usage["fuse"]
            (30, {'calls': 2, 'tokens': 30, 'fallbacks': 1})
        """
        calls, tokens, fallback = usage.llm_calls, usage.llm_tokens, usage.fallback
        if not (calls or tokens or fallback):
            return
        self.meta["llm_calls"] = int(self.meta.get("llm_calls", 0)) + calls
        self.meta["llm_tokens"] = int(self.meta.get("llm_tokens", 0)) + tokens
        by = self.meta.setdefault("llm_usage", {}).setdefault(judgement, {"calls": 0, "tokens": 0, "fallbacks": 0})
        by["calls"] += calls
        by["tokens"] += tokens
        by["fallbacks"] += int(fallback)
        self.save_meta()

    def chain_tail(self, thread_id: str) -> str | None:
        """The id of the thread's newest MTM page (the dialogue chain's tail), if any.

        Tails are kept in ``meta["chain_tails"]`` by thread id; a thread id
        with NUL (which PostgreSQL's JSON cannot hold) in
        ``meta["chain_tail_labels"]`` by its escape (:func:`~langchain_memoryos.schema.layout.escape_id`).

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.set_chain_tail("t", "p1"); s.set_chain_tail("a" + chr(0), "p2")
            >>> s.chain_tail("t"), s.chain_tail("a" + chr(0)), s.meta["chain_tail_labels"]
            ('p1', 'p2', {'a%00': 'p2'})
        """
        if "\x00" in thread_id:
            tail = self.meta.get("chain_tail_labels", {}).get(escape_id(thread_id))
        else:
            tail = self.meta.get("chain_tails", {}).get(thread_id)
        return str(tail) if tail is not None else None

    def set_chain_tail(self, thread_id: str, page_id: str) -> None:
        """Make ``page_id`` the thread's chain tail (see :meth:`chain_tail`; the meta row goes with the next flush).

        Example:
            >>> s = UserState(user_id="u", label="u", dimension=2); s.set_chain_tail("t", "p1")
            >>> s.meta["chain_tails"]
            {'t': 'p1'}
        """
        if "\x00" in thread_id:
            self.meta.setdefault("chain_tail_labels", {})[escape_id(thread_id)] = page_id
        else:
            self.meta.setdefault("chain_tails", {})[thread_id] = page_id
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
            >>> import numpy as np
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
        self.indices.page_added(page, vector)
        value = page.to_dict()
        value["vector"] = encode_vector(vector)
        value["seq"] = seq
        self._put(self.stm_ns(page.thread_id), page.id, value)

    def stm_pop_oldest(self, thread_id: str) -> tuple[DialoguePage, Vector]:
        """Remove and return the oldest page of a thread's STM.

        Example:
            >>> import numpy as np
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
            >>> import numpy as np
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> page = DialoguePage(id="p", user_input="hi", agent_response="", thread_id="t")
            >>> s.stm_append(page, np.zeros(2, dtype=np.float32)); _ = s.take_ops()
            >>> page.meta = "greeting"; s.stm_update(page)
            >>> [(op.namespace, op.key, op.value["meta"], op.value["seq"]) for op in s.take_ops()]
            [(('memoryos', 'u', 'stm', 't'), 'p', 'greeting', 1)]
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
        self.indices.pages_removed(removed)
        for pid in removed:
            self.stm_vectors.pop(pid, None)
            self._put(self.stm_ns(thread_id), pid, None)
        self.stm[thread_id] = []
        return removed

    # -- MTM -----------------------------------------------------------------
    def put_page(self, page: DialoguePage, vector: Vector) -> None:
        """Store a mid-term page.

        Example:
            >>> import numpy as np
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_page(DialoguePage(id="p", user_input="a", agent_response="b"), np.ones(2, dtype=np.float32))
            >>> len(s.page_index)
            1
        """
        self.pages[page.id] = page
        self.page_index.add(page.id, vector)
        self.indices.page_added(page, vector)
        value = page.to_dict()
        value["vector"] = encode_vector(vector)
        self._put(self.ns("pages"), page.id, value)

    def delete_pages(self, page_ids: list[str]) -> None:
        """Delete mid-term pages.

        Example:
            >>> import numpy as np
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_page(DialoguePage(id="p", user_input="a", agent_response="b"), np.ones(2, dtype=np.float32))
            >>> s.delete_pages(["p", "x"])
            >>> list(s.pages), len(s.page_index), [(op.key, op.value is None) for op in s.take_ops()]
            ([], 0, [('p', False), ('p', True), ('x', True)])
        """
        self.page_index.remove(page_ids)
        self.indices.pages_removed(page_ids)
        for pid in page_ids:
            self.pages.pop(pid, None)
            self._put(self.ns("pages"), pid, None)

    def put_segment(self, segment: Segment, vector: Vector | None = None) -> None:
        """Store a segment (with its embedding when given or already cached).

        Example:
            >>> import numpy as np
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
            >>> import numpy as np
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
            >>> import numpy as np
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.put_fact(MemoryRecord(id="f", summary="x"), np.ones(2, dtype=np.float32)); s.delete_fact("user", "f")
            >>> list(s.facts["user"]), len(s.fact_index["user"]), [(op.key, op.value is None) for op in s.take_ops()]
            ([], 0, [('f', False), ('f', True)])
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
