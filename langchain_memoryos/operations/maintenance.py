"""Maintenance: check and repair, export and import, deletion (a thread's STM, a whole user).

Every one runs under the user's lock. ``check`` judges what the store holds
(the process's cached copy is dropped first); an export, an import, a write-log
read and ``repair`` first finish an interrupted ``delete_user``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.operations.imports import (
    DERIVED_PARTS,
    EXPORT_FORMAT,
    IMPORT_MODES,
    ImportMode,
    check_export,
    import_rows,
)
from langchain_memoryos.operations.runtime import Locked, Runtime
from langchain_memoryos.operations.validation import check_thread, check_user
from langchain_memoryos.schema import DialoguePage
from langchain_memoryos.schema.context import fact_ref, page_ref
from langchain_memoryos.schema.layout import is_hash_label
from langchain_memoryos.schema.pages import stored_thread
from langchain_memoryos.store.repository import decode_label, flush

__all__ = ["EXPORT_FORMAT", "ImportMode", "check", "clear_stm", "delete_user", "export_user", "import_user"]


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

    A fact's and a page's item carries ``ref``, the id the context and the
    tools show (``f:12``, ``p:40``), which every method takes as well as the key.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.set_agent_profile("A coach.", user_id="u")
        >>> [row["namespace"] for row in memory._sync(export_user(memory._runtime, "u"))["items"]]
        [['persona']]
        >>> _ = memory.add_fact("I'm vegan.", user_id="u")
        >>> rows = memory._sync(export_user(memory._runtime, "u"))["items"]
        >>> [(row["key"], row["ref"]) for row in rows if "ref" in row]
        [('f_000000000001', 'f:1')]
    """
    user = check_user(user_id)
    repository = runtime.repository

    def step() -> Step[dict[str, Any]]:
        yield from repository.finish_deletion(user)
        items = yield from repository.all_items(user)
        depth = len(repository.namespace(user))  # rows are exported relative to the user's namespace
        rows: list[dict[str, Any]] = []
        for it in sorted(items, key=lambda it: (it.namespace, it.key)):
            # derived or bookkeeping (version stamp, index snapshot, journal, a hash label's id row): never exported
            if it.namespace[depth : depth + 1] and it.namespace[depth] in DERIVED_PARTS:
                continue
            namespace = _ids(it.namespace[depth:], it.value)
            ref = _ref(namespace, it.key, it.value)
            rows.append({"namespace": namespace, "key": it.key, "value": it.value} | ({"ref": ref} if ref else {}))
        return {"format": EXPORT_FORMAT, "user_id": user, "items": rows}

    return Locked(user, step())


def _ref(namespace: list[str], key: str, value: Any) -> str | None:
    """The id the context and the tools show for an exported fact or page (``None`` for another item)."""
    if namespace[:1] == ["facts"]:
        return fact_ref(key)
    if namespace[:1] in (["pages"], ["stm"]) and isinstance(value, dict):
        meta = value.get("metadata")
        return page_ref(DialoguePage(id=key, user_input="", agent_response="", metadata=dict(meta or {})))
    return None


def _ids(labels: tuple[str, ...], value: Any) -> list[str]:
    """A stored namespace (below the user's) as ids: an STM thread under a hash label is named by its page's value."""
    if len(labels) == 2 and labels[0] == "stm" and is_hash_label(labels[1]) and isinstance(value, dict):
        return ["stm", stored_thread(value)]
    return [decode_label(x) for x in labels]


def import_user(runtime: Runtime, data: Mapping[str, Any], user_id: str | None, mode: str = "refuse") -> Locked[int]:
    """Operation: ``MemoryOS.import_user`` (the export checked whole before anything is written; see :mod:`.imports`).

    Raises:
        ValueError: not an export, an item that fails the checks (named), an unknown mode, or (in the
            ``"refuse"`` mode) a user that already has a memory.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> import_user(memory._runtime, {"format": "csv"}, "u")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: not a langchain-memoryos export ...
    """
    if mode not in IMPORT_MODES:
        raise InvalidInputError(f"import_user: mode must be one of {', '.join(map(repr, IMPORT_MODES))}, got {mode!r}.")
    rows = check_export(data, runtime.config, runtime.repository.dimension)
    user = check_user(user_id or data.get("user_id"))
    return Locked(user, import_rows(runtime.repository, runtime.config, user, rows, mode))  # type: ignore[arg-type]


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
