"""One engine, two drivers: the engine's steps are generators of effects.

A step (``Generator[Effect, Any, T]``) never does IO itself; it yields what it
needs — a batch of store operations, texts to embed, a controller judgement —
and receives the result. :func:`run_sync` and :func:`run_async` are the only
places that perform the IO, with ``store.batch`` / ``store.abatch``,
``embed`` / ``aembed`` and ``controller.x`` / ``controller.ax``. This is how
``add_turn`` and ``aadd_turn`` share one body (the idea of LangGraph's
``_prepare_ops`` shared by ``batch`` and ``abatch``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Op

from langchain_memoryos.controllers.base import MemoryController
from langchain_memoryos.embeddings import aencode_texts, encode_texts

__all__ = [
    "Control",
    "Effect",
    "Embed",
    "Parallel",
    "Purge",
    "Services",
    "Step",
    "StoreBatch",
    "run_async",
    "run_sync",
]

T = TypeVar("T")


@dataclass(frozen=True)
class StoreBatch:
    """Run these store operations in one ``batch`` (one transaction on SQL stores).

    Example:
        >>> StoreBatch(()).ops
        ()
    """

    ops: tuple[Op, ...]


@dataclass(frozen=True)
class Embed:
    """Embed these texts; the result is a ``(n, d)`` float32 array of unit rows.

    Example:
        >>> Embed(("hello",)).texts
        ('hello',)
    """

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Control:
    """Call the controller method ``method`` (or its ``a``-twin when async).

    Example:
        >>> Control("fuse", ()).method
        'fuse'
    """

    method: str
    args: tuple[Any, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Parallel:
    """Several independent controller calls; the result is their results, in order.

    The sync driver makes them one after another; the async driver runs them
    concurrently (``asyncio.gather``), so a model's latency is paid once.

    Example:
        >>> len(Parallel((Control("fuse", ()), Control("fuse", ()))).controls)
        2
    """

    controls: tuple[Control, ...]


@dataclass(frozen=True)
class Purge:
    """Make the rows just deleted unrecoverable from the store's files (after a user's deletion).

    The driver calls ``Services.purge`` when the store has one (SQLite:
    checkpoint the write-ahead log with ``TRUNCATE``, so the deleted text does
    not linger in the ``-wal`` file); other stores do nothing.

    Example:
        >>> def step():
        ...     yield Purge()
        >>> calls = []
        >>> run_sync(step(), Services(None, None, None, purge=lambda: calls.append(1)))  # type: ignore[arg-type]
        >>> calls
        [1]
    """


Effect = StoreBatch | Embed | Control | Parallel | Purge
Step = Generator[Effect, Any, T]


@dataclass
class Services:
    """What the drivers perform effects with.

    Example:
        >>> Services  # doctest: +ELLIPSIS
        <class '...Services'>
    """

    store: BaseStore
    embeddings: Embeddings
    controller: MemoryController
    purge: Callable[[], Any] | None = None
    _async_store: bool | None = None


def run_sync(step: Step[T], services: Services) -> T:
    """Drive a step with blocking IO.

    Args:
        step: the generator.
        services: store, embeddings and controller.

    Returns:
        The step's return value.

    Example:
        >>> def step():
        ...     return (yield Embed(()))
        >>> run_sync(step(), Services(None, None, None)).shape[0]  # type: ignore[arg-type]
        0
    """
    result: Any = None
    error: Exception | None = None
    while True:
        try:
            effect = step.throw(error) if error is not None else step.send(result)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        error = None
        try:
            result = _perform_sync(effect, services)
        except Exception as exc:  # noqa: BLE001 - raised inside the step, which may handle it
            result, error = None, exc


def _perform_sync(effect: Effect, services: Services) -> Any:
    if isinstance(effect, Purge):
        return services.purge() if services.purge is not None else None
    if isinstance(effect, StoreBatch):
        return services.store.batch(effect.ops) if effect.ops else []
    if isinstance(effect, Embed):
        if not effect.texts:
            return np.zeros((0, 1), dtype=np.float32)
        return encode_texts(services.embeddings, effect.texts)
    if isinstance(effect, Parallel):
        return [getattr(services.controller, c.method)(*c.args) for c in effect.controls]
    method = getattr(services.controller, effect.method)
    return method(*effect.args)


async def run_async(step: Step[T], services: Services) -> T:
    """Drive a step with async IO (``abatch``, ``aembed_documents``, ``a``-twins).

    Stores without native async (``SqliteStore``) run their sync ``batch`` in a
    worker thread.

    Args:
        step: the generator.
        services: store, embeddings and controller.

    Returns:
        The step's return value.

    Example:
        >>> import asyncio
        >>> def step():
        ...     return 42
        ...     yield
        >>> asyncio.run(run_async(step(), Services(None, None, None)))  # type: ignore[arg-type]
        42
    """
    result: Any = None
    error: Exception | None = None
    while True:
        try:
            effect = step.throw(error) if error is not None else step.send(result)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        error = None
        try:
            result = await _perform_async(effect, services)
        except Exception as exc:  # noqa: BLE001 - raised inside the step, which may handle it
            result, error = None, exc


async def _perform_async(effect: Effect, services: Services) -> Any:
    if isinstance(effect, Purge):
        return await asyncio.to_thread(services.purge) if services.purge is not None else None
    if isinstance(effect, StoreBatch):
        if not effect.ops:
            return []
        if services._async_store is not False:
            try:
                res = await services.store.abatch(effect.ops)
                services._async_store = True
                return res
            except NotImplementedError:
                services._async_store = False
        return await asyncio.to_thread(services.store.batch, effect.ops)
    if isinstance(effect, Embed):
        if not effect.texts:
            return np.zeros((0, 1), dtype=np.float32)
        return await aencode_texts(services.embeddings, effect.texts)
    if isinstance(effect, Parallel):
        calls = [getattr(services.controller, "a" + c.method)(*c.args) for c in effect.controls]
        return list(await asyncio.gather(*calls))
    method = getattr(services.controller, "a" + effect.method)
    return await method(*effect.args)
