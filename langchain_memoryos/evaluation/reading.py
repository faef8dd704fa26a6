"""Asking a LoCoMo run's questions: the memory's readers, each question's outcome, and the model's answers.

Example:
    >>> from langchain_memoryos.evaluation.locomo import LocomoQuestion
    >>> q = LocomoQuestion("c", "Where does A live?", 4, ("D1:1",), "Oslo", "")
    >>> o = _outcome("bm25", q, "A: I moved to Oslo.", frozenset({"D1:1"}), 1.0, None, ("A", "B"), "", {})
    >>> o.words, o.recall, o.prediction is None  # no model: retrieval is scored, nothing is answered
    (5, 1.0, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.evaluation.embedding_cache import CachedEmbeddings
from langchain_memoryos.evaluation.locomo import LocomoQuestion, load_questions
from langchain_memoryos.evaluation.metrics import QuestionOutcome, count_tokens, count_words

__all__: list[str] = []


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


class _Ticker:
    """A context manager that closes a progress bar; calling it advances the bar by one."""

    def __init__(self, bar: Any) -> None:
        self._bar = bar

    def __enter__(self) -> Callable[[], None]:
        return lambda: self._bar.update(1)

    def __exit__(self, *exc: object) -> None:
        self._bar.close()


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
