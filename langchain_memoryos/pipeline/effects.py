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
import copy
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field, replace
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
    "Judgements",
    "Lock",
    "Parallel",
    "Purge",
    "Services",
    "Step",
    "StoreBatch",
    "judged",
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

    ``offline=True`` asks the memory's offline controller instead (the
    controller itself when it is local, else its fallback): a judgement that
    must be made while the user's lock is held is never a model call.

    Example:
        >>> Control("fuse", ()).method
        'fuse'
    """

    method: str
    args: tuple[Any, ...] = field(default_factory=tuple)
    offline: bool = False


@dataclass(frozen=True)
class Lock:
    """Take the user's write lock; the result is a held lease (``release()`` it, or use it in ``with``).

    Example:
        >>> Lock("u1").user_id
        'u1'
    """

    user_id: str


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


Effect = StoreBatch | Embed | Control | Parallel | Lock | Purge
Step = Generator[Effect, Any, T]


@dataclass
class Services:
    """What the drivers perform effects with.

    Attributes:
        store: the LangGraph store.
        embeddings: the encoder.
        controller: the judgement maker.
        offline: the controller for judgements made under the user's lock
            (``Control(offline=True)``): local, never a model call.
        lease, alease: take a user's write lock (for :class:`Lock`).
        purge: make deleted rows unrecoverable from the store's files (for :class:`Purge`).

    Example:
        >>> def step():
        ...     return (yield Lock("u"))
        >>> services = Services(None, None, None, lease=lambda user: f"lease of {user}")  # type: ignore[arg-type]
        >>> run_sync(step(), services)
        'lease of u'
    """

    store: BaseStore
    embeddings: Embeddings
    controller: MemoryController
    offline: MemoryController | None = None
    lease: Callable[[str], Any] | None = None
    alease: Callable[[str], Awaitable[Any]] | None = None
    purge: Callable[[], Any] | None = None
    _async_store: bool | None = None

    def judge(self, control: Control) -> Any:
        """The controller that answers ``control``."""
        return self.offline if control.offline and self.offline is not None else self.controller


@dataclass
class Judgements:
    """The answers one write got from its controller, by request.

    A write that has to run again (the user moved while its judgements were
    being made) reuses the answers to the same requests instead of asking the
    model again. With ``calls=False`` a request without an answer is decided by
    the offline controller (``Control(offline=True)``) and counted as a
    fallback: this is how a write that runs under the user's lock never waits
    for a model.

    Example:
        >>> j = Judgements()
        >>> def step():
        ...     return (yield Control("fuse", ("a",))), (yield Control("fuse", ("a",)))
        >>> class Echo:
        ...     calls = 0
        ...     def fuse(self, text):
        ...         Echo.calls += 1
        ...         return text.upper()
        >>> run_sync(judged(step(), j), Services(None, None, Echo())), Echo.calls  # type: ignore[arg-type]
        (('A', 'A'), 1)
    """

    answers: dict[str, Any] = field(default_factory=dict)
    calls: bool = True


def _request_key(control: Control) -> str:
    # the request's full value: the same request made on the same records gets the same answer
    return control.method + repr(control.args)


def _answered(value: Any) -> Any:
    return copy.deepcopy(value)  # the stages may change what they receive; the kept answer stays as it was


def _as_fallback(value: Any) -> Any:
    usage = getattr(value, "usage", None)
    if usage is not None and hasattr(usage, "fallback"):
        usage.fallback = True
    return value


def judged(step: Step[T], judgements: Judgements) -> Step[T]:
    """Run ``step`` with its controller judgements answered from, and recorded in, ``judgements``.

    Args:
        step: the step.
        judgements: the write's answers so far (updated in place).

    Returns:
        The step, as a step.

    Example:
        >>> j = Judgements(answers={"fuse('a',)": "kept"}, calls=False)
        >>> def step():
        ...     return (yield Control("fuse", ("a",)))
        >>> run_sync(judged(step(), j), Services(None, None, None))  # type: ignore[arg-type]
        'kept'
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
            if isinstance(effect, Control):
                result = (yield from _judge_all((effect,), judgements))[0]
            elif isinstance(effect, Parallel):
                result = yield from _judge_all(effect.controls, judgements)
            else:
                result = yield effect
        except Exception as exc:  # noqa: BLE001 - raised inside the step, which may handle it
            result, error = None, exc


def _judge_all(controls: tuple[Control, ...], judgements: Judgements) -> Step[list[Any]]:
    keys = [_request_key(c) for c in controls]
    missing = [i for i, k in enumerate(keys) if k not in judgements.answers]
    asked = tuple(replace(controls[i], offline=True) if not judgements.calls else controls[i] for i in missing)
    answers: list[Any] = []
    if len(asked) == 1:
        answers = [(yield asked[0])]
    elif asked:
        answers = list((yield Parallel(asked)))
    out: list[Any] = [None] * len(controls)
    for i, answer in zip(missing, answers, strict=True):
        if not judgements.calls:
            answer = _as_fallback(answer)
        judgements.answers[keys[i]] = _answered(answer)
        out[i] = answer
    for i, key in enumerate(keys):
        if i not in missing:
            out[i] = _answered(judgements.answers[key])
    return out


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
        return [getattr(services.judge(c), c.method)(*c.args) for c in effect.controls]
    if isinstance(effect, Lock):
        if services.lease is None:
            raise RuntimeError("no lock service: Services(lease=...) is needed to take a user's lock")
        return services.lease(effect.user_id)
    method = getattr(services.judge(effect), effect.method)
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
        calls = [getattr(services.judge(c), "a" + c.method)(*c.args) for c in effect.controls]
        return list(await asyncio.gather(*calls))
    if isinstance(effect, Lock):
        if services.alease is None:
            raise RuntimeError("no lock service: Services(alease=...) is needed to take a user's lock")
        return await services.alease(effect.user_id)
    method = getattr(services.judge(effect), "a" + effect.method)
    return await method(*effect.args)
