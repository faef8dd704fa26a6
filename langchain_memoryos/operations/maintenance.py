"""Maintenance: check and repair, export and import, deletion (a thread's STM, a whole user).

Every one runs under the user's lock. ``check`` judges what the store holds
(the process's cached copy is dropped first); an export, an import, a write-log
read and ``repair`` first finish an interrupted ``delete_user``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import PutOp

from langchain_memoryos.operations.runtime import Locked, Runtime
from langchain_memoryos.operations.validation import check_import_value, check_thread, check_user
from langchain_memoryos.pipeline.effects import Step, StoreBatch
from langchain_memoryos.store.repository import decode_label, encode_label, flush

__all__ = ["EXPORT_FORMAT", "check", "clear_stm", "delete_user", "export_user", "import_user"]

#: The ``format`` of an :func:`export_user` dump.
EXPORT_FORMAT = "langchain-memoryos/1"


def check(runtime: Runtime, user_id: Any, *, repair: bool) -> Locked[list[str]]:
    """Operation: ``MemoryOS.check`` (the problems found) or ``MemoryOS.repair`` (what was fixed).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="u")
        >>> memory._sync(check(memory._runtime, "u", repair=False))
        []
    """
    from langchain_memoryos.pipeline.invariants import check_state
    from langchain_memoryos.pipeline.repair import repair_state

    user = check_user(user_id)
    repository, config = runtime.repository, runtime.config

    def step() -> Step[list[str]]:
        # judge what the store holds: its records, not this process's cache nor the user's index snapshot
        state = yield from repository.load(user, from_records=True)
        if not repair:
            return check_state(state, config)
        fixes = repair_state(state, config)
        if state.completed_deletion:
            fixes.insert(0, f"user: finished an interrupted delete_user ({state.completed_deletion} rows deleted)")
        yield from flush(state)
        return fixes

    return Locked(user, step())


def clear_stm(runtime: Runtime, user_id: Any, thread_id: Any) -> Locked[int]:
    """Operation: ``MemoryOS.clear_stm`` (how many of the thread's short-term pages were removed).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="u", thread_id="a")
        >>> memory._sync(clear_stm(memory._runtime, "u", "a")), memory.list_threads(user_id="u")
        (1, [])
    """
    user = check_user(user_id)
    thread = check_thread(thread_id)
    repository = runtime.repository

    def step() -> Step[int]:
        state = yield from repository.load(user)
        yield from repository.load_thread(state, thread)
        removed = state.stm_clear(thread)
        yield from flush(state)
        return len(removed)

    return Locked(user, step())


def export_user(runtime: Runtime, user_id: Any) -> Locked[dict[str, Any]]:
    """Operation: ``MemoryOS.export_user`` (everything stored for the user, as JSON-compatible data).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.set_agent_profile("A coach.", user_id="u")
        >>> [row["namespace"] for row in memory._sync(export_user(memory._runtime, "u"))["items"]]
        [['persona']]
    """
    user = check_user(user_id)
    repository = runtime.repository

    def step() -> Step[dict[str, Any]]:
        yield from repository.finish_deletion(user)
        items = yield from repository.all_items(user)
        depth = len(repository.namespace(user))  # rows are exported relative to the user's namespace
        rows = [
            {"namespace": [decode_label(x) for x in it.namespace[depth:]], "key": it.key, "value": it.value}
            for it in sorted(items, key=lambda it: (it.namespace, it.key))
            if it.namespace[depth : depth + 1] not in (("snapshot",), ("journal",))  # derived: never exported
        ]
        return {"format": EXPORT_FORMAT, "user_id": user, "items": rows}

    return Locked(user, step())


def import_user(runtime: Runtime, data: Mapping[str, Any], user_id: str | None) -> Locked[int]:
    """Operation: ``MemoryOS.import_user`` (every item checked now, before anything is written).

    Raises:
        ValueError: not an export, or an item that fails the checks (named).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> import_user(memory._runtime, {"format": "csv"}, "u")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: not a langchain-memoryos export ...
    """
    if data.get("format") != EXPORT_FORMAT:
        raise ValueError("not a langchain-memoryos export (format 'langchain-memoryos/1' expected).")
    user = check_user(user_id or data.get("user_id"))
    rows = [(row, check_import_value(i, row, runtime.config)) for i, row in enumerate(data.get("items", []))]
    repository = runtime.repository

    def step() -> Step[int]:
        yield from repository.finish_deletion(user)  # never import next to a half-deleted user's rows
        ops = tuple(
            PutOp(
                repository.namespace(user, *(encode_label(x) for x in row["namespace"])),
                str(row["key"]),
                value,
                index=False,
            )
            for row, value in rows
            # never a tombstone (an export has none), nor an index snapshot or journal (derived, rebuilt)
            if list(row["namespace"])[:1] not in (["deleting"], ["snapshot"], ["journal"])
        )
        # the user's index snapshot no longer holds what is stored: the next load rebuilds it from the records
        drop = PutOp(repository.namespace(user, "snapshot"), "state", None)
        yield StoreBatch((*ops, drop))
        repository.invalidate(user)
        return len(ops)

    return Locked(user, step())


def delete_user(runtime: Runtime, user_id: Any) -> Locked[int]:
    """Operation: ``MemoryOS.delete_user`` (how many items were deleted).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="u")
        >>> memory._sync(delete_user(memory._runtime, "u")) > 0, memory.get_stm(user_id="u")
        (True, [])
    """
    user = check_user(user_id)
    return Locked(user, runtime.repository.delete_all(user))
