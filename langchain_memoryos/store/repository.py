"""MemoryRepository: a user's memory in a LangGraph ``BaseStore``.

The namespaces are those of :mod:`~langchain_memoryos.schema.layout`.

Vectors live inside the item values (base64 float32). Each user's vectors are
also held in FAISS indices (:class:`UserState`), a cache built on first use: from
the records, or in a store shared by processes from the user's index snapshot
and write journal (:mod:`~langchain_memoryos.store.snapshot`). Writes are
buffered as ``PutOp``s and flushed in one batch per operation, so on SQL stores
a turn is one transaction.

A user's deletion is all or nothing in effect: its first transaction stores a
tombstone, and until the last row is gone every access to the user finishes
the deletion before doing anything else (see :meth:`MemoryRepository.delete_all`).

How a user is read from the store (its records, or its snapshot and journal,
and rows without a usable vector healed) is :mod:`~langchain_memoryos.store.loading`.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

from langgraph.store.base import GetOp, Item, PutOp, SearchOp

from langchain_memoryos.kernel.effects import ChangeToken, Purge, Step, StoreBatch
from langchain_memoryos.schema import (
    DialoguePage,
)
from langchain_memoryos.schema.layout import (
    _DELETING,
    _TOMBSTONE,
    ROOT,
    decode_label,
    encode_label,
    page_key,
)
from langchain_memoryos.store.cache import UserCache
from langchain_memoryos.store.changes import unchanged_after
from langchain_memoryos.store.loading import every_item, read_records, replay, restore, search_all, version_of
from langchain_memoryos.store.locks import ProcessLocks, UserLease
from langchain_memoryos.store.snapshot import (
    JOURNAL,
    SNAPSHOT,
    SNAPSHOT_EVERY,
)
from langchain_memoryos.store.state import UserState, next_revision
from langchain_memoryos.store.visits import apply_visits

__all__ = [
    "ROOT",
    "MemoryRepository",
    "flush",
    "ProcessLocks",
    "UserLease",
    "UserState",
    "decode_label",
    "encode_label",
    "page_key",
]

logger = logging.getLogger(__name__)

_PAGE_SIZE = 1000


def flush(state: UserState, *, wait: bool = True) -> Step[None]:
    """Step: write the state's buffered operations in one store batch (nothing when there are none).

    The user's pending visits (:mod:`~langchain_memoryos.store.visits`: those
    earlier reads could not write) are applied first and go in the same batch;
    if the batch fails they stay pending. ``wait=False``: a batch that fails at
    once rather than wait for another connection's write lock (a read's visits).

    When the store gives change tokens (:mod:`~langchain_memoryos.store.changes`)
    and this batch was the only write since the state was known current, the
    state stays known current: the next operation on the user needs no read of
    its version stamp.

    Example:
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> from langgraph.store.memory import InMemoryStore
        >>> store, state = InMemoryStore(), UserState(user_id="u", label="u", dimension=2)
        >>> state.save_persona(); run_sync(flush(state), Services(store, None, None))  # type: ignore[arg-type]
        >>> [item.namespace for item in store.search(("memoryos",))], state.pending
        ([('memoryos', 'u', 'persona')], [])
    """
    pending = state.pending_visits
    queued = pending.take(state.user_id) if pending is not None else []
    apply_visits(state, queued)  # visits earlier reads could not write go with this batch (see store/visits.py)
    ops = state.take_ops()
    if not ops:
        return
    before = yield ChangeToken()
    known, state.current_at = state.current_at, None  # unknown while the batch runs (or if it fails)
    try:
        yield StoreBatch(ops, wait=wait)
    except BaseException:
        if pending is not None:
            pending.put_back(state.user_id, queued)
        raise
    after = yield ChangeToken()
    if known is not None and known == before and unchanged_after(before, after):
        state.current_at = after


class MemoryRepository:
    """The memory's store layout, per-user caches and per-user write locks.

    Args:
        dimension: the embedding dimension.
        root: the memory's scope, the namespace every user's namespaces start with
            (:func:`~langchain_memoryos.schema.layout.scope_root`).
        cache: the loaded users and the lock table (default: this repository's own,
            :class:`~langchain_memoryos.store.cache.UserCache`).

    Example:
        >>> repo = MemoryRepository(384)
        >>> repo.namespace("a.b@x.com", "pages")
        ('memoryos', 'a%2Eb@x%2Ecom', 'pages')
        >>> MemoryRepository(384, root=("app", "%agent", "coach")).namespace("u")
        ('app', '%agent', 'coach', 'u')
    """

    def __init__(
        self,
        dimension: int,
        *,
        locks: ProcessLocks | None = None,
        shared: bool = False,
        embed_chars: int = 8000,
        root: tuple[str, ...] = (ROOT,),
        chain_gap_seconds: float | None = None,
        snapshots: bool = True,
        cache: UserCache | None = None,
    ) -> None:
        self.dimension = dimension
        self.root = root
        self.chain_gap_seconds = chain_gap_seconds
        #: in a shared store, load users from their snapshot and journal, and write both (see store/snapshot.py)
        self.snapshots = snapshots
        #: a process writes a new snapshot of a user after this many of the user's journal rows
        self.snapshot_every = SNAPSHOT_EVERY
        self.embed_chars = embed_chars
        self.shared = shared or locks is not None
        self._process_locks = locks
        #: the loaded users (an LRU bounded in bytes) and the lock table; shared by the memories over one
        #: ``InMemoryStore`` object (see :mod:`~langchain_memoryos.store.cache`)
        self.cache = cache if cache is not None else UserCache()
        self._states = self.cache.states
        #: users whose next load rebuilds them from their records (:meth:`invalidate`)
        self._from_records = self.cache.from_records
        #: segment visits reads could not write yet, applied with the user's next flush (store/visits.py)
        self.visits = self.cache.visits
        #: a read-only repository's loads write nothing, now or later: an interrupted deletion is left as it is
        #: (the state says ``deletion_interrupted``), records healed in memory are not buffered for a rewrite,
        #: and neither kind of state is cached (the inspector, ``memoryos serve`` without ``--allow-edit``)
        self.read_only = False

    def namespace(self, user_id: str, *parts: str) -> tuple[str, ...]:
        """The namespace ``(*root, <encoded user>, *parts)``.

        Example:
            >>> MemoryRepository(2).namespace("u")
            ('memoryos', 'u')
        """
        return (*self.root, encode_label(user_id), *parts)

    # -- locks ---------------------------------------------------------------
    def lease(self, user_id: str) -> UserLease:
        """Take the user's write lock (blocking) as a lease that may outlive a call (a graph run).

        Example:
            >>> import threading
            >>> repo, order = MemoryRepository(2), []
            >>> lease = repo.lease("u")
            >>> other = threading.Thread(target=lambda: (repo.lease("u").release(), order.append("second")))
            >>> other.start(); order.append("first"); lease.release(); other.join()  # the other waits for the lease
            >>> order
            ['first', 'second']
        """
        release_thread = self.cache.locks.acquire(user_id)
        try:
            release = self._with_process_lock(release_thread, self._acquire_process_lock(user_id))
        except BaseException:
            release_thread()
            raise
        return UserLease(self._noting(user_id, release), self._invalidator(user_id))

    def _noting(self, user_id: str, release: Callable[[], None]) -> Callable[[], None]:
        """``release``, after noting that the user may have changed (a load that started before caches nothing)."""

        def noted() -> None:
            self.cache.changed(user_id)
            self._states.refresh(user_id)  # the write may have grown the user: its size estimate follows
            release()

        return noted

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
        locks = self.cache.locks
        release_loop = await locks.aacquire_loop(user_id)
        try:
            release_thread = locks.try_acquire(user_id)
            if release_thread is None:
                release_thread = await asyncio.to_thread(locks.acquire, user_id)
        except BaseException:
            release_loop()
            raise
        try:
            process = await asyncio.to_thread(self._process_locks.acquire, user_id) if self._process_locks else None
        except BaseException:
            release_thread()
            release_loop()
            raise

        def release() -> None:
            if process is not None:
                process()
            release_thread()
            release_loop()

        return UserLease(self._noting(user_id, release), self._invalidator(user_id))

    def _invalidator(self, user_id: str) -> Callable[[], None]:
        return lambda: self.evict(user_id)

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
        """Forget the cached state of a user: the next load rebuilds it from its records (not from its snapshot).

        For a store changed under the memory (an import, rows written by hand).

        Example:
            >>> repo = MemoryRepository(2); repo.install(UserState(user_id="u", label="u", dimension=2))
            >>> repo.invalidate("u"); repo.cached("u") is None
            True
        """
        self._states.pop(user_id, None)
        self._from_records.add(user_id)
        self.cache.changed(user_id)

    def evict(self, user_id: str) -> None:
        """Forget the cached state of a user: the next load takes the usual way (snapshot and journal, or records).

        What a failed write does: its half-changed state is dropped.

        Example:
            >>> repo = MemoryRepository(2); repo.install(UserState(user_id="u", label="u", dimension=2))
            >>> repo.evict("u"); repo.cached("u") is None
            True
        """
        self._states.pop(user_id, None)
        self.cache.changed(user_id)

    def load(self, user_id: str, *, from_records: bool = False) -> Step[UserState]:
        """Step: the user's state, loaded from the store on first use.

        A user whose deletion was interrupted (its tombstone is there) is not
        loaded: the deletion is finished first and the user starts empty
        (``state.completed_deletion`` counts the rows it deleted). In a store
        shared by processes, a cached state is used only while the user's
        version stamp is unchanged, and a new process loads the user from its
        index snapshot and the journal since (:mod:`~langchain_memoryos.store.snapshot`);
        ``from_records=True`` rebuilds it from its records whatever the cache
        and the snapshot hold (``check`` and ``repair`` judge what the store holds).

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> from langchain_memoryos.kernel.effects import run_sync
            >>> m = MemoryOS(); _ = m.add_turn("I live in Oslo.", "Nice.", user_id="u")
            >>> fresh = MemoryRepository(m.repository.dimension)  # a new process's repository over the same store
            >>> st = run_sync(fresh.load("u"), m._services)
            >>> [p.user_input for pages in st.stm.values() for p in pages], fresh.cached("u") is st
            (['I live in Oslo.'], True)
        """
        from_records = from_records or user_id in self._from_records
        state = None if from_records else self._states.get(user_id)
        if state is not None:
            if not self.shared:
                return state
            token = yield ChangeToken()
            if token is not None and token == state.current_at:
                return state  # nothing written to the store since the state was known current: no stamp to read
            stamp = yield StoreBatch((GetOp(state.ns("version"), "v"),))
            current = version_of(stamp[0])
            if current == state.version:
                state.current_at = token
                return state  # no other process wrote since this cache was built
            if self.snapshots and current is not None and not state.pending:
                # another process wrote: apply what its flushes changed, if the journal links the two versions
                if (yield from replay(state, current, state)):
                    state.revision = next_revision()  # a writer working on a copy of the old state must run again
                    return state
        started = self.cache.now()  # before the first read: a change after it means what is read may be old
        label = encode_label(user_id)
        state = UserState(user_id=user_id, label=label, dimension=self.dimension, shared=self.shared, root=self.root)
        state.pending_visits = self.visits
        state.chain_gap = self.chain_gap_seconds
        state.snapshot_every = self.snapshot_every if self.snapshots else 0
        marks = (GetOp(state.ns(_DELETING), _TOMBSTONE), GetOp(state.ns("version"), "v"))
        snapshots = self.shared and self.snapshots
        token = (yield ChangeToken()) if self.shared else None  # before the first read: the state is current as of it
        if snapshots:
            try:
                head = yield StoreBatch((*marks, GetOp(state.ns(SNAPSHOT), "state")))
            except ValueError as exc:  # a row the store cannot parse (SQLite: JSON text cut or edited)
                logger.warning("user %r: a stored row cannot be read (%s): the user is rebuilt", user_id, exc)
                head = [*(yield StoreBatch(marks)), None]
        else:
            head = yield StoreBatch(marks)
        if head[0] is not None and self.read_only:  # shown as it is: the next access with writes finishes it
            state.deletion_interrupted = True
            return state
        if head[0] is not None:  # an interrupted deletion: finish it, the user starts empty
            state.completed_deletion = yield from self._finish_deletion(user_id)
            return self._keep(state, started, from_records)
        state.version = version_of(head[1])
        state.current_at = token
        if snapshots and state.version is not None and not from_records:
            restored = yield from restore(state, head[2])
            if restored is not None:
                restored.current_at = token
                return self._keep(restored, started, from_records)
        state.snapshot_due = snapshots  # rebuilt from the records: the next flush saves a snapshot
        yield from read_records(state, self.embed_chars)
        if self.read_only and state.load_problems:  # healed for this read only: no rewrite buffered, not cached
            state.take_ops()
            return state
        self._from_records.discard(user_id)
        return self._keep(state, started, from_records)

    def _keep(self, state: UserState, started: int, replace: bool) -> UserState:
        """Cache a state just loaded (read from the store from tick ``started`` on); the state to use.

        A state whose user was written (or dropped) while it was read is used
        for this operation only: what it read may be older than the write. In
        a store without version checks (``InMemoryStore``), a state another
        thread cached meanwhile is the one to use (a writer may be changing
        it), unless ``replace`` (``check`` and ``repair`` judge the records).
        """
        if self.cache.changed_since(state.user_id, started):
            return state
        if self.shared or replace:
            self._states[state.user_id] = state
            return state
        return self._states.setdefault(state.user_id, state)

    def load_thread(self, state: UserState, thread_id: str) -> Step[list[DialoguePage]]:
        """Step: a thread's STM pages, oldest first (loaded with the user's state).

        Example:
            >>> from langchain_memoryos.kernel.effects import Services, run_sync
            >>> s = UserState(user_id="u", label="u", dimension=2)
            >>> s.stm["t"] = [DialoguePage(id="p", user_input="hi", agent_response="", thread_id="t")]
            >>> repo, services = MemoryRepository(2), Services(None, None, None)  # type: ignore[arg-type]
            >>> [p.id for p in run_sync(repo.load_thread(s, "t"), services)]
            ['p']
            >>> run_sync(repo.load_thread(s, "new"), services), sorted(s.stm)  # a new thread starts empty
            ([], ['new', 't'])
        """
        return state.stm.setdefault(thread_id, [])
        yield  # pragma: no cover - makes this a generator like every step

    def search_all(self, namespace: tuple[str, ...], *, exact: bool = True) -> Step[list[Item]]:
        """Step: every item of a namespace (``exact=False``: and of its sub-namespaces).

        Example:
            >>> from langchain_memoryos.kernel.effects import Services, run_sync
            >>> from langgraph.store.memory import InMemoryStore
            >>> store = InMemoryStore(); store.put(("a",), "k", {}); store.put(("a", "b"), "k", {})
            >>> services = Services(store, None, None)  # type: ignore[arg-type]
            >>> [len(run_sync(MemoryRepository(2).search_all(("a",), exact=e), services)) for e in (True, False)]
            [1, 2]
        """
        return (yield from search_all(namespace, exact=exact))

    def all_items(self, user_id: str) -> Step[list[Item]]:
        """Step: every stored item of a user, in every namespace.

        Example:
            >>> from langchain_memoryos.kernel.effects import Services, run_sync
            >>> from langgraph.store.memory import InMemoryStore
            >>> store = InMemoryStore(); store.put(("memoryos", "u", "pages"), "p", {})
            >>> store.put(("memoryos", "u2", "pages"), "p", {})
            >>> [it.namespace for it in run_sync(MemoryRepository(2).all_items("u"), Services(store, None, None))]
            [('memoryos', 'u', 'pages')]
        """
        return (yield from every_item(self.namespace(user_id)))

    def _marks(self, user_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The namespaces of the user's tombstone and version stamp."""
        return self.namespace(user_id, _DELETING), self.namespace(user_id, "version")

    def delete_all(self, user_id: str) -> Step[int]:
        """Step: delete every item of a user in every namespace; returns the count.

        A deletion that has started always finishes. Its first transaction
        stores a tombstone for the user and a new version stamp (so other
        processes drop their cached state of the user); the rows then go in
        batches of up to 1,000, the tombstone and the stamp last, and the store is
        purged (:class:`~langchain_memoryos.kernel.effects.Purge`). If the deletion is
        interrupted (a crash, ``kill -9``, a store error), every later access to
        the user — :meth:`load` (so any read, write, ``check`` or ``repair``),
        :meth:`finish_deletion`, or ``delete_all`` again — finishes it first: a
        half-deleted user is never seen and never rebuilt from what is left.

        Example:
            >>> from langchain_memoryos.kernel.effects import run_sync, Services
            >>> from langgraph.store.memory import InMemoryStore
            >>> store, repo = InMemoryStore(), MemoryRepository(2)
            >>> services = Services(store, None, None)  # type: ignore[arg-type]
            >>> store.put(repo.namespace("u", "log"), "1", {"note": "secret"})
            >>> run_sync(repo.delete_all("u"), services), store.search(("memoryos", "u"))
            (1, [])
        """
        tombstone, version = self._marks(user_id)
        (first,) = yield StoreBatch((SearchOp(self.namespace(user_id), limit=1),))
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
        return deleted  # the records, as export_user lists them: not the version stamp

    def finish_deletion(self, user_id: str) -> Step[int]:
        """Step: finish the user's interrupted deletion, if there is one; returns the rows it deleted.

        :meth:`load` does this itself; the steps that read the store without
        loading the user (the write log, export, import) call it first.

        Example:
            >>> from langchain_memoryos.kernel.effects import run_sync, Services
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
        if found[0] is None or self.read_only:  # a read-only repository leaves it to an access that may write
            return 0
        return (yield from self._finish_deletion(user_id))

    def _finish_deletion(self, user_id: str) -> Step[int]:
        logger.warning("user %r: finishing an interrupted deletion", user_id)
        return (yield from self._erase(user_id))

    def _erase(self, user_id: str) -> Step[int]:
        """Step: delete the user's rows, then the tombstone and the stamp; returns the records deleted.

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
        self.visits.drop(user_id)  # a deleted user's visits are never applied (to a new user of the same id)
        yield Purge()
        # the rows counted are the user's records: not the index snapshot and journal derived from them, nor the
        # id row of a user under a hash label (schema/layout.py)
        at = len(self.namespace(user_id))
        return sum(1 for ns, _ in done if ns[at : at + 1] not in ((SNAPSHOT,), (JOURNAL,), ("id",)))
