"""Per-question, per-page features for the structured ranking (all derived from data the memory has).

Ingest-time data (per page): embedding (the memory's), BM25 tokens (the memory's), session number (dialogue chain),
turn embeddings (each side of the page embedded on its own), sub-session tiles (TextTiling on page embeddings),
the page's k nearest pages by embedding (a cross-session topic graph), memory segment + its summary/keywords.
Query-time: the query embedding (one), BM25 over pages, and cheap numpy propagation.
"""
from __future__ import annotations

import calendar
import re

import numpy as np

from common import DEPTH, RRF_K, Conv, rrf_scores
from embcache import embed
from langchain_memoryos.lexical import LexicalIndex, tokenize


def turn_texts(p):
    if p.metadata.get("user_name") or p.metadata.get("agent_name"):
        return [f"{p.user_label}: {p.user_input}"] * bool(p.user_input) + \
               [f"{p.agent_label}: {p.agent_response}"] * bool(p.agent_response)
    return [t for t in (p.user_input, p.agent_response) if t]


def tiles(cv: Conv, tau: float) -> np.ndarray:
    """Sub-session topic tiles: a boundary between pages i and i+1 of a session when the cosine of
    the mean vectors of the two pages before and after the gap is below tau (TextTiling-like)."""
    lab = np.zeros(cv.n, int)
    cur = 0
    for i in range(1, cv.n):
        if cv.session[i] != cv.session[i - 1]:
            cur += 1
        else:
            a = cv.vec[max(i - 2, 0):i]
            a = a[cv.session[max(i - 2, 0):i] == cv.session[i]].mean(0)
            b = cv.vec[i:i + 2]
            b = b[cv.session[i:i + 2] == cv.session[i]].mean(0)
            if a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9) < tau:
                cur += 1
        lab[i] = cur
    return lab


def group_max(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    out = np.full(labels.max() + 1, -np.inf)
    np.maximum.at(out, labels, values)
    return out[labels]


def group_topk_mean(values, labels, k=2):
    out = np.zeros(len(values))
    for g in np.unique(labels):
        m = labels == g
        v = np.sort(values[m])[::-1][:k]
        out[m] = v.sum() / k
    return out


_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+),?\s+(\d{4})\b")
_MDY = re.compile(r"\b([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})\b")
_MY = re.compile(r"\b([A-Za-z]+),?\s+(\d{4})\b")


def question_dates(text: str):
    """Explicit dates in a question: (year, month, day|None) tuples."""
    out = []
    for d, m, y in _DMY.findall(text):
        if m.lower() in _MONTHS:
            out.append((int(y), _MONTHS[m.lower()], int(d)))
    for m, d, y in _MDY.findall(text):
        if m.lower() in _MONTHS:
            out.append((int(y), _MONTHS[m.lower()], int(d)))
    if not out:
        for m, y in _MY.findall(text):
            if m.lower() in _MONTHS:
                out.append((int(y), _MONTHS[m.lower()], None))
    return out


def date_match(cv: Conv, text: str) -> np.ndarray:
    """1 for pages on a date the question names (day given: within 1 day; month given: same month), else 0."""
    out = np.zeros(cv.n)
    for y, m, d in question_dates(text):
        for i, day in enumerate(cv.day):
            if d is None:
                if day.year == y and day.month == m:
                    out[i] = 1.0
            elif (y, m) == (day.year, day.month) and abs(day.day - d) <= 1:
                out[i] = 1.0
    return out


class Features:
    """Feature arrays for every question of a conversation, for one candidate set."""

    def __init__(self, cv: Conv, candidates: np.ndarray | None = None, taus=(0.35, 0.45, 0.55), knn=5, mean_windows=False):
        self.cv = cv
        self.mean_windows = mean_windows
        n = cv.n
        self.cand = np.ones(n, bool) if candidates is None else candidates
        # turn embeddings, page -> max over its turns
        tt = [turn_texts(p) for p in cv.pages]
        flat = [t for ts in tt for t in ts]
        self.turn_vec = embed(flat)
        self.turn_page = np.array([i for i, ts in enumerate(tt) for _ in ts])
        self.tiles = {tau: tiles(cv, tau) for tau in taus}
        sim = cv.vec @ cv.vec.T
        np.fill_diagonal(sim, -1)
        self.knn = np.argsort(-sim, axis=1)[:, :knn]
        # memory segments' second keys: summary embedding and keywords BM25
        self.seg_summary_vec = embed([s["summary"] or " " for s in cv.segments]) if cv.segments else None
        # overlapping windows of w consecutive pages of one session (w = 2, 3); a page's window score is the best
        # of the windows holding it
        from langchain_memoryos.lexical import page_tokens
        self.windows = {}
        for w in (2, 3):
            starts = [i for i in range(n - w + 1) if cv.session[i] == cv.session[i + w - 1]]
            if self.mean_windows:  # no extra encoding: the normalised sum of the pages' vectors
                vec = sum(cv.vec[np.array(starts, int) + o] for o in range(w)) if starts else np.zeros((0, cv.vec.shape[1]))
                vec = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-9)
            else:
                vec = embed(["\n".join(cv.pages[j].embedding_text for j in range(i, i + w)) for i in starts])
            lex = LexicalIndex()
            for j, i in enumerate(starts):
                lex.add(str(j), [t for jj in range(i, i + w) for t in page_tokens(cv.pages[jj])])
            self.windows[w] = (np.array(starts, int), vec, lex)
        self.seg_lex = LexicalIndex()
        for j, s in enumerate(cv.segments):
            self.seg_lex.add(str(j), tokenize(" ".join(s["keywords"]) + " " + s["summary"]))

    def base(self, qi: int):
        cv = self.cv
        cos = cv.cos(qi)
        bm = cv.bm25(qi)
        tcos = np.full(cv.n, -1.0)
        np.maximum.at(tcos, self.turn_page, self.turn_vec @ cv.qvec[qi])
        return cos, bm, tcos

    def compute(self, qi: int, wd=1.0, wl=1.0, wt=0.0, k=RRF_K, win_wd=1.0, win_wl=1.0):
        """dict of feature arrays for question qi (fused score with optional turn-level dense list)."""
        cv = self.cv
        cos, bm, tcos = self.base(qi)
        f = rrf_scores(cos, bm, self.cand, wd, wl, k, DEPTH)
        if wt:
            f = f + rrf_scores(tcos, np.zeros(cv.n), self.cand, wt, 0.0, k, DEPTH)
        f = np.where(self.cand, f, 0.0)
        prev = np.where(cv.prev >= 0, f[np.maximum(cv.prev, 0)], 0.0)
        nxt = np.where(cv.next >= 0, f[np.maximum(cv.next, 0)], 0.0)
        wins = {}
        wq = tokenize(cv.questions[qi].question)
        for w, (starts, vec, lex) in self.windows.items():
            win = np.zeros(cv.n)
            if len(starts):
                wb = np.zeros(len(starts))
                for key, sc in lex.search(wq, len(starts)):
                    wb[int(key)] = sc
                wcand = np.zeros(len(starts), bool)
                for o in range(w):
                    wcand |= self.cand[starts + o]
                wf = rrf_scores(vec @ cv.qvec[qi], wb, wcand, win_wd, win_wl, k, DEPTH)
                for o in range(w):
                    np.maximum.at(win, starts + o, wf)
            wins[w] = np.where(self.cand, win, 0.0)
        p2 = np.where((cv.prev >= 0) & (cv.prev[np.maximum(cv.prev, 0)] >= 0), f[np.maximum(cv.prev[np.maximum(cv.prev, 0)], 0)], 0.0)
        n2 = np.where((cv.next >= 0) & (cv.next[np.maximum(cv.next, 0)] >= 0), f[np.maximum(cv.next[np.maximum(cv.next, 0)], 0)], 0.0)
        feats = {
            "f": f,
            "prev": prev,
            "next": nxt,
            "nb2_max": np.maximum(p2, n2),
            "win": wins[2],
            "win3": wins[3],
            "nb_sum": prev + nxt,
            "nb_max": np.maximum(prev, nxt),
            "sess_max": group_max(f, cv.session),
            "sess_top2": group_topk_mean(f, cv.session, 2),
            "knn_mean": f[self.knn].mean(1),
            "memseg_max": group_max(f, cv.mem_seg),
            "date": date_match(cv, cv.questions[qi].question),
        }
        for tau, lab in self.tiles.items():
            feats[f"tile{tau}_max"] = group_max(f, lab)
        if self.seg_summary_vec is not None and len(cv.segments):
            sc = self.seg_summary_vec @ cv.qvec[qi]
            seg_rank = np.zeros(len(sc))
            seg_rank[np.argsort(-sc)] = 1.0 / (k + np.arange(1, len(sc) + 1))
            kw = np.zeros(len(sc))
            for key, s in self.seg_lex.search(tokenize(cv.questions[qi].question), len(sc)):
                kw[int(key)] = s
            kw_rank = np.zeros(len(sc))
            pos = int((kw > 0).sum())
            kw_rank[np.argsort(-kw)[:pos]] = 1.0 / (k + np.arange(1, pos + 1))
            lab = np.where(cv.mem_seg < len(sc), cv.mem_seg, -1)
            feats["seg_keys"] = np.where(lab >= 0, (seg_rank + kw_rank)[np.maximum(lab, 0)], 0.0)
        else:
            feats["seg_keys"] = np.zeros(cv.n)
        return feats
