"""Whose memory and which: the user id of a LangGraph run and the memory over the run's store.

The memory of a node, tool or middleware is the ``MemoryOS`` it was given, or,
when it was given none (or a factory), the one over the store the graph runs
with (``compile(store=...)``, or the store LangGraph Platform provides):
:func:`resolve_memory`, one ``MemoryOS`` per store in a process
(:func:`memory_for_store`), so every node of a graph shares its caches.

Order: the run's ``Runtime`` context (a ``context_schema`` with ``user_id``),
then ``config["configurable"]["user_id"]``, then ``langgraph_user_id``, then the
authenticated user of LangGraph Server (``langgraph_auth_user``). With none of
them the call fails closed: no memory is read or written for an unknown user.

Example:
    >>> resolve_user_id({"configurable": {"user_id": "u1"}})
    'u1'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_memoryos.errors import InvalidInputError, MissingStoreError, MissingUserIdError
from langchain_memoryos.operations.run_config import resolve_agent_id, resolve_thread_id, resolve_user_id

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from langchain_memoryos.memory import MemoryOS

__all__ = [
    "MemoryFactory",
    "MissingStoreError",
    "MissingUserIdError",
    "memory_for_store",
    "resolve_agent_id",
    "resolve_memory",
    "resolve_thread_id",
    "resolve_user_id",
]

#: Builds the memory over a store, e.g. ``lambda store: MemoryOS(store, config=MemoryOSConfig(...))``.
MemoryFactory: TypeAlias = "Callable[[BaseStore], MemoryOS]"

_LOCK = threading.Lock()
_ATTRIBUTE = "_memoryos_memories"
#: memories of stores that take no attribute (kept for the life of the process)
_NO_ATTRIBUTE: dict[int, tuple[Any, dict[Any, Any]]] = {}


def _memories(store: BaseStore) -> dict[Any, MemoryOS]:
    """The memories built over ``store`` (by factory; ``None``: the default), kept with the store itself."""
    try:
        found: dict[Any, MemoryOS] = vars(store).setdefault(_ATTRIBUTE, {})
        return found
    except TypeError:  # a store without __dict__
        return _NO_ATTRIBUTE.setdefault(id(store), (store, {}))[1]


def memory_for_store(store: BaseStore, factory: MemoryFactory | None = None) -> MemoryOS:
    """The ``MemoryOS`` over ``store`` that this process's graphs use: built once per store (and factory).

    ``MemoryOS(store)`` by default. A memory given explicitly to
    ``create_memoryos_agent`` or ``MemoryOSMiddleware`` becomes its store's
    default, so nodes and tools that find the store through the run share it.

    Args:
        store: the LangGraph store.
        factory: builds the memory over the store (default ``MemoryOS(store)``).

    Returns:
        The memory.

    Raises:
        ValueError: the factory built a memory over another store.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = InMemoryStore()
        >>> memory = memory_for_store(store)
        >>> memory.store is store, memory_for_store(store) is memory
        (True, True)
    """
    with _LOCK:
        memories = _memories(store)
        memory = memories.get(factory)
        if memory is None:
            from langchain_memoryos.memory import MemoryOS

            memory = factory(store) if factory is not None else MemoryOS(store)
            if memory.store is not store:
                raise InvalidInputError(
                    "the memory factory must build the memory over the store it is given: "
                    "lambda store: MemoryOS(store, config=...)."
                )
            memories[factory] = memory
        return memory


def share_memory(memory: MemoryOS) -> None:
    """Make ``memory`` the default memory of its store (unless the store has one already)."""
    with _LOCK:
        _memories(memory.store).setdefault(None, memory)


def _current_store() -> BaseStore | None:
    try:
        from langgraph.config import get_store

        return get_store()
    except Exception:  # noqa: BLE001 - outside a run: no store
        return None


def resolve_memory(
    memory: MemoryOS | MemoryFactory | None,
    store: BaseStore | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    context: Any = None,
) -> MemoryOS:
    """The memory a node, tool or middleware uses for this run.

    Args:
        memory: a ``MemoryOS`` (used as it is), a factory, or ``None``: then the
            memory over ``store`` (see :func:`memory_for_store`).
        store: the run's store (default: the current run's, ``langgraph.config.get_store()``).
        config: the run's config (default: the current one), for ``agent_id``.
        context: the run's context (default: the current ``Runtime`` context), for ``agent_id``.

    When the run names an agent (:func:`resolve_agent_id`), the memory is that
    agent's scope of it (``memory.for_agent(agent_id)``).

    Returns:
        The memory.

    Raises:
        MissingStoreError: no memory was given and the run has no store; the message says how to fix it.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = InMemoryStore()
        >>> resolve_memory(None, store) is memory_for_store(store)
        True
    """
    from langchain_memoryos.memory import MemoryOS

    agent = resolve_agent_id(config, context=context)
    if isinstance(memory, MemoryOS):
        return _scoped(memory, agent)
    store = store if store is not None else _current_store()
    if store is None:
        raise MissingStoreError(
            "memoryos: no memory for this run; pass memory=MemoryOS(...), or compile the graph with a store "
            "(graph.compile(store=...), create_memoryos_agent(model, store=...)); LangGraph Platform provides one."
        )
    return _scoped(memory_for_store(store, memory), agent)


def _scoped(memory: MemoryOS, agent: str | None) -> MemoryOS:
    return memory if agent is None or agent == memory.agent_id else memory.for_agent(agent)
