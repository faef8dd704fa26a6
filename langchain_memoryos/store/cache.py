"""The loaded users of a memory: an LRU cache bounded in bytes, and per-user lock tables that hold no idle entry.

* :class:`UserStates` keeps the users a memory has loaded, least recently used
  first, and drops the oldest while their estimated size is over
  ``MemoryOSConfig.max_cache_bytes`` (never a user whose write lock is held,
  never the user just used). A dropped user is loaded again from the store on
  its next use. The size of a user is estimated from the number of its records
  and the length of its recent pages (:func:`estimate_bytes`): counting is O(1)
  per access, and the pages are measured again only when the user's record
  count has doubled (or halved) since they last were.
* :class:`LockTable` holds the per-user write locks: a thread lock per user and
  an ``asyncio.Lock`` per user and event loop, each entry dropped as soon as
  nobody holds or waits for it, and keyed by a weak reference to its loop, so
  a closed loop is never kept alive by the table.
* :class:`UserCache` is both, plus what a load needs to know to install what it
  read (:meth:`UserCache.changed_since`). Every ``MemoryOS`` over one
  ``InMemoryStore`` object shares one (:func:`shared_cache`).

Example:
    >>> cache = UserCache(max_bytes=10**6)
    >>> release = cache.locks.acquire("ana")
    >>> cache.locks.held("ana"), len(cache.locks)
    (True, 1)
    >>> release(); cache.locks.held("ana"), len(cache.locks)
    (False, 0)
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from langchain_memoryos.store.state import UserState
from langchain_memoryos.store.visits import PendingVisits

__all__ = ["DEFAULT_CACHE_BYTES", "LockTable", "UserCache", "UserStates", "estimate_bytes", "shared_cache"]

#: ``MemoryOSConfig.max_cache_bytes`` by default: 256 MiB of loaded users per memory (per ``InMemoryStore``).
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024

#: What a loaded user costs besides its records (its five FAISS indices, maps, the state itself).
BASE_BYTES = 12_000
#: What one record (a page, a segment or a fact) costs besides its text and its vectors (its object, FAISS
#: ids, BM25 postings, chain windows); with ``16 * dimension`` for its vectors (calibrated by RSS: see
#: docs/architecture.md, "Memory bounds").
RECORD_BYTES = 2_000
#: What one character of a record's text costs (the text, its tokens and words, the facts read off it).
CHAR_BYTES = 16

L = TypeVar("L")


def _records(state: UserState) -> int:
    facts = state.facts
    return len(state.pages) + len(state.stm_vectors) + len(state.segments) + len(facts["user"]) + len(facts["agent"])


def _chars_per_record(state: UserState) -> float:
    """The mean text length of the user's STM pages: a sample of its pages (always decoded, a few per thread)."""
    total = count = 0
    for pages in state.stm.values():
        for page in pages:
            total += len(page.user_input) + len(page.agent_response)
            count += 1
    return total / count if count else 200.0


def estimate_bytes(state: UserState, chars_per_record: float | None = None) -> int:
    """An estimate of the memory a loaded user takes: records × (fixed cost + vectors + text).

    Args:
        state: the user.
        chars_per_record: the mean text length of a record (default: measured on its STM pages).

    Example:
        >>> import numpy as np
        >>> from langchain_memoryos.schema import DialoguePage
        >>> s = UserState(user_id="u", label="u", dimension=384)
        >>> estimate_bytes(s) == BASE_BYTES
        True
        >>> s.put_page(DialoguePage(id="p", user_input="hi", agent_response=""), np.ones(384, np.float32))
        >>> estimate_bytes(s, chars_per_record=100) < estimate_bytes(s, chars_per_record=10_000)
        True
    """
    chars = _chars_per_record(state) if chars_per_record is None else chars_per_record
    per_record = RECORD_BYTES + 4 * 4 * state.dimension + CHAR_BYTES * chars  # ~4 float32 copies of its vector
    return int(BASE_BYTES + _records(state) * per_record)


class _Cached:
    __slots__ = ("state", "bytes", "chars", "measured")

    def __init__(self, state: UserState) -> None:
        self.state = state
        self.measured = _records(state)
        self.chars = _chars_per_record(state)
        self.bytes = estimate_bytes(state, self.chars)

    def refresh(self) -> int:
        """Re-estimate (O(1); the pages measured again when the record count doubled or halved); the change."""
        records = _records(self.state)
        if records > 2 * self.measured + 8 or 2 * records + 8 < self.measured:
            self.chars, self.measured = _chars_per_record(self.state), records
        before, self.bytes = self.bytes, estimate_bytes(self.state, self.chars)
        return self.bytes - before


class UserStates:
    """The loaded users, least recently used first, bounded by their estimated size.

    Args:
        max_bytes: the bound (the most recently used user stays even when it alone is larger).
        held: whether a user's write lock is held (such a user is never dropped: its writer works on it).

    Example:
        >>> states = UserStates(max_bytes=3 * BASE_BYTES, held=lambda user: False)
        >>> for name in "abcd":
        ...     states[name] = UserState(user_id=name, label=name, dimension=2)
        >>> list(states), states.bytes == 3 * BASE_BYTES
        (['b', 'c', 'd'], True)
        >>> states.get("b") is not None; states["e"] = UserState(user_id="e", label="e", dimension=2)
        True
        >>> list(states)  # "b" was used: "c" was the oldest
        ['d', 'b', 'e']
    """

    def __init__(self, max_bytes: int, held: Callable[[str], bool]) -> None:
        self.max_bytes = max_bytes
        self._held = held
        self._entries: OrderedDict[str, _Cached] = OrderedDict()
        self._guard = threading.Lock()
        #: the estimated size of every cached user
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, user_id: object) -> bool:
        return user_id in self._entries

    def __iter__(self) -> Any:
        return iter(list(self._entries))

    def get(self, user_id: str) -> UserState | None:
        """The user's state (``None`` when not cached); it becomes the most recently used, its size re-estimated."""
        with self._guard:
            entry = self._entries.get(user_id)
            if entry is None:
                return None
            self._entries.move_to_end(user_id)
            self.bytes += entry.refresh()
            self._shrink()
            return entry.state

    def refresh(self, user_id: str) -> None:
        """Re-estimate the user's size (after a write), dropping others if it is now over the bound."""
        with self._guard:
            entry = self._entries.get(user_id)
            if entry is not None:
                self.bytes += entry.refresh()
                self._shrink()

    def __getitem__(self, user_id: str) -> UserState:
        state = self.get(user_id)
        if state is None:
            raise KeyError(user_id)
        return state

    def __setitem__(self, user_id: str, state: UserState) -> None:
        with self._guard:
            self._put(user_id, state)

    def setdefault(self, user_id: str, state: UserState) -> UserState:
        """The cached state if there is one (made the most recent), else ``state``, cached."""
        with self._guard:
            entry = self._entries.get(user_id)
            if entry is not None:
                self._entries.move_to_end(user_id)
                return entry.state
            self._put(user_id, state)
            return state

    def pop(self, user_id: str, default: UserState | None = None) -> UserState | None:
        """Drop the user; its state (or ``default``)."""
        with self._guard:
            entry = self._entries.pop(user_id, None)
            if entry is None:
                return default
            self.bytes -= entry.bytes
            return entry.state

    def _put(self, user_id: str, state: UserState) -> None:
        old = self._entries.pop(user_id, None)
        if old is not None:
            self.bytes -= old.bytes
        entry = self._entries[user_id] = _Cached(state)
        self.bytes += entry.bytes
        self._shrink()

    def _shrink(self) -> None:
        """Drop the least recently used users while over the bound (never the newest, never a held one)."""
        if self.bytes <= self.max_bytes:
            return
        newest = next(reversed(self._entries))
        for user_id in list(self._entries):
            if self.bytes <= self.max_bytes:
                return
            if user_id == newest or self._held(user_id):
                continue
            self.bytes -= self._entries.pop(user_id).bytes


class _Entry(Generic[L]):
    __slots__ = ("lock", "users")

    def __init__(self, lock: L) -> None:
        self.lock = lock
        self.users = 0


class LockTable:
    """Per-user locks: a thread lock per user, an ``asyncio.Lock`` per user and event loop.

    An entry exists while someone holds or waits for its lock, and no longer:
    the table holds as many entries as users being written, and the asyncio
    locks are keyed by a weak reference to their loop (a loop closed and
    collected leaves nothing behind, and a new loop never finds a lock of an
    old one at a reused address).

    Example:
        >>> table = LockTable()
        >>> release = table.acquire("u")
        >>> table.try_acquire("u") is None  # held
        True
        >>> release(); release = table.try_acquire("u"); release(); len(table)
        0
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._threads: dict[str, _Entry[threading.Lock]] = {}
        self._loops: dict[tuple[Hashable, str], _Entry[asyncio.Lock]] = {}

    def __len__(self) -> int:
        return len(self._threads) + len(self._loops)

    def held(self, user_id: str) -> bool:
        """Whether the user's thread lock is held now."""
        entry = self._threads.get(user_id)
        return entry is not None and entry.lock.locked()

    def _enter(self, user_id: str) -> _Entry[threading.Lock]:
        with self._guard:
            entry = self._threads.get(user_id)
            if entry is None:
                entry = self._threads[user_id] = _Entry(threading.Lock())
            entry.users += 1
            return entry

    def _leave(self, user_id: str, entry: _Entry[Any]) -> None:
        with self._guard:
            entry.users -= 1
            if entry.users == 0 and self._threads.get(user_id) is entry:
                del self._threads[user_id]

    def _releaser(self, user_id: str, entry: _Entry[threading.Lock]) -> Callable[[], None]:
        def release() -> None:
            entry.lock.release()
            self._leave(user_id, entry)

        return release

    def acquire(self, user_id: str) -> Callable[[], None]:
        """Take the user's thread lock (blocking); returns its release (call it once)."""
        entry = self._enter(user_id)
        try:
            entry.lock.acquire()
        except BaseException:
            self._leave(user_id, entry)
            raise
        return self._releaser(user_id, entry)

    def try_acquire(self, user_id: str) -> Callable[[], None] | None:
        """Take the user's thread lock if it is free; its release, or ``None``."""
        entry = self._enter(user_id)
        if entry.lock.acquire(blocking=False):
            return self._releaser(user_id, entry)
        self._leave(user_id, entry)
        return None

    async def aacquire_loop(self, user_id: str) -> Callable[[], None]:
        """Take the user's ``asyncio.Lock`` of the running loop; returns its release (callable from any thread)."""
        loop = asyncio.get_running_loop()
        try:
            key: Hashable = (weakref.ref(loop), user_id)
        except TypeError:  # pragma: no cover - a loop without weak references
            key = (id(loop), user_id)
        with self._guard:
            entry = self._loops.get(key)  # type: ignore[call-overload]
            if entry is None:
                entry = self._loops[key] = _Entry(asyncio.Lock())  # type: ignore[index]
            entry.users += 1

        def leave() -> None:
            with self._guard:
                entry.users -= 1
                if entry.users == 0 and self._loops.get(key) is entry:  # type: ignore[call-overload]
                    del self._loops[key]  # type: ignore[arg-type]

        try:
            await entry.lock.acquire()
        except BaseException:
            leave()
            raise

        def release() -> None:
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                entry.lock.release()
            elif not loop.is_closed():
                loop.call_soon_threadsafe(entry.lock.release)
            leave()

        return release


class UserCache:
    """What the memories over one store scope keep in process: the loaded users and the lock table.

    Args:
        max_bytes: the bound of the loaded users' estimated size (``MemoryOSConfig.max_cache_bytes``).
        locks: the lock table (default: a new one).

    Example:
        >>> cache = UserCache(max_bytes=10**6)
        >>> start = cache.now(); cache.changed("u"); cache.changed_since("u", start), cache.changed_since("v", start)
        (True, False)
    """

    #: users whose last change is remembered (a change older than the oldest of them counts for everyone)
    CHANGES_KEPT = 4096

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES, locks: LockTable | None = None) -> None:
        self.locks = locks if locks is not None else LockTable()
        self.states = UserStates(max_bytes, self.locks.held)
        #: users whose next load rebuilds them from their records
        self.from_records: set[str] = set()
        #: segment visits reads could not write yet (:mod:`~langchain_memoryos.store.visits`): shared, like the
        #: loaded users, by the memories over one store
        self.visits = PendingVisits()
        self._clock = itertools.count(1)
        self._now = 0
        self._changes: OrderedDict[str, int] = OrderedDict()
        self._floor = 0
        self._guard = threading.Lock()

    @property
    def max_bytes(self) -> int:
        """The bound of the loaded users' estimated size."""
        return self.states.max_bytes

    def now(self) -> int:
        """The current tick: take it before reading a user from the store (see :meth:`changed_since`)."""
        return self._now

    def changed(self, user_id: str) -> None:
        """Note that the user was written or dropped now (a load that started before must not cache what it read)."""
        with self._guard:
            self._now = tick = next(self._clock)
            self._changes[user_id] = tick
            self._changes.move_to_end(user_id)
            while len(self._changes) > self.CHANGES_KEPT:
                _, oldest = self._changes.popitem(last=False)
                self._floor = max(self._floor, oldest)

    def changed_since(self, user_id: str, tick: int) -> bool:
        """Whether the user may have changed after ``tick`` (:meth:`now` when its load started)."""
        with self._guard:
            return self._changes.get(user_id, self._floor) > tick


#: The caches of the memories over each InMemoryStore object, by scope and dimension (weak on the store).
_SHARED: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], UserCache]] = weakref.WeakKeyDictionary()
#: The lock tables of the memories over each other store object (weak on the store).
_LOCKS: weakref.WeakKeyDictionary[Any, LockTable] = weakref.WeakKeyDictionary()
_REGISTRY = threading.Lock()


def shared_cache(store: Any, key: tuple[Any, ...], max_bytes: int, *, share_states: bool) -> UserCache:
    """The cache of a memory over ``store``: one per store object and ``key`` when ``share_states``.

    Every memory over one store object shares its lock table, so threads that
    write one user through two memories take turns. With ``share_states``
    (an ``InMemoryStore``: the store holds no version a memory could check)
    they share the loaded users too, and behave as one memory; otherwise each
    memory has its own loaded users and checks them against the store.

    Args:
        store: the LangGraph store.
        key: what must match to share loaded users (the scope and the embedding dimension).
        max_bytes: the bound of a new cache (the first memory's ``max_cache_bytes``).
        share_states: share the loaded users.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = InMemoryStore()
        >>> one = shared_cache(store, ("memoryos",), 10**6, share_states=True)
        >>> one is shared_cache(store, ("memoryos",), 10**6, share_states=True)
        True
        >>> other = shared_cache(store, ("app",), 10**6, share_states=True)
        >>> other is one, other.locks is one.locks
        (False, True)
    """
    with _REGISTRY:
        try:
            locks = _LOCKS.get(store)
            if locks is None:
                locks = _LOCKS[store] = LockTable()
        except TypeError:  # a store without weak references: its own cache
            return UserCache(max_bytes)
        if not share_states:
            return UserCache(max_bytes, locks)
        caches = _SHARED.setdefault(store, {})
        cache = caches.get(key)
        if cache is None:
            cache = caches[key] = UserCache(max_bytes, locks)
        return cache
