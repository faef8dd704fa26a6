"""The LoCoMo benchmark: the memory and the flat baselines on the same pages, in one run.

For each conversation of a LoCoMo file (DESIGN §6):

1. every memory configuration ingests it by the protocol of
   :func:`~langchain_memoryos.evaluation.locomo.ingest_conversation` (one user
   per conversation), timed;
2. every question is asked from a fresh thread (``"questions"``), so the
   context holds what the memory *retrieves*, not the tail of the
   conversation; the evidence recall is scored on ``ctx.source_ids()`` and the
   cost on the words of ``ctx.to_prompt()`` — everything that would be injected;
3. the baselines (:mod:`~langchain_memoryos.evaluation.baselines`) answer the
   same questions from the same pages;
4. with a chat model, each system's context is also used to answer, and the
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
from langchain_memoryos.evaluation.baselines import DEFAULT_BASELINES, Baseline, FlatPages, render_pages
from langchain_memoryos.evaluation.locomo import (
    LocomoQuestion,
    conversation_pages,
    ingest_conversation,
    load_locomo,
    load_questions,
)
from langchain_memoryos.evaluation.metrics import (
    QuestionOutcome,
    SystemSummary,
    count_tokens,
    count_words,
    summarize,
)

__all__ = [
    "DEFAULT_ANSWER_PROMPT",
    "DEFAULT_MEMORY_SYSTEMS",
    "LocomoRun",
    "MemorySystem",
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
        ValueError: system names must be unique, got ['memoryos', 'memoryos']
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
) -> LocomoRun:
    """Run the LoCoMo benchmark on a file (``locomo10.json`` format).

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

    Returns:
        The run: a summary per system, every question's outcome, and meta.

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
    """
    from langchain_memoryos.memory import MemoryOS

    if conversations is not None and conversations < 1:
        raise ValueError(f"conversations must be >= 1, got {conversations}")
    wanted = frozenset(categories)
    if not wanted or not wanted <= {1, 2, 3, 4, 5}:
        raise ValueError(f"categories must be a non-empty subset of 1-5, got {sorted(wanted)}")
    names = [s.name for s in systems] + [b.name for b in baselines]
    if len(set(names)) != len(names):
        raise ValueError(f"system names must be unique, got {names}")
    samples = load_locomo(path)[:conversations]
    embeddings = resolve_embeddings(embeddings)
    embeddings.embed_query("warm up")  # load the weights before anything is timed
    bar = _progress_bar(progress)
    outcomes: list[QuestionOutcome] = []
    ingest: dict[str, dict[str, float]] = {
        s.name: {"turns": 0, "seconds": 0.0, "calls": 0, "tokens": 0} for s in systems
    }
    answer_cost: dict[str, float] = {"calls": 0, "tokens": 0}
    for sample in samples:
        sample_id = str(sample.get("sample_id", ""))
        conv = sample["conversation"]
        speakers = (str(conv.get("speaker_a", "User")), str(conv.get("speaker_b", "Assistant")))
        questions = _questions(sample, wanted)
        pages = conversation_pages(sample)
        turns = sum(len(p.dia_ids) for p in pages)
        for system in systems:
            memory = MemoryOS(config=system.config, embeddings=embeddings)
            try:
                started = time.perf_counter()
                with _Ticker(bar(len(pages), f"{sample_id} ingest [{system.name}]")) as tick:
                    ingest_conversation(memory, sample, user_id=sample_id, on_page=tick)
                stats = ingest[system.name]
                stats["seconds"] += time.perf_counter() - started
                stats["turns"] += turns
                usage = memory.stats(sample_id)
                stats["calls"] += usage.llm_calls
                stats["tokens"] += usage.llm_tokens
                for q, context, ids, latency in _ask_memory(memory, sample_id, questions, bar, system.name):
                    outcomes.append(
                        _outcome(system.name, q, context, ids, latency, model, speakers, answer_prompt, answer_cost)
                    )
            finally:
                memory.close()
        flat = FlatPages(pages, embeddings=embeddings, rrf_k=MemoryOSConfig().rrf_k)
        for baseline in baselines:
            progress_bar = bar(len(questions), f"{sample_id} questions [{baseline.name}]")
            for q in questions:
                started = time.perf_counter()
                chosen = baseline.select(flat, q.question)
                latency = (time.perf_counter() - started) * 1000
                ids = frozenset(d for page in chosen for d in page.dia_ids)
                outcomes.append(
                    _outcome(
                        baseline.name,
                        q,
                        render_pages(chosen),
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
    summaries = [summarize(name, [o for o in outcomes if o.system == name], n_boot=n_boot) for name in names]
    meta: dict[str, Any] = {
        "file": str(path),
        "conversations": [str(s.get("sample_id", "")) for s in samples],
        "questions": len({(o.sample_id, o.question) for o in outcomes}),
        "categories": sorted(wanted),
        "embeddings": getattr(embeddings, "model_name", type(embeddings).__name__),
        "answer_model": None if model is None else getattr(model, "model_name", type(model).__name__),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "protocol": "turn pairs per page; questions asked from a fresh thread; words = whitespace words of the "
        "injected context",
        "ingest": {
            name: {
                "turns": int(s["turns"]),
                "seconds": round(s["seconds"], 3),
                "turns_per_s": round(s["turns"] / s["seconds"], 2) if s["seconds"] else None,
                "llm_calls_per_turn": s["calls"] / s["turns"] if s["turns"] else 0.0,
                "llm_tokens_per_turn": s["tokens"] / s["turns"] if s["turns"] else 0.0,
            }
            for name, s in ingest.items()
        },
        "configs": {s.name: _config_dict(s.config) for s in systems},
        "answers": {"llm_calls": int(answer_cost["calls"]), "llm_tokens": int(answer_cost["tokens"])},
    }
    return LocomoRun(summaries, outcomes, meta)


class _Ticker:
    """A context manager that closes a progress bar; calling it advances the bar by one."""

    def __init__(self, bar: Any) -> None:
        self._bar = bar

    def __enter__(self) -> Callable[[], None]:
        return lambda: self._bar.update(1)

    def __exit__(self, *exc: object) -> None:
        self._bar.close()


def _ask_memory(
    memory: Any, user_id: str, questions: Sequence[LocomoQuestion], bar: Callable[[int, str], Any], name: str
) -> Iterator[tuple[LocomoQuestion, str, frozenset[str], float]]:
    progress_bar = bar(len(questions), f"{user_id} questions [{name}]")
    try:
        for q in questions:
            started = time.perf_counter()
            ctx = memory.retrieve(q.question, user_id=user_id, thread_id="questions")
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
