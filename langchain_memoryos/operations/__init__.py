"""The operations behind ``MemoryOS``'s public methods, each shared by the sync and the async twin.

An operation is built from the caller's arguments (checked then, before
anything is read or written) and run by either driver:
``operation.run(runtime)`` with blocking IO, ``await operation.arun(runtime)``
with async IO (:mod:`~langchain_memoryos.operations.runtime`). By concern:

* :mod:`~langchain_memoryos.operations.turns`: ``add_turn`` and ``retrieve`` (the stages run directly), the graphs;
* :mod:`~langchain_memoryos.operations.facts`: facts and corrections;
* :mod:`~langchain_memoryos.operations.inspection`: STM, threads, segments, pages, facts, persona, log, stats;
* :mod:`~langchain_memoryos.operations.maintenance`: check and repair, export and import, deletion;
* :mod:`~langchain_memoryos.operations.validation`: what callers pass, checked and converted.
"""
