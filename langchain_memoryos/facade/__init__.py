"""The public methods of ``MemoryOS``, by concern: each sync/async pair two one-liners over one operation.

``MemoryOS`` (:mod:`langchain_memoryos.memory`: the constructor, the backends'
factories, closing, background flushes) is built from these groups, one module
each, and each module's methods run the operations of the module of the same
name in :mod:`langchain_memoryos.operations` (``facade/turns.py`` ↔
``operations/turns.py``, and so on):
:class:`~langchain_memoryos.facade.turns.TurnMethods` (``add_turn``,
``retrieve``, the graphs), :class:`~langchain_memoryos.facade.bulk.BulkMethods`
(``add_turns``, ``add_messages``),
:class:`~langchain_memoryos.facade.facts.FactMethods` (facts and
corrections), :class:`~langchain_memoryos.facade.forget.ForgetMethods`
(``forget``, ``delete_fact``),
:class:`~langchain_memoryos.facade.search.SearchMethods` (``search``),
:class:`~langchain_memoryos.facade.inspection.InspectionMethods` (STM,
segments, facts, persona, log, stats) and
:class:`~langchain_memoryos.facade.maintenance.MaintenanceMethods` (check and
repair, export and import, deletion, vacuum). A method builds its operation
and runs it with :meth:`Facade._sync` or :meth:`Facade._async`.
"""

from __future__ import annotations

from typing import TypeVar

from langchain_memoryos.operations.runtime import Operation, Runtime

__all__ = ["Facade"]

T = TypeVar("T")


class Facade:
    """What the method groups share: the memory's runtime and the two ways to run an operation.

    Example:
        >>> import asyncio
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.operations.inspection import list_threads
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="u", thread_id="a")
        >>> operation = list_threads(memory._runtime, "u")
        >>> memory._sync(operation), asyncio.run(memory._async(list_threads(memory._runtime, "u")))
        (['a'], ['a'])
    """

    _runtime: Runtime

    def _sync(self, operation: Operation[T]) -> T:
        """Run an operation with blocking IO."""
        return operation.run(self._runtime)

    async def _async(self, operation: Operation[T]) -> T:
        """Run an operation with async IO."""
        return await operation.arun(self._runtime)
