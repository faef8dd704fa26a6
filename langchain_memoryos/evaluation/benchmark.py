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
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.evaluation.answer_rows import (
    CV_FACTS,
    NO_FACTS,
    ORACLE_FACTS,
    RAW_TURNS,
    answers_summary,
    variant_name,
    with_answers,
    write_observations,
)
from langchain_memoryos.evaluation.baselines import DEFAULT_BASELINES, Baseline, FlatPages, render_pages
from langchain_memoryos.evaluation.cv import ANSWERS_CV_GRID, Grid, answers_over_chance
from langchain_memoryos.evaluation.embedding_cache import CachedEmbeddings
from langchain_memoryos.evaluation.locomo import LocomoQuestion, load_locomo
from langchain_memoryos.evaluation.metrics import QuestionOutcome, summarize
from langchain_memoryos.evaluation.protocols import PROTOCOLS, Protocol
from langchain_memoryos.evaluation.reading import (
    _ask_memory,
    _embed_questions,
    _outcome,
    _progress_bar,
    _questions,
    _reader,
    _Ticker,
)
from langchain_memoryos.evaluation.run_report import LocomoRun, _config_dict, _latency_meta
from langchain_memoryos.evaluation.run_rows import (
    _answer_table_rows,
    _cross_validate,
    _cv_targets,
    _raw_turn_rows,
    _read_only_row,
)
from langchain_memoryos.evaluation.systems import (
    DEFAULT_MEMORY_SYSTEMS,
    MemorySystem,
    _check_budgets,
    _memory_rows,
    budget_baselines,
)

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
