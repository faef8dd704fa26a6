"""One turn through the write stages: its payload, how it gets its user state and commits it, its routing.

A turn works on the user's cached state under the user's lease (a local
controller), or on a private copy without the lock (a controller that may
call a model; see :mod:`langchain_memoryos.store.unit_of_work`); either way
its writes are committed in one store batch when it reaches ``done``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_memoryos.amu import RecordWrite
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.kernel.controller import ControllerUsage
from langchain_memoryos.kernel.effects import Embed, EmbedAndRead, Judgements, Lock, Purge, Step
from langchain_memoryos.schema import DialoguePage, WriteReport, ensure_utc
from langchain_memoryos.scoring import hot_segments
from langchain_memoryos.store.repository import MemoryRepository, UserLease, UserState, flush, page_key
from langchain_memoryos.store.settings import EngineSettings, embedding_text
from langchain_memoryos.store.unit_of_work import MAX_ATTEMPTS, commit_fork, fork_user

__all__ = ["TurnWrite", "after_mtm", "after_record", "commit_turn", "embed_turn", "open_turn", "turn_page"]

if TYPE_CHECKING:
    from langchain_memoryos.kernel.controller import PageReading

logger = logging.getLogger("langchain_memoryos")


@dataclass
class TurnWrite:
    """One ``add_turn`` on its way through the write stages (the write graph's nodes share it).

    Attributes:
        user_id, thread_id, user_input, agent_response, timestamp, metadata, turn_id: the request.
        report: what happened (returned by ``add_turn``).
        page: the page the turn adds (built once, by :func:`turn_page`).
        vector: the page's embedding, when :func:`embed_turn` computed it before
            the user's lock was taken (else ``stm_append`` computes it).
        reading: the page's content, read by the controller while the page was embedded
            (for the page's ``chain_link``, right after ``stm_append``), or ``None``.
        previous: the thread's page before this one and its vector (its newest STM page, else
            the last page that left its STM), set by ``stm_append`` for the page's chain link.
        lease: the user's write lock while the turn is written (taken by the
            graph's entry node unless the caller holds it).
        state: the user's state (loaded by ``stm_append``).
        moving: pages leaving STM (overflow, then idle threads), oldest first.
        created: the segment ``mtm_insert`` just created ("" when it joined one).
        records: the records still to write: the new page's facts, or a promotion's.
        write: the record going through the AMU stages.
        next: the next stage (a node name, or ``"done"``).
        optimistic: judge without the user's lock (the controller may call a
            model): the stages run on a private copy of the user's state,
            which is committed only if the user did not move meanwhile;
            otherwise the turn runs again on the new state, reusing the
            answers to the same requests (``judgements``). After
            :data:`MAX_ATTEMPTS` such runs it runs under the lock, and a
            request still unanswered is decided offline. ``False``: the whole
            turn runs under the lock (a local controller, as the offline
            default, makes no model call).
        judgements: the controller's answers so far, by request.
        base: the revision of the user's state the private copy was taken from
            (``None``: the turn works on the cached state, under its lease).
        attempts: how many times the turn found the user moved at commit.
        queued: a background write (its worker must not wait for its own queue).
        forget: what the turn asks to forget (a query, see
            :func:`~langchain_memoryos.amu.forgetting.forget_request`): forgotten
            before the turn's page is stored, in the same batch.
        said: the turn's two texts as given, when what is stored was cut (a
            forget request): never stored, only its salted digest (so a resend is known).
        held: the caller holds the user's lease over several turns and stores
            their writes in one batch (``add_turns``' windows): when the turn
            is done its writes stay buffered in the user's state and the lease
            stays held (a turn that works on a private copy commits its own).

    Example:
        >>> TurnWrite("u", "t", "hi", "hello", None, None, None).next
        'stm_append'
    """

    user_id: str
    thread_id: str
    user_input: str
    agent_response: str
    timestamp: Any
    metadata: Mapping[str, Any] | None
    turn_id: str | None
    report: WriteReport = field(default_factory=lambda: WriteReport(page_id=""))
    page: DialoguePage | None = None
    vector: Vector | None = None
    reading: PageReading | None = None
    previous: tuple[DialoguePage, Vector | None] | None = None
    lease: UserLease | None = None
    state: UserState | None = None
    moving: list[tuple[DialoguePage, Vector]] = field(default_factory=list)
    created: str = ""
    records: list[RecordWrite] = field(default_factory=list)
    write: RecordWrite | None = None
    next: str = "stm_append"
    optimistic: bool = False
    judgements: Judgements = field(default_factory=Judgements)
    base: int | None = None
    attempts: int = 0
    queued: bool = False
    held: bool = False
    forget: str = ""
    said: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        self.judgements.count = self._count
        self.judgements.keep = self.optimistic  # answers are reused only by a turn that may run again

    def _count(self, judgement: str, usage: ControllerUsage) -> None:
        """Count a judgement's model usage on the state the turn works on (committed with it)."""
        self.user.count_usage(judgement, usage)

    @property
    def user(self) -> UserState:
        """The loaded user state (after ``stm_append``)."""
        assert self.state is not None, "stm_append loads the user state first"
        return self.state

    def record_done(self, settings: EngineSettings) -> None:
        """The record in ``write`` went through AMU: its events join the report; the next record, page or hot segment.

        The AMU stages call this on the record they finish (see :class:`~langchain_memoryos.amu.AMURun`).
        """
        assert self.write is not None
        self.report.events.extend(self.write.events)
        self.write = None
        self.next = after_record(self, settings)

    def restart(self) -> None:
        """Start the turn again from ``stm_append`` (the user moved): keep the request, vector and judgements."""
        self.attempts += 1
        self.judgements.calls = self.attempts < MAX_ATTEMPTS
        self.report = WriteReport(page_id="")
        self.page = None
        self.state, self.base = None, None
        self.moving, self.previous, self.created, self.records, self.write = [], None, "", [], None
        self.next = "stm_append"


def open_turn(repo: MemoryRepository, t: TurnWrite) -> Step[UserState]:
    """Step: the state a turn works on: a private copy of the user (optimistic), else the user under its lease.

    The lock is held only to load (and copy) the user: never while a model
    is asked (see :mod:`langchain_memoryos.store.unit_of_work`).

    Example:
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> from langgraph.store.memory import InMemoryStore
        >>> repo = MemoryRepository(2)
        >>> t = TurnWrite("u", "t", "hi", "", None, None, None, optimistic=True)
        >>> services = Services(InMemoryStore(), None, None, lease=repo.lease)  # type: ignore[arg-type]
        >>> state = run_sync(open_turn(repo, t), services)
        >>> state is repo.cached("u"), t.base == repo.cached("u").revision, t.lease is None
        (False, True, True)
    """
    if t.optimistic and t.judgements.calls:
        t.state, t.base = yield from fork_user(repo, t.user_id)
    else:
        if t.lease is None:
            t.lease = yield Lock(t.user_id)
        t.state = yield from repo.load(t.user_id)
    return t.state


def commit_turn(repo: MemoryRepository, t: TurnWrite) -> Step[None]:
    """Step: store the turn's writes in one batch, or restart the turn when the user moved meanwhile.

    A turn that worked under its lease flushes its writes and releases the
    lease. A turn that worked on a private copy commits it only if the user's
    revision is the one it copied (:func:`~langchain_memoryos.store.unit_of_work.commit_fork`);
    else it starts again from ``stm_append`` (:meth:`TurnWrite.restart`).
    """
    if t.base is None:
        if t.held:
            return  # the caller stores the writes of its turns in one batch, then releases the lease
        yield from flush(t.user)
        if t.forget:
            yield Purge()  # SQLite: what was forgotten leaves the write-ahead log
        if t.lease is not None:
            t.lease.release()
    elif not (yield from commit_fork(repo, t.user, t.base)):
        t.restart()


def turn_page(t: TurnWrite) -> DialoguePage:
    """The page a turn adds to STM (its key derives from the turn, so a replay finds it); built once per turn.

    Example:
        >>> turn_page(TurnWrite("u", "t", "hi", "hello", 0, None, "t1")).metadata
        {'turn_id': 't1'}
    """
    if t.page is not None:
        return t.page
    ts = ensure_utc(t.timestamp)
    page = DialoguePage(
        id=page_key(t.thread_id, t.turn_id, ts.isoformat(), t.user_input, t.agent_response),
        user_input=t.user_input,
        agent_response=t.agent_response,
        timestamp=ts,
        thread_id=t.thread_id,
        metadata=dict(t.metadata or {}),
    )
    if t.turn_id is not None:
        page.metadata.setdefault("turn_id", t.turn_id)
    t.page = page
    return page


def embed_turn(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """Step: embed the turn's page into ``t.vector`` (and meanwhile read it ahead into ``t.reading``).

    It needs no user state, so ``MemoryOS`` runs it before taking the user's
    lock: the slowest part of a write (the encoder) never holds the lock, and
    ``stm_append`` then only stores. ``stm_append`` runs it itself when the
    vector is missing (the write graph used as a subgraph). A local
    controller reads the page (keywords, facts) in a worker thread while it
    is embedded (:class:`~langchain_memoryos.kernel.effects.EmbedAndRead`):
    its analysis (``chain_link``, right after ``stm_append``) then computes no
    keywords or facts under the user's lock.

    Example:
        >>> from langchain_memoryos.config import MemoryOSConfig
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> emb = resolve_embeddings()
        >>> settings = EngineSettings.build(MemoryOSConfig(), emb.model_name)
        >>> t = TurnWrite("u", "t", "I play the cello.", "Lovely.", None, None, None)
        >>> run_sync(embed_turn(settings, t), Services(None, emb, None))  # type: ignore[arg-type]
        >>> t.vector.shape, round(float(t.vector @ emb.encode([turn_page(t).embedding_text])[0]), 4)
        ((384,), 1.0)
    """
    page = turn_page(t)
    embed = Embed((embedding_text(page.embedding_text, settings.config.max_embedding_chars),))
    if t.optimistic:  # a controller that may call a model analyses the page in chain_link (without the lock)
        t.vector = (yield embed)[0]
        return
    rows, t.reading = yield EmbedAndRead(embed, page, gate_threshold=settings.amu.gate_threshold)
    t.vector = rows[0]


def after_mtm(t: TurnWrite, settings: EngineSettings) -> str:
    """After the new page's facts, or a page reached MTM: the next page to move, else a hot segment, else done.

    A page leaving STM was analysed when it was added (``mtm_insert``); one stored
    before pages were analysed when added is analysed now (``chain_link``).
    """
    if t.moving:
        return "mtm_insert" if t.moving[0][0].topic is not None else "chain_link"
    return "persona_promote" if hot_segments(t.user.segments.values(), t.user.clock, settings.config) else "done"


def after_record(t: TurnWrite, settings: EngineSettings) -> str:
    """After a record's AMU path: the next record, else the next page leaving STM, else a hot segment, else done."""
    if t.records:
        return "write_gate"
    return after_mtm(t, settings)
