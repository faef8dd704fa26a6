"""The LoCoMo benchmark: the memory and the flat baselines on the same pages, in one run.

For each conversation of a LoCoMo file, every figure from one run of the same pages:

1. every memory configuration ingests it once by the run's :class:`Protocol`
   (``harness``, ``plain`` or ``fresh``; one user per conversation), timed;
2. every question is asked on the protocol's thread (the harness and ``fresh``:
   a new thread, ``"questions"``; ``plain``: the conversation's own), at each
   word budget; the evidence recall is scored on ``ctx.source_ids()`` and the
   cost on the words of ``ctx.to_prompt()`` — everything that would be injected;
3. the baselines (:mod:`~langchain_memoryos.evaluation.baselines`) answer the
   same questions from the same pages (the protocol's pages);
4. optionally, the fitted constants are cross-validated leave-one-conversation-out
   (:mod:`~langchain_memoryos.evaluation.cv`) and the held-out figure is a row
   of its own;
5. with a chat model, each system's context is also used to answer, and the
   answer is scored (official LoCoMo F1, Mem0-style F1, BLEU-1).

Example:
    >>> import json, tempfile
    >>> sample = {"sample_id": "c1", "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
    ...     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
    ...     {"speaker": "Ana", "dia_id": "D1:1", "text": "I started pottery classes."},
    ...     {"speaker": "Ben", "dia_id": "D1:2", "text": "Fun!"},
    ...     {"speaker": "Ana", "dia_id": "D1:3", "text": "We went camping in the mountains."},
    ...     {"speaker": "Ben", "dia_id": "D1:4", "text": "Nice."}]},
    ...     "qa": [{"question": "What classes did Ana start?", "answer": "pottery", "evidence": ["D1:1"],
    ...             "category": 4}]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "locomo.json"
    ...     _ = path.write_text(json.dumps([sample]))
    ...     run = run_locomo(path, systems=[MemorySystem("memoryos", MemoryOSConfig())],
    ...                      baselines=[Baseline("bm25", 1), Baseline("last", 1)], progress=False, n_boot=10)
    >>> [(s.system, s.recall) for s in run.summaries]
    [('memoryos', 1.0), ('bm25 top-1', 1.0), ('last-1', 0.0)]
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.evaluation.answer_rows import (
    CV_FACTS,
    NO_FACTS,
    ORACLE_FACTS,
    RAW_TURNS,
    answers_summary,
    raw_turn_pages,
    variant_name,
    with_answers,
    write_observations,
)
from langchain_memoryos.evaluation.baselines import DEFAULT_BASELINES, Baseline, FlatPages, render_pages
from langchain_memoryos.evaluation.cv import (
    ANSWERS_CV_GRID,
    Grid,
    answers_over_chance,
    check_grid,
    config_value,
    loco_cv,
    recall_1_4,
    with_values,
)
from langchain_memoryos.evaluation.embedding_cache import CachedEmbeddings
from langchain_memoryos.evaluation.locomo import (
    LocomoPage,
    LocomoQuestion,
    conversation_pages,
    ingest_conversation,
    ingest_plain,
    load_locomo,
    load_questions,
    plain_pages,
    plain_turn,
)
from langchain_memoryos.evaluation.metrics import (
    QuestionOutcome,
    SystemSummary,
    count_tokens,
    count_words,
    percentile,
    summarize,
)
from langchain_memoryos.schema import DialoguePage

__all__ = [
    "DEFAULT_ANSWER_PROMPT",
    "DEFAULT_MEMORY_SYSTEMS",
    "PROTOCOLS",
    "LocomoRun",
    "MemorySystem",
    "Protocol",
    "budget_baselines",
    "run_locomo",
]

logger = logging.getLogger("langchain_memoryos")

#: The answer prompt (LoCoMo's short-phrase QA instruction, with the speakers named).
DEFAULT_ANSWER_PROMPT = (
    "You answer questions about a long conversation between {user} and {agent}, using only the memory "
    "below, where 'User' and 'the user' mean {user} and 'Assistant' means {agent}. Dates in square "
    "brackets are when each part was said; resolve relative times ('last week') against them and "
    "answer with absolute dates. "
    "Answer with a short phrase, using exact words from the memory whenever possible. If the memory does "
    "not contain the answer, reply 'Not mentioned in the conversation'.\n\n{context}"
)


@dataclass(frozen=True)
class MemorySystem:
    """A memory configuration under test.

    Attributes:
        name: the system name in reports.
        config: its configuration.

    Example:
        >>> twice = [MemorySystem("memoryos", MemoryOSConfig()), MemorySystem("memoryos", MemoryOSConfig.paper())]
        >>> run_locomo("locomo.json", systems=twice, baselines=[])  # names label the report rows: unique
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.InvalidInputError: system names must be unique, got ['memoryos', 'memoryos']
    """

    name: str
    config: MemoryOSConfig


#: The memory under its default (measured) settings and under the paper's.
DEFAULT_MEMORY_SYSTEMS: tuple[MemorySystem, ...] = (
    MemorySystem("memoryos", MemoryOSConfig()),
    MemorySystem("memoryos (paper)", MemoryOSConfig.paper()),
)


@dataclass
class LocomoRun:
    """Everything one benchmark run measured.

    Attributes:
        summaries: one per system, memory systems first.
        outcomes: every question of every system.
        meta: the run's settings and timings (ingest turns/s per memory system,
            LLM calls and tokens per turn, file, conversations, date).

    Example:
        >>> LocomoRun([], [], {}).summary("x") is None
        True
    """

    summaries: list[SystemSummary]
    outcomes: list[QuestionOutcome]
    meta: dict[str, Any] = field(default_factory=dict)

    def summary(self, system: str) -> SystemSummary | None:
        """The summary of one system, or ``None``.

        Example:
            >>> LocomoRun([], [], {}).summary("memoryos") is None
            True
        """
        return next((s for s in self.summaries if s.system == system), None)


def _progress_bar(enabled: bool) -> Callable[[int, str], Any]:
    """A factory of progress bars (tqdm) — or of silent counters when disabled or tqdm is missing."""

    def make(total: int, desc: str) -> Any:
        if enabled:
            try:
                from tqdm.auto import tqdm

                return tqdm(total=total, desc=desc, unit="it", leave=False)
            except ImportError:  # pragma: no cover - tqdm is in the bench extra
                pass
        return _Silent()

    return make


class _Silent:
    def update(self, n: int = 1) -> None:
        """Count nothing."""

    def close(self) -> None:
        """Close nothing."""


def _answer(
    model: BaseChatModel, question: LocomoQuestion, context: str, speakers: tuple[str, str], prompt: str
) -> tuple[str, int]:
    """Ask ``model``; return its answer and the tokens it cost (usage metadata, else an estimate)."""
    text = question.question
    if question.category == 5 and question.adversarial_answer:
        text += f" Select the correct answer: (a) Not mentioned in the conversation (b) {question.adversarial_answer}"
    system = prompt.format(user=speakers[0], agent=speakers[1], context=context)
    messages = [SystemMessage(system), HumanMessage(text)]
    reply = model.invoke(
        messages, config={"tags": ["nostream"], "metadata": {"lc_source": "memoryos"}, "run_name": "locomo_answer"}
    )
    answer = reply.text if isinstance(reply, AIMessage) else str(getattr(reply, "content", reply))
    usage = getattr(reply, "usage_metadata", None)
    tokens = int(usage["total_tokens"]) if usage else count_tokens(system + text) + count_tokens(answer)
    return answer.strip(), tokens


def _questions(sample: Mapping[str, Any], categories: frozenset[int]) -> list[LocomoQuestion]:
    return [q for q in load_questions(sample) if q.category in categories]


@dataclass(frozen=True)
class Protocol:
    """How a conversation is fed to the memory and where its questions are asked.

    The flat baselines rank the very pages the memory stores under the
    protocol (:meth:`pages`), so each protocol compares memory and flat search
    on equal pages.

    Attributes:
        name: ``harness``, ``plain`` or ``fresh``.
        plain: pages by the plain public API (:func:`~langchain_memoryos.evaluation.locomo.plain_pages`)
            rather than the harness pairing (:func:`~langchain_memoryos.evaluation.locomo.conversation_pages`).
        on_thread: questions asked on the conversation's own thread (else from a new thread, ``"questions"``).
        description: one line for reports.

    Example:
        >>> p = PROTOCOLS["plain"]
        >>> p.ingest_thread("conv-26"), p.question_thread("conv-26")
        ('conv-26', 'conv-26')
        >>> PROTOCOLS["fresh"].question_thread("conv-26"), PROTOCOLS["harness"].ingest_thread("conv-26")
        ('questions', 'locomo')
    """

    name: str
    plain: bool
    on_thread: bool
    description: str

    def pages(self, sample: Mapping[str, Any]) -> list[LocomoPage]:
        """The conversation's pages under this protocol (what the memory stores and the baselines rank).

        Example:
            >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
            ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi"},
            ...     {"speaker": "A", "dia_id": "D1:2", "text": "Yo"}]}}
            >>> [p.dia_ids for p in PROTOCOLS["harness"].pages(sample)]  # a lone speaker_b turn, then speaker_a's
            [('D1:1',), ('D1:2',)]
            >>> [p.dia_ids for p in PROTOCOLS["fresh"].pages(sample)]  # paired by position
            [('D1:1', 'D1:2')]
        """
        return plain_pages(sample) if self.plain else conversation_pages(sample)

    def embedding_texts(self, pages: Sequence[LocomoPage]) -> list[str]:
        r"""What the memory embeds for each page under this protocol (:attr:`DialoguePage.embedding_text`).

        The flat dense baselines rank by these, so they rank the memory's own page
        vectors (and the shared embedding cache computes each once).

        Example:
            >>> import datetime as dt
            >>> page = LocomoPage("I moved.", "Nice!", "Ana", "Ben", ("D1:1", "D1:2"), dt.datetime(2023, 5, 8), 1)
            >>> PROTOCOLS["harness"].embedding_texts([page]), PROTOCOLS["plain"].embedding_texts([page])
            (['Ana: I moved.\nBen: Nice!'], ['Ana: I moved.\nBen: Nice!'])
        """
        out: list[str] = []
        for page in pages:
            if self.plain:
                user, agent = plain_turn(page)
                stored = DialoguePage(id="", user_input=user, agent_response=agent)
            else:
                names = {"user_name": page.user_speaker, "agent_name": page.agent_speaker}
                stored = DialoguePage(
                    id="", user_input=page.user_input, agent_response=page.agent_response, metadata=names
                )
            out.append(stored.embedding_text)
        return out

    def ingest_thread(self, user_id: str) -> str:
        """The thread the conversation is fed on (the harness: ``"locomo"``; plain: the conversation's own).

        Example:
            >>> PROTOCOLS["harness"].ingest_thread("c")
            'locomo'
        """
        return user_id if self.plain else "locomo"

    def question_thread(self, user_id: str) -> str:
        """The thread questions are asked on.

        Example:
            >>> PROTOCOLS["plain"].question_thread("c")
            'c'
        """
        return self.ingest_thread(user_id) if self.on_thread else "questions"

    def ingest(
        self, memory: Any, sample: Mapping[str, Any], *, user_id: str, on_page: Callable[[], object] | None = None
    ) -> int:
        """Feed the conversation to ``memory``; return the pages added.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
            ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi"},
            ...     {"speaker": "A", "dia_id": "D1:2", "text": "Yo"}]}}
            >>> m = MemoryOS(); PROTOCOLS["plain"].ingest(m, sample, user_id="c")
            1
            >>> m.get_stm(user_id="c", thread_id="c")[0].user_input
            'B: Hi'
        """
        if self.plain:
            return ingest_plain(memory, sample, user_id=user_id, thread_id=self.ingest_thread(user_id), on_page=on_page)
        return ingest_conversation(
            memory, sample, user_id=user_id, thread_id=self.ingest_thread(user_id), on_page=on_page
        )


#: The three protocols: the harness pairing, the plain public API on the conversation's thread, and plain
#: from a new thread.
PROTOCOLS: dict[str, Protocol] = {
    "harness": Protocol(
        "harness",
        plain=False,
        on_thread=False,
        description="speaker_a + speaker_b pairs, names as metadata, one minute per page; questions from a new thread",
    ),
    "plain": Protocol(
        "plain",
        plain=True,
        on_thread=True,
        description="add_turn('Name: text', 'Name: text') pairs by position, one timestamp per session; "
        "questions on the conversation's thread",
    ),
    "fresh": Protocol(
        "fresh",
        plain=True,
        on_thread=False,
        description="plain ingest; questions from a new thread",
    ),
}


@dataclass(frozen=True)
class _Row:
    """One memory row of the report: a system read at one word budget."""

    name: str
    system: MemorySystem
    config: MemoryOSConfig


def _memory_rows(systems: Sequence[MemorySystem], budgets: Sequence[int] | None) -> list[_Row]:
    """A row per system and budget; the config's own budget keeps the system's name, others get `` ≤N words``."""
    rows: list[_Row] = []
    for system in systems:
        own = system.config.context_words
        if not budgets or own is None:
            rows.append(_Row(system.name, system, system.config))
            continue
        for budget in budgets:
            name = system.name if budget == own else f"{system.name} ≤{budget} words"
            rows.append(_Row(name, system, replace(system.config, context_words=budget)))
    return rows


def budget_baselines(baselines: Sequence[Baseline], budgets: Sequence[int] | None) -> list[Baseline]:
    """``baselines`` plus every word-budget baseline (``≤N words``) at each of ``budgets``.

    Example:
        >>> [b.name for b in budget_baselines([Baseline("last", 5), Baseline("bm25", words=1000)], [250, 1000])]
        ['last-5', 'bm25 ≤1000 words', 'bm25 ≤250 words']
    """
    out = list(baselines)
    kinds = list(dict.fromkeys(b.kind for b in baselines if b.words is not None))
    for budget in budgets or ():
        for kind in kinds:
            extra = Baseline(kind, words=budget)
            if extra not in out:
                out.append(extra)
    return out


def _check_budgets(budgets: Sequence[int] | None) -> None:
    if budgets is None:
        return
    bad = [b for b in budgets if isinstance(b, bool) or not isinstance(b, int) or b < 1]
    if not budgets or bad:
        raise InvalidInputError(f"budgets must be word counts >= 1, got {list(budgets)}")
    if len(set(budgets)) != len(budgets):
        raise InvalidInputError(f"budgets must be distinct, got {list(budgets)}")


def run_locomo(
    path: str | Path,
    *,
    systems: Sequence[MemorySystem] = DEFAULT_MEMORY_SYSTEMS,
    baselines: Sequence[Baseline] = DEFAULT_BASELINES,
    conversations: int | None = None,
    categories: Sequence[int] = (1, 2, 3, 4, 5),
    embeddings: Embeddings | None = None,
    model: BaseChatModel | None = None,
    answer_prompt: str = DEFAULT_ANSWER_PROMPT,
    progress: bool = True,
    n_boot: int = 1000,
    protocol: str = "harness",
    budgets: Sequence[int] | None = None,
    cv_grid: Grid | None = None,
    cv_systems: Sequence[str] | None = None,
    cv_passes: int = 2,
    answers: bool = True,
) -> LocomoRun:
    """Run the LoCoMo benchmark on a file (``locomo10.json`` format).

    Every memory system ingests each conversation **once**; every other word
    budget and every cross-validation grid point is read through another
    ``MemoryOS`` over the same store (retrieval only: reading changes no
    ranking input). All systems share one :class:`CachedEmbeddings`, so a text
    (a page, a question) is embedded once per run; the questions are embedded
    before anything is timed, so the latencies are those of ranking and
    packing (the query embedding's own p50/p95 are in ``meta["latency"]``).

    Args:
        path: the LoCoMo file.
        systems: memory configurations to test (each ingests every conversation).
        baselines: flat baselines on the same pages.
        conversations: only the first N conversations (``None``: all).
        categories: question categories to ask (1–5).
        embeddings: embeddings for the memory and the dense baselines
            (default: the offline MiniLM).
        model: a chat model to answer with; ``None`` scores retrieval only.
        answer_prompt: the system prompt for answers (``{user}``, ``{agent}``,
            ``{context}`` are filled in).
        progress: show progress bars (tqdm).
        n_boot: bootstrap resamples for the confidence intervals.
        protocol: ``harness``, ``plain`` or ``fresh`` (:data:`PROTOCOLS`).
        budgets: word budgets: each memory system with a budget is read at
            each (its own budget keeps its name, the others are named
            ``"<name> ≤N words"``), and every word-budget baseline is run at
            each (:func:`budget_baselines`). ``None``: the systems' own budgets.
        cv_grid: with a grid (:data:`~langchain_memoryos.evaluation.cv.DEFAULT_CV_GRID`),
            the constants are also fitted by leave-one-conversation-out
            coordinate ascent (:func:`~langchain_memoryos.evaluation.cv.loco_cv`)
            and the pooled held-out outcomes (categories 1–4) are reported as
            ``"<name> (LOCO-CV)"``; the constants chosen per fold are in
            ``meta["cv"]``.
        cv_systems: the systems to cross-validate (default: the first).
        cv_passes: coordinate-ascent passes.
        answers: also measure *answers in context* (every outcome's ``answer_hit`` and
            ``chance_hit`` are always scored): the first system is read again at each of its
            budgets with ``top_facts=0`` over the same store (``"<name>, no facts"``) and, last,
            with LoCoMo's observations written as its facts (``"<name>, oracle facts"``); the
            raw transcript's turns fill the same budgets (``"raw turns ≤N words"``, flat hybrid).
            Those rows are in ``outcomes`` and in ``meta["answers_in_context"]``
            (:func:`~langchain_memoryos.evaluation.answer_rows.answers_summary`), not in the
            recall summaries.

    Returns:
        The run: a summary per system, every question's outcome, and meta.

    Raises:
        ValueError: an unknown protocol, bad budgets, a bad grid, fewer than two
            conversations for cross-validation, or duplicate system names.

    Example:
        >>> import json, tempfile
        >>> sample = {"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B",
        ...     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
        ...     {"speaker": "A", "dia_id": "D1:1", "text": "I moved to Oslo."},
        ...     {"speaker": "B", "dia_id": "D1:2", "text": "Nice!"}]},
        ...     "qa": [{"question": "Where does A live?", "answer": "Oslo", "evidence": ["D1:1"], "category": 4}]}
        >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        ...     json.dump([sample], f)
        >>> run = run_locomo(f.name, systems=[], baselines=[Baseline("bm25", 1)], progress=False)
        >>> run.summary("bm25 top-1").recall
        1.0
        >>> run_locomo(f.name, protocol="live")
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.InvalidInputError: unknown protocol 'live'; use harness, plain or fresh
    """
    from langchain_memoryos.memory import MemoryOS

    if protocol not in PROTOCOLS:
        raise InvalidInputError(f"unknown protocol {protocol!r}; use harness, plain or fresh")
    proto = PROTOCOLS[protocol]
    if conversations is not None and conversations < 1:
        raise InvalidInputError(f"conversations must be >= 1, got {conversations}")
    wanted = frozenset(categories)
    if not wanted or not wanted <= {1, 2, 3, 4, 5}:
        raise InvalidInputError(f"categories must be a non-empty subset of 1-5, got {sorted(wanted)}")
    _check_budgets(budgets)
    baselines = budget_baselines(baselines, budgets)
    rows = _memory_rows(systems, budgets)
    cv_targets = _cv_targets(systems, cv_grid, cv_systems, cv_passes)
    names = [r.name for r in rows] + [f"{s.name} (LOCO-CV)" for s in cv_targets] + [b.name for b in baselines]
    answer_system = systems[0] if answers and systems else None
    answer_rows = [r for r in rows if r.system is answer_system]
    turn_budgets = [r.config.context_words for r in answer_rows if r.config.context_words is not None]
    extra = [variant_name(r.name, r.system.name, v) for v in (NO_FACTS, ORACLE_FACTS) for r in answer_rows]
    extra += [f"{RAW_TURNS} ≤{b} words" for b in turn_budgets]
    for group in (names, names + extra):
        if len(set(group)) != len(group):
            raise InvalidInputError(f"system names must be unique, got {group}")
    samples = load_locomo(path)[:conversations]
    if cv_targets and len(samples) < 2:
        raise InvalidInputError(f"cross-validation needs at least 2 conversations, the file gives {len(samples)}")
    inner = resolve_embeddings(embeddings)
    cached = inner if isinstance(inner, CachedEmbeddings) else CachedEmbeddings(inner)
    cached.embed_query("warm up")  # load the weights before anything is timed
    bar = _progress_bar(progress)
    outcomes: list[QuestionOutcome] = []
    ingest: dict[str, dict[str, float]] = {
        s.name: {"turns": 0, "seconds": 0.0, "calls": 0, "tokens": 0, "embed_seconds": 0.0} for s in systems
    }
    answer_cost: dict[str, float] = {"calls": 0, "tokens": 0}
    query_ms: list[float] = []
    kept: dict[str, dict[str, Any]] = {s.name: {} for s in cv_targets}
    oracle_kept: dict[str, tuple[Any, list[LocomoQuestion], Mapping[str, Any]]] = {}
    oracle_meta: dict[str, dict[str, int]] = {}
    started_run = time.perf_counter()
    try:
        for sample in samples:
            sample_id = str(sample.get("sample_id", ""))
            conv = sample["conversation"]
            speakers = (str(conv.get("speaker_a", "User")), str(conv.get("speaker_b", "Assistant")))
            questions = _questions(sample, wanted)
            question_ms = _embed_questions(cached, questions)
            query_ms += question_ms.values()
            pages = proto.pages(sample)
            turns = sum(len(p.dia_ids) for p in pages)
            for system in systems:
                memory = MemoryOS(config=system.config, embeddings=cached)
                keep = system.name in kept or system is answer_system
                try:
                    started, embed_before = time.perf_counter(), cached.seconds
                    with _Ticker(bar(len(pages), f"{sample_id} ingest [{system.name}]")) as tick:
                        proto.ingest(memory, sample, user_id=sample_id, on_page=tick)
                    stats = ingest[system.name]
                    stats["seconds"] += time.perf_counter() - started
                    stats["embed_seconds"] += cached.seconds - embed_before
                    stats["turns"] += turns
                    usage = memory.stats(user_id=sample_id)
                    stats["calls"] += usage.llm_calls
                    stats["tokens"] += usage.llm_tokens
                    for row in (r for r in rows if r.system is system):
                        thread = proto.question_thread(sample_id)
                        # read through the uncached embeddings: the memory's latency is end-to-end
                        reader = _reader(memory, row.config, inner, sample_id, thread)
                        try:
                            asked = list(_ask_memory(reader, sample_id, thread, questions, bar, row.name))
                            scored = [
                                _outcome(row.name, q, c, ids, latency, model, speakers, answer_prompt, answer_cost)
                                for q, c, ids, latency in asked
                            ]
                            outcomes += with_answers(scored, [context for _, context, _, _ in asked])
                        finally:
                            reader.close()
                    if system is answer_system:  # the same store without facts, read-only: later rows unchanged
                        for row in answer_rows:
                            config = replace(row.config, top_facts=0)
                            name = variant_name(row.name, system.name, NO_FACTS)
                            outcomes += _read_only_row(memory, config, cached, sample_id, proto, questions, name)
                        oracle_kept[sample_id] = (memory, questions, sample)
                    if system.name in kept:
                        kept[system.name][sample_id] = (memory, questions)
                finally:
                    if not keep:
                        memory.close()
            flat = FlatPages(
                pages, embeddings=cached, rrf_k=MemoryOSConfig().rrf_k, embed_texts=proto.embedding_texts(pages)
            )
            for baseline in baselines:
                progress_bar = bar(len(questions), f"{sample_id} questions [{baseline.name}]")
                embeds = baseline.kind in ("dense", "hybrid")
                scored, contexts = [], []
                for q in questions:
                    started = time.perf_counter()
                    chosen = baseline.select(flat, q.question)
                    # the question's embedding (computed once, before timing) is charged to each system that needs it
                    latency = (time.perf_counter() - started) * 1000 + (
                        question_ms.get(q.question, 0.0) if embeds else 0
                    )
                    ids = frozenset(d for page in chosen for d in page.dia_ids)
                    contexts.append(render_pages(chosen))
                    scored.append(
                        _outcome(
                            baseline.name,
                            q,
                            contexts[-1],
                            ids,
                            latency,
                            model,
                            speakers,
                            answer_prompt,
                            answer_cost,
                        )
                    )
                    progress_bar.update(1)
                progress_bar.close()
                outcomes += with_answers(scored, contexts)
            if turn_budgets:
                outcomes += _raw_turn_rows(pages, cached, questions, turn_budgets)
        main_seconds = time.perf_counter() - started_run
        cv_meta: dict[str, Any] = {}
        for system in cv_targets:
            assert cv_grid is not None
            cv_stores = {
                conv: (memory, [q for q in questions if q.category in (1, 2, 3, 4)])
                for conv, (memory, questions) in kept[system.name].items()
            }
            name = f"{system.name} (LOCO-CV)"
            held, info = _cross_validate(system.config, name, cv_stores, proto, cv_grid, cached, bar, passes=cv_passes)
            outcomes += held
            cv_meta[system.name] = info
        if cv_grid is not None and answer_system is not None and len(oracle_kept) > 1:
            for row in answer_rows:
                name = variant_name(row.name, row.system.name, CV_FACTS)
                stores = {conv: (memory, questions) for conv, (memory, questions, _) in oracle_kept.items()}
                held, info = _cross_validate(
                    row.config,
                    name,
                    stores,
                    proto,
                    ANSWERS_CV_GRID,
                    cached,
                    bar,
                    passes=1,
                    score=answers_over_chance,
                    objective="answers in context over chance, categories 1, 2, 4",
                )
                outcomes += held
                cv_meta[f"{row.name}: facts words"] = info
        for sample_id, (memory, questions, observed) in oracle_kept.items():  # last: it replaces the facts
            oracle_meta[sample_id] = write_observations(memory, observed, user_id=sample_id)
            for row in answer_rows:
                name = variant_name(row.name, row.system.name, ORACLE_FACTS)
                outcomes += _read_only_row(memory, row.config, cached, sample_id, proto, questions, name)
    finally:
        opened = [m for memories in kept.values() for m, _ in memories.values()]
        opened += [m for m, _, _ in oracle_kept.values() if all(m is not o for o in opened)]
        for memory in opened:
            memory.close()
    summaries = [summarize(name, [o for o in outcomes if o.system == name], n_boot=n_boot) for name in names]
    word_budgets = {r.name: r.config.context_words for r in rows if r.config.context_words is not None}
    word_budgets.update({b.name: b.words for b in baselines if b.words is not None})
    word_budgets.update({f"{s.name} (LOCO-CV)": s.config.context_words for s in cv_targets if s.config.context_words})
    meta: dict[str, Any] = {
        "file": str(path),
        "conversations": [str(s.get("sample_id", "")) for s in samples],
        "questions": len({(o.sample_id, o.question) for o in outcomes}),
        "categories": sorted(wanted),
        "embeddings": getattr(inner, "model_name", type(inner).__name__),
        "answer_model": None if model is None else getattr(model, "model_name", type(model).__name__),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "protocol": protocol,
        "protocol_description": proto.description,
        "words": "whitespace words of the injected context",
        "word_budgets": word_budgets,
        "seconds": round(main_seconds, 1),
        "ingest": {
            name: {
                "turns": int(s["turns"]),
                "seconds": round(s["seconds"], 3),
                "turns_per_s": round(s["turns"] / s["seconds"], 2) if s["seconds"] else None,
                "embedding_seconds": round(s["embed_seconds"], 3),
                "llm_calls_per_turn": s["calls"] / s["turns"] if s["turns"] else 0.0,
                "llm_tokens_per_turn": s["tokens"] / s["turns"] if s["turns"] else 0.0,
            }
            for name, s in ingest.items()
        },
        "embedding_cache": {"texts_embedded": cached.misses, "cache_hits": cached.hits},
        "latency": _latency_meta(query_ms, rows, outcomes),
        "configs": {s.name: _config_dict(s.config) for s in systems},
        "answers": {"llm_calls": int(answer_cost["calls"]), "llm_tokens": int(answer_cost["tokens"])},
    }
    if cv_targets:
        meta["cv"] = cv_meta
    if answer_system is not None:
        meta["answers_in_context"] = answers_summary(
            outcomes, _answer_table_rows(answer_rows, cv_targets, names), n_boot=n_boot
        )
        meta["answers_in_context"]["oracle_writes"] = oracle_meta
    return LocomoRun(summaries, outcomes, meta)


def _answer_table_rows(
    answer_rows: Sequence[_Row], cv_targets: Sequence[MemorySystem], names: Sequence[str]
) -> dict[int, dict[str, str]]:
    """Per budget of the measured memory, the rows of the answers-in-context table."""
    table: dict[int, dict[str, str]] = {}
    for row in answer_rows:
        budget = row.config.context_words
        if budget is None:
            continue
        system = row.system.name
        entry = {
            "with facts": row.name,
            "without facts": variant_name(row.name, system, NO_FACTS),
            "oracle facts": variant_name(row.name, system, ORACLE_FACTS),
            "hybrid": f"hybrid ≤{budget} words",
            "raw turns": f"{RAW_TURNS} ≤{budget} words",
        }
        for target in cv_targets:
            if target is row.system and target.config.context_words == budget:
                entry["with facts (LOCO-CV)"] = f"{system} (LOCO-CV)"
        entry["with facts (LOCO-CV words)"] = variant_name(row.name, system, CV_FACTS)
        table[budget] = {label: name for label, name in entry.items() if name in names or label != "hybrid"}
    return table


def _read_only_row(
    memory: Any,
    config: MemoryOSConfig,
    embeddings: Embeddings,
    user_id: str,
    proto: Protocol,
    questions: Sequence[LocomoQuestion],
    name: str,
) -> list[QuestionOutcome]:
    """A row read through another ``MemoryOS`` over ``memory``'s store with ``touch=False`` (state unchanged).

    Its latency means nothing (cached embeddings); it is scored for answers in context.
    """
    thread = proto.question_thread(user_id)
    reader = _reader(memory, config, embeddings, user_id, thread)
    try:
        asked = list(_ask_memory(reader, user_id, thread, questions, lambda n, d: _Silent(), name, touch=False))
    finally:
        reader.close()
    scored = [_outcome(name, q, context, ids, math.nan, None, ("", ""), "", {}) for q, context, ids, _ in asked]
    return with_answers(scored, [context for _, context, _, _ in asked])


def _raw_turn_rows(
    pages: Sequence[LocomoPage], embeddings: Embeddings, questions: Sequence[LocomoQuestion], budgets: Sequence[int]
) -> list[QuestionOutcome]:
    """The trivial store: the conversation's raw turns most similar to each question (flat hybrid), per budget."""
    turns = raw_turn_pages(pages)
    flat = FlatPages(
        turns,
        embeddings=embeddings,
        rrf_k=MemoryOSConfig().rrf_k,
        embed_texts=[f"{t.user_speaker}: {t.user_input}" for t in turns],
    )
    out: list[QuestionOutcome] = []
    for budget in budgets:
        baseline, name = Baseline("hybrid", words=budget), f"{RAW_TURNS} ≤{budget} words"
        scored, contexts = [], []
        for q in questions:
            chosen = baseline.select(flat, q.question)
            contexts.append(render_pages(chosen))
            ids = frozenset(d for page in chosen for d in page.dia_ids)
            scored.append(_outcome(name, q, contexts[-1], ids, math.nan, None, ("", ""), "", {}))
        out += with_answers(scored, contexts)
    return out


def _cv_targets(
    systems: Sequence[MemorySystem], grid: Grid | None, names: Sequence[str] | None, passes: int
) -> list[MemorySystem]:
    if grid is None:
        if names:
            raise InvalidInputError("cv_systems needs a cv_grid")
        return []
    if passes < 1:
        raise InvalidInputError(f"cv_passes must be >= 1, got {passes}")
    if not systems:
        raise InvalidInputError("cross-validation needs a memory system")
    wanted = list(names) if names else [systems[0].name]
    by_name = {s.name: s for s in systems}
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise InvalidInputError(f"cv_systems: unknown systems {unknown}; the systems are {list(by_name)}")
    for name in wanted:
        check_grid(grid, by_name[name].config)
    return [by_name[n] for n in wanted]


def _reader(memory: Any, config: MemoryOSConfig, embeddings: Embeddings, user_id: str, thread_id: str) -> Any:
    """Another ``MemoryOS`` over ``memory``'s store, with ``config``: reads without ingesting again.

    The user's state is loaded before it is returned, so no question's latency includes the load.
    """
    from langchain_memoryos.memory import MemoryOS

    reader = MemoryOS(store=memory.store, config=config, embeddings=embeddings)
    reader.get_stm(user_id=user_id, thread_id=thread_id)
    return reader


def _embed_questions(embeddings: CachedEmbeddings, questions: Sequence[LocomoQuestion]) -> dict[str, float]:
    """Embed each question once, alone (into the shared cache); return the milliseconds each took."""
    times: dict[str, float] = {}
    for q in questions:
        if q.question in times:
            continue
        started = time.perf_counter()
        embeddings.embed_query(q.question)
        times[q.question] = (time.perf_counter() - started) * 1000
    return times


def _latency_meta(
    query_ms: Sequence[float], rows: Sequence[_Row], outcomes: Sequence[QuestionOutcome]
) -> dict[str, Any]:
    """The query embedding's p50/p95; per memory row with a budget, its p95 over the flat hybrid's at that budget."""
    answerable = {1, 2, 3, 4}
    p95: dict[str, float] = {}
    for name in {o.system for o in outcomes}:
        values = [o.latency_ms for o in outcomes if o.system == name and o.category in answerable]
        if values:
            p95[name] = percentile(values, 95)
    ratios: dict[str, float] = {}
    for row in rows:
        budget = row.config.context_words
        flat = f"hybrid ≤{budget} words"
        if budget is not None and row.name in p95 and p95.get(flat):
            ratios[f"{row.name} / {flat}"] = round(p95[row.name] / p95[flat], 2)
    return {
        "note": "end-to-end per question: the memory reads through uncached embeddings (its own query embeddings "
        "included); a dense or hybrid baseline is charged the question's embedding, measured once alone",
        "query_embedding_ms": {
            "p50": round(percentile(query_ms, 50), 2) if query_ms else None,
            "p95": round(percentile(query_ms, 95), 2) if query_ms else None,
        },
        "p95_ratio": ratios,
    }


def _cross_validate(
    config: MemoryOSConfig,
    name: str,
    memories: Mapping[str, tuple[Any, Sequence[LocomoQuestion]]],
    proto: Protocol,
    grid: Grid,
    embeddings: Embeddings,
    bar: Callable[[int, str], Any],
    *,
    passes: int,
    score: Callable[[Sequence[QuestionOutcome]], float] = recall_1_4,
    objective: str = "evidence recall, categories 1-4",
) -> tuple[list[QuestionOutcome], dict[str, Any]]:
    """LOCO-CV of ``grid`` over the stores already filled; each grid point is read, never re-ingested.

    Each conversation is read as row ``name`` with the constants that maximise ``score`` over the other
    conversations (:func:`~langchain_memoryos.evaluation.cv.loco_cv`): the ranking constants on evidence
    recall, the facts' words on answers in context over chance
    (:func:`~langchain_memoryos.evaluation.cv.answers_over_chance`).
    """
    counter = bar(0, f"LOCO-CV [{name}] grid points")

    def evaluate(conv: str, params: Mapping[str, Any]) -> list[QuestionOutcome]:
        memory, questions = memories[conv]
        try:  # read through the cached embeddings: a grid point's latency means nothing
            return _read_only_row(memory, with_values(config, params), embeddings, conv, proto, questions, name)
        finally:
            counter.update(1)

    started = time.perf_counter()
    start = {key: config_value(config, key) for key in grid}
    try:
        cv = loco_cv(list(memories), evaluate, start, grid, passes=passes, score=score)
    finally:
        counter.close()
    info = {
        "grid": {key: list(values) for key, values in grid.items()},
        "objective": objective,
        "start": start,
        "chosen": cv.chosen,
        "train_recall" if score is recall_1_4 else "train_score": {
            conv: round(value, 4) for conv, value in cv.train_recall.items()
        },
        "evaluations": cv.evaluations,
        "seconds": round(time.perf_counter() - started, 1),
    }
    return cv.held_out, info


class _Ticker:
    """A context manager that closes a progress bar; calling it advances the bar by one."""

    def __init__(self, bar: Any) -> None:
        self._bar = bar

    def __enter__(self) -> Callable[[], None]:
        return lambda: self._bar.update(1)

    def __exit__(self, *exc: object) -> None:
        self._bar.close()


def _ask_memory(
    memory: Any,
    user_id: str,
    thread_id: str,
    questions: Sequence[LocomoQuestion],
    bar: Callable[[int, str], Any],
    name: str,
    *,
    touch: bool = True,
) -> Iterator[tuple[LocomoQuestion, str, frozenset[str], float]]:
    progress_bar = bar(len(questions), f"{user_id} questions [{name}]")
    try:
        for q in questions:
            started = time.perf_counter()
            ctx = memory.retrieve(q.question, user_id=user_id, thread_id=thread_id, touch=touch)
            latency = (time.perf_counter() - started) * 1000
            yield q, ctx.to_prompt(), frozenset(ctx.source_ids()), latency
            progress_bar.update(1)
    finally:
        progress_bar.close()


def _outcome(
    system: str,
    q: LocomoQuestion,
    context: str,
    ids: frozenset[str],
    latency: float,
    model: BaseChatModel | None,
    speakers: tuple[str, str],
    prompt: str,
    cost: dict[str, float],
) -> QuestionOutcome:
    outcome = QuestionOutcome(
        system=system,
        sample_id=q.sample_id,
        question=q.question,
        category=q.category,
        evidence=q.evidence,
        retrieved=ids,
        words=count_words(context),
        tokens=count_tokens(context),
        latency_ms=latency,
        answer=q.answer,
    )
    if model is None:
        return outcome
    prediction, tokens = _answer(model, q, context, speakers, prompt)
    cost["calls"] += 1
    cost["tokens"] += tokens
    return replace(outcome, prediction=prediction, llm_calls=1, llm_tokens=tokens)


def _config_dict(config: MemoryOSConfig) -> dict[str, Any]:
    return {
        key: getattr(config, key)
        for key in (
            "page_ranking",
            "top_segments",
            "top_pages",
            "top_facts",
            "context_words",
            "rrf_k",
            "lexical_weight",
            "dense_weight",
            "stm_capacity",
        )
    }
