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
import concurrent.futures
import copy
import logging
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, GetOp, ListNamespacesOp, Op, SearchOp

from langchain_memoryos.embeddings import MiniLMEmbeddings, aencode_texts, encode_texts
from langchain_memoryos.pipeline.judgements import Judgement
from langchain_memoryos.store.changes import change_token, count_write
from langchain_memoryos.store.visits import batch_without_waiting, sqlite_twin
from langchain_memoryos.threads import beside, side_threads

if TYPE_CHECKING:
    from langchain_memoryos.controllers.base import MemoryController
    from langchain_memoryos.controllers.heuristic import PageReading
    from langchain_memoryos.schema import DialoguePage

__all__ = [
    "ChangeToken",
    "Effect",
    "Embed",
    "EmbedAndRead",
    "Judgement",
    "Judgements",
    "Lock",
    "Parallel",
    "Purge",
    "Services",
    "Step",
    "StoreBatch",
    "Wait",
    "judged",
    "run_async",
    "run_sync",
]

T = TypeVar("T")
logger = logging.getLogger("langchain_memoryos")


@dataclass(frozen=True)
class StoreBatch:
    """Run these store operations in one ``batch`` (one transaction on SQL stores).

    Example:
        >>> from langgraph.store.base import PutOp
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = InMemoryStore()
        >>> def step():
        ...     return (yield StoreBatch((PutOp(("notes",), "n1", {"text": "hi"}), PutOp(("notes",), "n2", {}))))
        >>> run_sync(step(), Services(store, None, None))  # type: ignore[arg-type]
        [None, None]
        >>> [item.key for item in store.search(("notes",))]
        ['n1', 'n2']
    """

    ops: tuple[Op, ...]
    #: ``False``: fail at once rather than wait for a write lock another connection holds
    #: (:func:`~langchain_memoryos.store.visits.batch_without_waiting`; a read's visits)
    wait: bool = field(default=True, kw_only=True)


@dataclass(frozen=True)
class ChangeToken:
    """The store's change token (:func:`~langchain_memoryos.store.changes.change_token`; ``None``: it cannot tell).

    Two equal tokens mean nothing was written to the store in between.

    Example:
        >>> from langgraph.store.base import PutOp
        >>> from langgraph.store.sqlite import SqliteStore
        >>> def step():
        ...     before = yield ChangeToken()
        ...     yield StoreBatch((PutOp(("notes",), "n1", {"text": "hi"}),))
        ...     after = yield ChangeToken()
        ...     return before == after, after == (yield ChangeToken())
        >>> with SqliteStore.from_conn_string(":memory:") as store:
        ...     store.setup()
        ...     run_sync(step(), Services(store, None, None))  # type: ignore[arg-type]
        (False, True)
    """


@dataclass(frozen=True)
class Embed:
    """Embed these texts; the result is a ``(n, d)`` float32 array of unit rows.

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> def step():
        ...     return (yield Embed(("I live in Oslo.", "I moved to Oslo.")))
        >>> v = run_sync(step(), Services(None, resolve_embeddings(), None))  # type: ignore[arg-type]
        >>> v.shape, v.dtype.name, np.allclose(np.linalg.norm(v, axis=1), 1.0)
        ((2, 384), 'float32', True)
    """

    texts: tuple[str, ...]
    threads: int = field(default=1, kw_only=True)  # forward passes at once (a bulk write's batches use two cores)


@dataclass(frozen=True)
class EmbedAndRead:
    """Embed, and meanwhile let the memory's controller read ``page`` ahead in a worker thread.

    The result is ``(rows, reading)``: the embedding's rows, and the
    controller's ``read_ahead(page)`` (a
    :class:`~langchain_memoryos.controllers.heuristic.PageReading`), or
    ``None`` when the controller reads nothing ahead (a model controller, a
    redefined analysis), the rows were known already, or the reading failed
    (the page is then analysed in ``chain_link``, as without a reading). The
    reading runs beside the encoder (which releases the GIL inside its matrix
    products) and before the user's lock is taken: the page's analysis
    (``chain_link``, right after ``stm_append``) then computes no keywords or
    facts under the lock.

    With ``gate_threshold`` and the offline encoder, the reader also embeds the
    summaries the write gate admits of the page's records (one batch, as
    :func:`~langchain_memoryos.amu.embed_summaries` embeds them), on the
    other core while the page is embedded: when those are exactly the
    summaries to embed, AMU uses these rows (the same the
    batch would give) and the turn makes one encoder pass, its page's.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> from langchain_memoryos.schema import DialoguePage
        >>> page = DialoguePage(id="p", user_input="I live in Lyon.", agent_response="Nice city.")
        >>> def step():
        ...     return (yield EmbedAndRead(Embed((page.embedding_text,)), page))
        >>> rows, reading = run_sync(step(), Services(None, resolve_embeddings(), HeuristicController()))
        >>> rows.shape, reading.content.keywords
        ((1, 384), ['lyon', 'live', 'city'])
        >>> run_sync(step(), Services(None, resolve_embeddings(), None))[1] is None  # type: ignore[arg-type]
        True
    """

    embed: Embed
    page: DialoguePage
    gate_threshold: float | None = None


def _read_quietly(read: Callable[[], PageReading | None], page: DialoguePage) -> PageReading | None:
    try:
        return read()
    except Exception:  # noqa: BLE001 - no reading: the page is analysed in chain_link (the error shows there)
        logger.debug("reading page %s ahead failed", page.id, exc_info=True)
        return None


def _reader(effect: EmbedAndRead, services: Services) -> Callable[[], PageReading | None] | None:
    """What the reader thread runs: the controller's ``read_ahead``, then the admitted summaries embedded.

    With :attr:`Services.read_elsewhere` (a worker process, see
    :func:`~langchain_memoryos.operations.reader.read_page`, off by default) both are done
    there, so that their Python does not hold this process's GIL while the
    page is embedded here; when the worker cannot, here, in the reader thread.
    ``None`` when the page's rows are known already or the controller reads nothing ahead.
    """
    if not effect.embed.texts or services.embedded(effect.embed.texts) is not None:
        return None
    read_ahead: Callable[..., PageReading | None] | None = getattr(services.controller, "read_ahead", None)
    if read_ahead is None:
        return None
    embeddings, threshold, elsewhere = services.embeddings, effect.gate_threshold, services.read_elsewhere
    page_keywords = getattr(services.controller, "page_keywords", None)

    def read() -> PageReading | None:
        assert read_ahead is not None
        local_encoder = isinstance(embeddings, MiniLMEmbeddings)
        if elsewhere is not None and local_encoder and threshold is not None and isinstance(page_keywords, int):
            answer = elsewhere(effect.page, page_keywords, embeddings, threshold)
            if answer is not None:
                content, texts, rows = answer
                reading = read_ahead(effect.page, content)
                return replace(reading, rows=(texts, rows)) if reading is not None and texts else reading
        reading = read_ahead(effect.page)
        if reading is None or threshold is None or not local_encoder:
            return reading  # a remote encoder is not asked ahead for texts it may never need
        from langchain_memoryos.amu import summary_rows  # amu imports this module

        texts, rows = summary_rows(reading.content.records, threshold, embeddings)
        return replace(reading, rows=(texts, rows)) if texts else reading

    return read


@dataclass(frozen=True)
class Lock:
    """Take the user's write lock; the result is a held lease (``release()`` it, or use it in ``with``).

    Example:
        >>> from langchain_memoryos.store.repository import MemoryRepository
        >>> def step():
        ...     with (yield Lock("u1")) as lease:
        ...         inside = lease.held
        ...     return inside, lease.held
        >>> run_sync(step(), Services(None, None, None, lease=MemoryRepository(2).lease))  # type: ignore[arg-type]
        (True, False)
    """

    user_id: str


@dataclass(frozen=True)
class Parallel:
    """Several independent judgements; the result is their answers, in order.

    The sync driver makes them one after another; the async driver runs them
    concurrently (``asyncio.gather``), so a model's latency is paid once.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.pipeline.judgements import ParseRecords
        >>> def step():
        ...     return (yield Parallel((ParseRecords("I'm vegan.", "user"), ParseRecords("I live in Oslo.", "user"))))
        >>> services = Services(None, None, HeuristicController())  # type: ignore[arg-type]
        >>> [[r.summary for r in answer.records] for answer in asyncio.run(run_async(step(), services))]
        [['The user is vegan.'], ['The user lives in Oslo.']]
    """

    requests: tuple[Judgement, ...]


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


@dataclass(frozen=True)
class Wait:
    """Wait for work started elsewhere (another process or thread); the result is the future's.

    The sync driver blocks on it; the async driver awaits it without blocking the event loop.
    With ``timeout`` (seconds) a future not done by then raises ``TimeoutError`` in
    the step, which can then do the work itself: nothing waits for ever on a worker.

    Example:
        >>> import time
        >>> from concurrent.futures import ThreadPoolExecutor
        >>> def step(future):
        ...     try:
        ...         return (yield Wait(future, timeout=0.05))
        ...     except TimeoutError:
        ...         return "done here instead"
        >>> with ThreadPoolExecutor(1) as pool:
        ...     run_sync(step(pool.submit(sum, [1, 2])), Services(None, None, None))  # type: ignore[arg-type]
        ...     run_sync(step(pool.submit(time.sleep, 1)), Services(None, None, None))  # type: ignore[arg-type]
        3
        'done here instead'
    """

    future: concurrent.futures.Future[Any]
    timeout: float | None = None


Effect = StoreBatch | ChangeToken | Embed | EmbedAndRead | Judgement | Parallel | Lock | Purge | Wait


def _writes(ops: tuple[Op, ...]) -> bool:
    return any(not isinstance(op, (GetOp, SearchOp, ListNamespacesOp)) for op in ops)


Step = Generator[Effect, Any, T]


@dataclass
class Services:
    """What the drivers perform effects with.

    Attributes:
        store: the LangGraph store.
        embeddings: the encoder.
        controller: the judgement maker.
        offline: the controller for judgements made under the user's lock
            (``offline=True`` requests): local, never a model call.
        lease, alease: take a user's write lock (for :class:`Lock`).
        purge: make deleted rows unrecoverable from the store's files (for :class:`Purge`).
        vectors: texts already embedded (a bulk write embeds its texts in batches ahead): an
            :class:`Embed` of texts all found here is answered from it.
        read_elsewhere: reads a page ahead in a worker process for :class:`EmbedAndRead`:
            ``(page, page_keywords, embeddings, gate_threshold) -> (content, summaries, rows)``,
            or ``None`` when it cannot (then the reader thread reads it).

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
    vectors: Mapping[str, Any] | None = None
    read_elsewhere: Callable[..., Any] | None = None
    _async_store: bool | None = None

    def embedded(self, texts: tuple[str, ...]) -> Any:
        """The rows of ``texts`` when every one is in :attr:`vectors`, else ``None``.

        Example:
            >>> known = {"a": np.ones(2, dtype=np.float32)}
            >>> services = Services(None, None, None, vectors=known)  # type: ignore[arg-type]
            >>> services.embedded(("a", "a")).shape, services.embedded(("a", "b"))
            ((2, 2), None)
        """
        known = self.vectors
        if known is None or not all(t in known for t in texts):
            return None
        return np.stack([known[t] for t in texts])

    def judge(self, request: Judgement) -> MemoryController:
        """The controller that answers ``request``: the offline one when asked for, or when the controller cannot.

        Example:
            >>> from langchain_memoryos.pipeline.judgements import PlanQuery
            >>> services = Services(None, None, "model", offline="local")  # type: ignore[arg-type]
            >>> services.judge(PlanQuery("q", offline=True))
            'local'
        """
        if self.offline is not None and (request.offline or not hasattr(self.controller, request.name)):
            return self.offline
        return self.controller


@dataclass
class Judgements:
    """The answers one write got from its controller, by request, and where their usage is counted.

    A write that has to run again (the user moved while its judgements were
    being made) reuses the answers to the same requests instead of asking the
    model again. With ``calls=False`` a request without an answer is decided by
    the offline controller (``offline=True``) and counted as a fallback: this
    is how a write that runs under the user's lock never waits for a model.
    ``count(name, usage)`` is called once per answer a stage receives (the
    write's usage counters: every judgement is counted in one place).
    ``keep=False`` (a write that runs once, under the lock) keeps no answers:
    no request key is built and no answer copied on that path.

    Example:
        >>> from langchain_memoryos.pipeline.judgements import ParseRecords
        >>> class Model:
        ...     calls = 0
        ...     def parse_records(self, text, kind):
        ...         Model.calls += 1
        ...         return text.upper()
        >>> def step():
        ...     return (yield ParseRecords("a", "user")), (yield ParseRecords("a", "user"))
        >>> run_sync(judged(step(), Judgements()), Services(None, None, Model())), Model.calls  # type: ignore[arg-type]
        (('A', 'A'), 1)
    """

    answers: dict[str, Any] = field(default_factory=dict)
    calls: bool = True
    count: Callable[[str, Any], None] | None = None
    keep: bool = True


def _answered(value: Any) -> Any:
    return copy.deepcopy(value)  # the stages may change what they receive; the kept answer stays as it was


def _as_fallback(value: Any) -> Any:
    usage = getattr(value, "usage", None)
    if usage is not None and hasattr(usage, "fallback"):
        usage.fallback = True
    return value


def judged(step: Step[T], judgements: Judgements) -> Step[T]:
    """Run ``step`` with its judgements answered from, and recorded in, ``judgements`` (and counted).

    Args:
        step: the step.
        judgements: the write's answers so far (updated in place).

    Returns:
        The step, as a step.

    Example:
        >>> from langchain_memoryos.pipeline.judgements import ParseRecords
        >>> j = Judgements(answers={ParseRecords("a", "user").key(): "kept"}, calls=False)
        >>> def step():
        ...     return (yield ParseRecords("a", "user"))
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
            if isinstance(effect, Judgement):
                result = (yield from _judge_all((effect,), judgements))[0]
            elif isinstance(effect, Parallel):
                result = yield from _judge_all(effect.requests, judgements)
            else:
                result = yield effect
        except Exception as exc:  # noqa: BLE001 - raised inside the step, which may handle it
            result, error = None, exc


def _judge_all(requests: tuple[Judgement, ...], judgements: Judgements) -> Step[list[Any]]:
    if not judgements.keep:
        given = [(yield requests[0])] if len(requests) == 1 else list((yield Parallel(requests)))
        return _counted(requests, given, judgements)
    keys = [r.key() for r in requests]
    missing = [i for i, k in enumerate(keys) if k not in judgements.answers]
    asked = tuple(replace(requests[i], offline=True) if not judgements.calls else requests[i] for i in missing)
    answers: list[Any] = []
    if len(asked) == 1:
        answers = [(yield asked[0])]
    elif asked:
        answers = list((yield Parallel(asked)))
    out: list[Any] = [None] * len(requests)
    for i, answer in zip(missing, answers, strict=True):
        if not judgements.calls:
            answer = _as_fallback(answer)
        judgements.answers[keys[i]] = _answered(answer)
        out[i] = answer
    for i, key in enumerate(keys):
        if i not in missing:
            out[i] = _answered(judgements.answers[key])
    return _counted(requests, out, judgements)


def _counted(requests: tuple[Judgement, ...], answers: list[Any], judgements: Judgements) -> list[Any]:
    if judgements.count is not None:
        for request, answer in zip(requests, answers, strict=True):
            usage = getattr(answer, "usage", None)
            if usage is not None:
                judgements.count(request.name, usage)
    return answers


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
        if _writes(effect.ops):
            count_write(services.store)  # before the write: see store/changes.py
        if not effect.wait and effect.ops:
            return batch_without_waiting(services.store, effect.ops)
        return services.store.batch(effect.ops) if effect.ops else []
    if isinstance(effect, ChangeToken):
        return change_token(services.store)
    if isinstance(effect, Embed):
        if not effect.texts:
            return np.zeros((0, 1), dtype=np.float32)
        known = services.embedded(effect.texts)
        return known if known is not None else encode_texts(services.embeddings, effect.texts, threads=effect.threads)
    if isinstance(effect, EmbedAndRead):
        read = _reader(effect, services)
        if read is None:
            return _perform_sync(effect.embed, services), None
        reading = beside(_read_quietly, read, effect.page)
        return _perform_sync(effect.embed, services), reading.result()
    if isinstance(effect, Wait):
        return effect.future.result(timeout=effect.timeout)
    if isinstance(effect, Parallel):
        return [r.ask(services.judge(r)) for r in effect.requests]
    if isinstance(effect, Lock):
        if services.lease is None:
            raise RuntimeError("no lock service: Services(lease=...) is needed to take a user's lock")
        return services.lease(effect.user_id)
    return effect.ask(services.judge(effect))


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
        if _writes(effect.ops):
            count_write(services.store)  # before the write: see store/changes.py
        if not effect.wait and sqlite_twin(services.store) is not None:
            return await asyncio.to_thread(batch_without_waiting, services.store, effect.ops)
        if services._async_store is not False:
            try:
                res = await services.store.abatch(effect.ops)
                services._async_store = True
                return res
            except NotImplementedError:
                services._async_store = False
        return await asyncio.to_thread(services.store.batch, effect.ops)
    if isinstance(effect, ChangeToken):
        return change_token(services.store, wait=False)  # never blocks the event loop: None when the store is busy
    if isinstance(effect, Embed):
        if not effect.texts:
            return np.zeros((0, 1), dtype=np.float32)
        known = services.embedded(effect.texts)
        if known is not None:
            return known
        return await aencode_texts(services.embeddings, effect.texts, threads=effect.threads)
    if isinstance(effect, EmbedAndRead):
        read = _reader(effect, services)
        if read is None:
            return await _perform_async(effect.embed, services), None
        reading = asyncio.get_running_loop().run_in_executor(side_threads(), _read_quietly, read, effect.page)
        return await _perform_async(effect.embed, services), await reading
    if isinstance(effect, Wait):
        return await asyncio.wait_for(asyncio.wrap_future(effect.future), effect.timeout)
    if isinstance(effect, Parallel):
        return list(await asyncio.gather(*(r.aask(services.judge(r)) for r in effect.requests)))
    if isinstance(effect, Lock):
        if services.alease is None:
            raise RuntimeError("no lock service: Services(alease=...) is needed to take a user's lock")
        return await services.alease(effect.user_id)
    return await effect.aask(services.judge(effect))
