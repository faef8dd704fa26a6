"""How many answers good facts could add beside the memory's pages: the ceiling of the oracle row.

Usage: ``python benchmarks/oracle_headroom.py [LOCOMO_FILE] [--protocol plain] [--splits 250+250,400+100,450+50]
[--pick cosine|novel|answer]``.

Each conversation is ingested under the protocol with the offline default. For a split ``P+O`` every
category 1, 2 and 4 question gets two contexts: the memory's own retrieval at ``P+O`` words with no
facts shown (``top_facts=0``), and the memory's retrieval at ``P`` words with LoCoMo's ``observation``
annotations — the annotators' facts, dated by their session — ranked by cosine similarity to the
question and packed into the other ``O`` words, with no filter against the pages. With ``--pick answer`` the
observations are ranked by how many of the question's gold answer tokens they hold (then by cosine): a read side
that knows the answer, so its gain is the ceiling of any read side over these observations; ``--pick novel``
ranks by cosine and skips an observation that says nothing the context does not (the read side's own filter,
:func:`~langchain_memoryos.retrieval.facts.Shown`). Each observation's
relative time ("last year", "yesterday") is resolved against its session's date first, as ``add_fact`` does.
A split written
``P++O`` keeps the pages at ``P`` words in both contexts and gives the observations ``O`` words
*beyond* them (a longer context: the gain of good facts with words to spare). Each context is scored by
*answers in context* (:func:`~langchain_memoryos.evaluation.answers.answer_in_context`), the gain
over chance as in the benchmark's answer rows (:func:`~langchain_memoryos.evaluation.answers.chance_corrected_gain`).

Prints a Markdown table: per split, both rows' answers and chance, and the gain of the observations
with its paired 95 % CI. This bounds what any read side can make of good facts at these words.
"""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from langgraph.store.memory import InMemoryStore

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.controllers.dates import resolve_relative_time
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.evaluation.answers import (
    answer_in_context,
    answer_tokens,
    chance_corrected_gain,
    chance_partners,
)
from langchain_memoryos.evaluation.benchmark import PROTOCOLS
from langchain_memoryos.evaluation.embedding_cache import CachedEmbeddings
from langchain_memoryos.evaluation.locomo import load_locomo, load_questions, session_dates
from langchain_memoryos.retrieval.facts import Shown

SplitHits = dict[str, list[tuple[bool, bool]]]


def _observations(sample: dict[str, Any]) -> list[str]:
    """LoCoMo's observations of a conversation, each as ``"[7 May 2023] text"`` (its session's date, its relative
    time resolved against that date)."""
    dates = session_dates(sample)
    lines: list[str] = []
    for key, per_speaker in (sample.get("observation") or {}).items():
        session = int(re.sub(r"\D", "", key) or 0)
        when = dates.get(session)
        prefix = f"[{when.day} {when:%B %Y}] " if when else ""
        for items in per_speaker.values():
            texts = [str(item[0]).strip() for item in items if item and str(item[0]).strip()]
            lines += [prefix + (resolve_relative_time(t, when) if when else t) for t in texts]
    return lines


def _pack(lines: Sequence[str], scores: np.ndarray[Any, Any], words: int, shown: Shown | None = None) -> str:
    """The best-scored lines, in score order, while they fit in ``words`` (with ``shown``: those saying more)."""
    picked: list[str] = []
    used = 0
    for i in np.argsort(-scores):
        cost = len(lines[i].split())
        if used + cost > words:
            continue
        if shown is not None:
            if not any(shown.new_in(lines[i])):
                continue
            shown = shown.with_text(lines[i])
        picked.append(lines[i])
        used += cost
    return "\n".join(picked)


def _score(questions: Sequence[Any], contexts: Sequence[frozenset[str]], out: list[tuple[bool, bool]]) -> None:
    partner = chance_partners(len(questions))
    for i, q in enumerate(questions):
        hit = answer_in_context(q.answer, contexts[i])
        chance = answer_in_context(q.answer, contexts[partner[i]])
        if hit is not None and chance is not None:
            out.append((hit, chance))


def _conversation(
    sample: dict[str, Any],
    protocol: Any,
    embeddings: CachedEmbeddings,
    splits: Sequence[tuple[str, int, int]],
    hits: dict[str, SplitHits],
    pick: str = "cosine",
) -> None:
    """Ingest one conversation and score both contexts of every split on its questions."""
    user = str(sample["sample_id"])
    questions = [q for q in load_questions(sample) if q.category in (1, 2, 4)]
    lines = _observations(sample)
    if not lines or not questions:
        print(f"{user}: no observations or no questions, left out", flush=True)
        return
    store = InMemoryStore()
    memory = MemoryOS(store=store, embeddings=embeddings)
    protocol.ingest(memory, sample, user_id=user)
    memory.close()
    vectors = np.asarray(embeddings.embed_documents(lines), dtype=float)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = np.asarray([embeddings.embed_query(q.question) for q in questions], dtype=float)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    scores = queries @ vectors.T
    if pick == "answer":  # the gold tokens an observation holds first, cosine breaking ties
        held = [answer_tokens(line) for line in lines]
        for i, q in enumerate(questions):
            gold = answer_tokens(str(q.answer))
            scores[i] += np.asarray([len(gold & h) for h in held], dtype=float) * 10.0
    thread = protocol.question_thread(user)
    readers: dict[int, MemoryOS] = {}
    prompts: dict[tuple[int, int], str] = {}

    def prompt(words: int, i: int) -> str:
        if words not in readers:
            config = MemoryOSConfig(context_words=words, top_facts=0)
            readers[words] = MemoryOS(store=store, embeddings=embeddings, config=config)
        if (words, i) not in prompts:
            ctx = readers[words].retrieve(questions[i].question, user_id=user, thread_id=thread, touch=False)
            prompts[(words, i)] = ctx.to_prompt()
        return prompts[(words, i)]

    for name, pages, extra in splits:
        alone = pages if "++" in name else pages + extra
        base = [answer_tokens(prompt(alone, i)) for i in range(len(questions))]
        mixed = [
            answer_tokens(
                prompt(pages, i)
                + "\n"
                + _pack(lines, scores[i], extra, Shown.of(prompt(pages, i)) if pick == "novel" else None)
            )
            for i in range(len(questions))
        ]
        _score(questions, base, hits[name]["pages"])
        _score(questions, mixed, hits[name]["pages + observations"])
    for reader in readers.values():
        reader.close()
    print(f"{user}: {len(questions)} questions, {len(lines)} observations", flush=True)


def _pct(rows: Sequence[tuple[bool, bool]], k: int) -> str:
    return f"{100 * sum(r[k] for r in rows) / len(rows):.1f} %"


def main() -> None:
    """Run the headroom measurement and print its table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("locomo", nargs="?", default="../shared/data/locomo_dev.json")
    parser.add_argument("--protocol", default="plain", choices=sorted(PROTOCOLS))
    parser.add_argument("--splits", default="250+250,400+100,450+50,500++500")
    parser.add_argument("--pick", default="cosine", choices=("cosine", "novel", "answer"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    splits = [(s, *map(int, re.split(r"\+\+?", s))) for s in args.splits.split(",")]
    embeddings = CachedEmbeddings(resolve_embeddings())
    hits: dict[str, SplitHits] = {s: {"pages": [], "pages + observations": []} for s, _, _ in splits}
    for sample in load_locomo(args.locomo):
        _conversation(sample, PROTOCOLS[args.protocol], embeddings, splits, hits, args.pick)
    head = "pages alone | chance | pages + observations | chance | gain over chance (95 % CI)"
    print(f"| split (pages + observations words) | {head} |")
    print("|---|---|---|---|---|---|")
    for name, _, _ in splits:
        base, mixed = hits[name]["pages"], hits[name]["pages + observations"]
        gain = chance_corrected_gain(
            [h for h, _ in mixed], [c for _, c in mixed], [h for h, _ in base], [c for _, c in base]
        )
        print(f"| {name} | {_pct(base, 0)} | {_pct(base, 1)} | {_pct(mixed, 0)} | {_pct(mixed, 1)} | {gain.points()} |")


if __name__ == "__main__":
    main()
