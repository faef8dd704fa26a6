"""Query latency of the recommended ranking vs the flat hybrid, same process, interleaved (harness pages).

usage: python latency.py [--repeat 1]

Both include what a retrieve must do per query: embed the question with the real MiniLM encoder (no cache),
cosine over the page matrix, BM25 over the page index, RRF, and packing. The structured ranking additionally
scores the 2- and 3-page windows (two more BM25 searches over window indices and two matrix products) and the
date match, then adds them (numpy). Ingest-time work (window vectors, window indices) is precomputed, as the
memory would store it.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from common import CONVS, Conv, pack, rrf_scores
from features import date_match
from langchain_memoryos.embeddings import encode_texts, resolve_embeddings
from langchain_memoryos.evaluation.metrics import percentile
from langchain_memoryos.lexical import LexicalIndex, page_tokens, tokenize

W = {2: 1.0, 3: 1.0}
W_DATE = 0.1


class Windows:
    def __init__(self, cv: Conv, mean_vectors: bool = True):
        self.w = {}
        for size in W:
            starts = np.array([i for i in range(cv.n - size + 1) if cv.session[i] == cv.session[i + size - 1]], int)
            vec = sum(cv.vec[starts + o] for o in range(size))
            vec = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-9)
            lex = LexicalIndex()
            for j, i in enumerate(starts):
                lex.add(str(j), [t for o in range(size) for t in page_tokens(cv.pages[i + o])])
            self.w[size] = (starts, vec.astype(np.float32), lex)


def bm25_array(lex, tokens, n):
    out = np.zeros(n)
    for key, s in lex.search(tokens, n):
        out[int(key)] = s
    return out


def flat(cv, emb, q):
    qv = encode_texts(emb, [q])[0]
    tokens = tokenize(q)
    f = rrf_scores(cv.vec @ qv, bm25_array(cv.lex, tokens, cv.n))
    return pack(np.argsort(-f, kind="stable"), cv.words, cv.day_idx, 1000)


def structured(cv, win: Windows, emb, q):
    qv = encode_texts(emb, [q])[0]
    tokens = tokenize(q)
    s = rrf_scores(cv.vec @ qv, bm25_array(cv.lex, tokens, cv.n))
    for size, (starts, vec, lex) in win.w.items():
        wf = rrf_scores(vec @ qv, bm25_array(lex, tokens, len(starts)))
        best = np.zeros(cv.n)
        for o in range(size):
            np.maximum.at(best, starts + o, wf)
        s += W[size] * best
    s += W_DATE * date_match(cv, q)
    return pack(np.argsort(-s, kind="stable"), cv.words, cv.day_idx, 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    emb = resolve_embeddings(None)
    emb.embed_query("warm up")
    t_flat, t_struct = [], []
    for c in CONVS:
        cv = Conv("harness", c)
        win = Windows(cv)
        for _ in range(a.repeat):
            for q in cv.questions:
                for fn, sink in ((flat, t_flat), (structured, t_struct)) if len(t_flat) % 2 else \
                        ((structured, t_struct), (flat, t_flat)):
                    t = time.perf_counter()
                    fn(cv, emb, q.question) if fn is flat else fn(cv, win, emb, q.question)
                    sink.append((time.perf_counter() - t) * 1000)
    for name, ts in (("flat hybrid", t_flat), ("structured", t_struct)):
        print(f"{name}: p50 {percentile(ts, 50):.2f} ms  p95 {percentile(ts, 95):.2f} ms  n={len(ts)}")
    print(f"ratio p95 {percentile(t_struct, 95) / percentile(t_flat, 95):.2f}  "
          f"p50 {percentile(t_struct, 50) / percentile(t_flat, 50):.2f}")
    # the ranking alone (query embedding excluded)
    cv = Conv("harness", "conv-43")
    win = Windows(cv)
    qv = encode_texts(emb, [q.question for q in cv.questions])
    extra = []
    for qi, q in enumerate(cv.questions):
        t = time.perf_counter()
        tokens = tokenize(q.question)
        for size, (starts, vec, lex) in win.w.items():
            wf = rrf_scores(vec @ qv[qi], bm25_array(lex, tokens, len(starts)))
            best = np.zeros(cv.n)
            for o in range(size):
                np.maximum.at(best, starts + o, wf)
        date_match(cv, q.question)
        extra.append((time.perf_counter() - t) * 1000)
    print(f"structure overhead alone (conv-43, {cv.n} pages): p50 {percentile(extra, 50):.2f} ms "
          f"p95 {percentile(extra, 95):.2f} ms")


if __name__ == "__main__":
    main()
