"""Shared machinery of the issue-20 retrieval prototypes.

Loads the package's own pages (dumps/<protocol>_<conv>.json, written by ingest_dump.py: the pages the memory
stores, page ids <-> dia ids, memory segments, thread STM), embeds pages/questions once (embcache), scores every
page for every question with the package's BM25 (LexicalIndex over page_tokens) and MiniLM cosine, fuses them by
RRF exactly as recall._rank_hybrid does (depth 100, k=20), and packs pages into a word budget exactly as
recall._fill counts words (page_words + one date line per day + fence/title overhead). Recall and CIs come from
the package's evaluation.metrics (QuestionOutcome, summarize, bootstrap_ci).
"""
from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from embcache import embed
from langchain_memoryos.evaluation.locomo import load_locomo, load_questions
from langchain_memoryos.evaluation.metrics import QuestionOutcome, bootstrap_ci, count_words, summarize
from langchain_memoryos.lexical import LexicalIndex, page_tokens, tokenize
from langchain_memoryos.schema import (
    PAST_CONVERSATION_TITLE,
    RECENT_CONVERSATION_TITLE,
    DialoguePage,
    MemoryContext,
    ScoredPage,
    fence_memory,
    page_words,
    stm_line,
)

DATA = "/work/shared/data/locomo_dev.json"
HERE = Path(__file__).parent
CONVS = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
DEPTH = 100
RRF_K = 20.0
CATS = (1, 2, 3, 4)
CATNAME = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

_SAMPLES = None


def samples():
    global _SAMPLES
    if _SAMPLES is None:
        _SAMPLES = {s["sample_id"]: s for s in load_locomo(DATA)}
    return _SAMPLES


def dia_key(d: str) -> tuple[int, int]:
    m = re.match(r"D(\d+):(\d+)", d)
    return (int(m.group(1)), int(m.group(2))) if m else (10**6, 0)


#: words of the fence + preamble + past-conversation title (what recall._fill counts before any page)
PAST_OVERHEAD = count_words(fence_memory(" ")) + count_words(f"## {PAST_CONVERSATION_TITLE}")
STM_TITLE_WORDS = count_words(f"## {RECENT_CONVERSATION_TITLE}")


class Conv:
    """One conversation's pages as the memory stores them, with everything retrieval needs precomputed."""

    def __init__(self, protocol: str, conv: str):
        d = json.loads((HERE / "dumps" / f"{protocol}_{conv}.json").read_text())
        self.protocol, self.conv, self.raw = protocol, conv, d
        rows = sorted(d["pages"], key=lambda p: dia_key(p["dia_ids"][0]))
        self.rows = rows
        self.pages = []
        for p in rows:
            meta = {"source_id": p["dia_ids"]}
            if p.get("user_name"):
                meta["user_name"] = p["user_name"]
            if p.get("agent_name"):
                meta["agent_name"] = p["agent_name"]
            self.pages.append(DialoguePage(id=p["id"], user_input=p["user_input"], agent_response=p["agent_response"],
                                           timestamp=dt.datetime.fromisoformat(p["timestamp"]), thread_id=p["thread_id"],
                                           meta=p["meta"], keywords=p["keywords"], metadata=meta,
                                           segment_id=p["segment_id"], linked=p["linked"]))
        n = self.n = len(self.pages)
        self.ids = [p.id for p in self.pages]
        self.dia = [tuple(p["dia_ids"]) for p in rows]
        self.session = np.array([dia_key(p["dia_ids"][0])[0] for p in rows])
        self.words = np.array([page_words(p) for p in self.pages])
        self.day = [p.timestamp.date() for p in self.pages]
        days = sorted(set(self.day))
        self.day_idx = np.array([days.index(x) for x in self.day])
        stm_ids = set(d["stm_ids"])
        self.stm_idx = [i for i, p in enumerate(self.pages) if p.id in stm_ids]
        # memory segments -> integer labels (STM pages have none: their own label)
        segs = {s["id"]: j for j, s in enumerate(d["segments"])}
        self.mem_seg = np.array([segs.get(p.segment_id, len(segs) + i) for i, p in enumerate(self.pages)])
        self.segments = d["segments"]
        self.vec = embed([p.embedding_text for p in self.pages])
        self.lex = LexicalIndex()
        for i, p in enumerate(self.pages):
            self.lex.add(str(i), page_tokens(p))
        sample = samples()[conv]
        self.speakers = (sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"])
        self.questions = [q for q in load_questions(sample) if q.category in CATS]
        self.qvec = embed([q.question for q in self.questions])
        self.asked = d["asked"]
        # neighbours in the same session (previous, next)
        self.prev = np.array([i - 1 if i > 0 and self.session[i - 1] == self.session[i] else -1 for i in range(n)])
        self.next = np.array([i + 1 if i + 1 < n and self.session[i + 1] == self.session[i] else -1 for i in range(n)])
        self._feat_cache: dict = {}

    # ------------------------------------------------------------------ base scores
    def cos(self, qi: int) -> np.ndarray:
        return self.vec @ self.qvec[qi]

    def bm25(self, qi: int) -> np.ndarray:
        out = np.zeros(self.n)
        for key, s in self.lex.search(tokenize(self.questions[qi].question), self.n):
            out[int(key)] = s
        return out

    def fused(self, qi: int, candidates: np.ndarray | None = None, wd: float = 1.0, wl: float = 1.0,
              k: float = RRF_K, depth: int = DEPTH) -> np.ndarray:
        """recall._rank_hybrid's RRF score per page (0 for pages in neither top-`depth`)."""
        return rrf_scores(self.cos(qi), self.bm25(qi), candidates, wd, wl, k, depth)


def rrf_scores(cos, bm, candidates=None, wd=1.0, wl=1.0, k=RRF_K, depth=DEPTH):
    n = len(cos)
    mask = np.ones(n, bool) if candidates is None else candidates
    out = np.zeros(n)
    c = np.where(mask, cos, -np.inf)
    order = np.argsort(-c, kind="stable")[: min(depth, int(mask.sum()))]
    out[order] += wd / (k + np.arange(1, len(order) + 1))
    b = np.where(mask, bm, 0.0)
    pos = int((b > 0).sum())
    order = np.argsort(-b, kind="stable")[: min(depth, pos)]
    out[order] += wl / (k + np.arange(1, len(order) + 1))
    return out


# ---------------------------------------------------------------------- packing
def pack(order, words, day_idx, budget, used=PAST_OVERHEAD, max_pages=40, scan=200):
    """recall._fill's policy: in rank order, a page joins while the context stays within budget
    (its page_words + 1 for a new day line); at most max_pages; a page that does not fit is skipped."""
    chosen = []
    seen = set()
    for i in order[:scan]:
        c = words[i] + (0 if day_idx[i] in seen else 1)
        if used + c <= budget:
            chosen.append(int(i))
            used += c
            seen.add(day_idx[i])
            if len(chosen) >= max_pages:
                break
    return chosen, used


def render(conv: Conv, chosen, stm=()) -> str:
    """The memory's own rendering (MemoryContext.to_prompt) of STM + chosen pages."""
    ctx = MemoryContext(query="", user_id=conv.conv, thread_id="t", stm=[conv.pages[i] for i in stm],
                        pages=[ScoredPage(conv.pages[i], 0.0) for i in chosen])
    return ctx.to_prompt()


def recall_of(q, ids) -> float:
    return sum(e in ids for e in q.evidence) / len(q.evidence) if q.evidence else float("nan")


# ---------------------------------------------------------------------- outcomes and summaries
def outcome(system, conv: Conv, qi, ids, words, ms=0.0) -> QuestionOutcome:
    q = conv.questions[qi]
    return QuestionOutcome(system=system, sample_id=conv.conv, question=q.question, category=q.category,
                           evidence=q.evidence, retrieved=frozenset(ids), words=int(words), tokens=0, latency_ms=ms)


def row(s) -> str:
    rc = s.recall_by_category
    return (f"| {s.system} | {100 * s.recall:.1f} [{100 * s.recall_ci[0]:.1f}, {100 * s.recall_ci[1]:.1f}] | "
            + " | ".join(f"{100 * rc.get(c, float('nan')):.1f}" for c in CATS)
            + f" | {s.words_mean:.0f} | {s.latency_p95_ms:.2f} |")


HEADER = ("| system | recall 1-4 [95% CI] | multi-hop | temporal | open-domain | single-hop | mean words | p95 ms |\n"
          "|---|---|---|---|---|---|---|---|")


def table(outcomes_by_system: dict[str, list[QuestionOutcome]]) -> str:
    return "\n".join([HEADER] + [row(summarize(k, v)) for k, v in outcomes_by_system.items()])


def paired_diff(a: list[QuestionOutcome], b: list[QuestionOutcome]) -> str:
    """mean recall difference a - b over the same questions, with a bootstrap 95% CI (metrics.bootstrap_ci)."""
    key = lambda o: (o.sample_id, o.question, o.evidence)
    rb = {key(o): o.recall for o in b if o.evidence}
    d = [o.recall - rb[key(o)] for o in a if o.evidence and key(o) in rb]
    lo, hi = bootstrap_ci(d)
    return f"{100 * np.mean(d):+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"


def load_all(protocol: str) -> list[Conv]:
    return [Conv(protocol, c) for c in CONVS]
