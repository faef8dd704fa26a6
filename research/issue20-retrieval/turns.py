"""Packing policy experiment: show turns (one side of a page) instead of whole pages.

usage: python turns.py [harness|fresh] [--budget 1000]

The structured page score S (cv.py's LOCO-CV-fitted weights per held-out conversation, read from
results/<protocol>_1000.json) ranks pages; here each side of a page becomes a unit with score
S[page] + lam * T[turn], T = RRF of the turn's own cosine and BM25 ranks (turn-level index); units are packed in
score order into the budget (a turn's line + one date line per day + fence/title overhead), rendered like
past_conversation (date line, then "Name: text" lines in time order). Only the dia ids of the shown turns are
credited. lam is chosen by LOCO-CV (grid 0, .5, 1, 2, 3, 5). Compared at the same budget with page packing of
the same S and with the flat hybrid.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from common import CONVS, PAST_OVERHEAD, Conv, count_words, outcome, paired_diff, rrf_scores, table
from cv import Setup
from embcache import embed
from features import turn_texts
from langchain_memoryos.lexical import LexicalIndex, tokenize
from langchain_memoryos.schema import fence_memory, PAST_CONVERSATION_TITLE

LAMS = [0, 0.5, 1, 2, 3, 5]


class Turns:
    def __init__(self, cv: Conv):
        self.cv = cv
        self.page, self.text, self.dia = [], [], []
        for i, p in enumerate(cv.pages):
            ts = turn_texts(p)
            ids = cv.dia[i]
            # a page has one or two sides; its dia ids are in side order
            for j, t in enumerate(ts):
                self.page.append(i)
                self.text.append(t)
                self.dia.append(ids[j] if j < len(ids) else ids[-1])
        self.page = np.array(self.page)
        self.words = np.array([count_words(t) for t in self.text])
        self.vec = embed(self.text)
        self.lex = LexicalIndex()
        for j, t in enumerate(self.text):
            self.lex.add(str(j), tokenize(t + f"\n{cv.pages[self.page[j]].timestamp:%B %Y}"))

    def tscore(self, qi):
        cv = self.cv
        bm = np.zeros(len(self.text))
        for key, s in self.lex.search(tokenize(cv.questions[qi].question), len(self.text)):
            bm[int(key)] = s
        return rrf_scores(self.vec @ cv.qvec[qi], bm)


def pack_turns(order, tr: Turns, budget, used=PAST_OVERHEAD, scan=400):
    chosen, seen = [], set()
    for j in order[:scan]:
        d = tr.cv.day_idx[tr.page[j]]
        c = tr.words[j] + (0 if d in seen else 1)
        if used + c <= budget:
            chosen.append(int(j))
            used += c
            seen.add(d)
    return chosen, used


def render_turns(tr: Turns, chosen) -> str:
    lines, day = [], None
    for j in sorted(chosen):
        p = tr.cv.pages[tr.page[j]]
        if p.timestamp.date() != day:
            day = p.timestamp.date()
            lines.append(f"[{day.isoformat()}]")
        lines.append(" ".join(tr.text[j].split()))
    return fence_memory(f"## {PAST_CONVERSATION_TITLE}\n" + "\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("protocol", choices=["harness", "fresh", "plain"])
    ap.add_argument("--stm", default="none", choices=["none", "compact"])
    ap.add_argument("--from", dest="src", default="", help="results/<tag>.json with the LOCO-CV page weights")
    ap.add_argument("--budget", type=int, default=1000)
    a = ap.parse_args()
    setup = Setup(a.protocol, a.stm, False)
    import json as _j
    tag = f"plain_{a.stm}_1000" if a.protocol == "plain" else f"{a.protocol}_1000"
    tag = a.src or tag
    chosen_params = json.load(open(f"results/{tag}.json"))["chosen"]
    T = {cv.conv: Turns(cv) for cv in setup.convs}
    # per conversation and question: page score S (held-out params) and turn score
    S = {}
    for cv in setup.convs:
        p = chosen_params[cv.conv]
        rows = []
        for qi, x in enumerate(setup.feats[cv.conv][p.get("k", 20)]):
            s = x["f"].copy()
            for key, w in p.items():
                if key != "k" and w:
                    s += w * x[key]
            rows.append((s, T[cv.conv].tscore(qi)))
        S[cv.conv] = rows

    tr_cand = {}
    for cv in setup.convs:
        cand = np.ones(cv.n, bool)
        if a.protocol == "plain":
            cand[cv.stm_idx if a.stm == "none" else cv.stm_idx[-1:]] = False
        tr_cand[cv.conv] = cand[T[cv.conv].page]

    def run(cvs, lam, name="x", check=False):
        outs = []
        for cv in cvs:
            tr = T[cv.conv]
            for qi, (s, t) in enumerate(S[cv.conv]):
                u = s[tr.page] + lam * t
                u = np.where(tr_cand[cv.conv], u, -np.inf)
                order = np.lexsort((np.arange(len(u)), -u))
                order = order[np.isfinite(u[order])]
                used0, stm_ids = setup.stm_cost(cv, a.budget)
                ch, used = pack_turns(order, tr, a.budget, used=used0)
                if check and not stm_ids:
                    assert count_words(render_turns(tr, ch)) == used
                outs.append(outcome(name, cv, qi, {tr.dia[j] for j in ch} | stm_ids, used))
        return outs

    held, lams = [], {}
    for c in setup.convs:
        train = [x for x in setup.convs if x is not c]
        best = max(LAMS, key=lambda l: np.mean([o.recall for o in run(train, l) if o.evidence]))
        lams[c.conv] = best
        held += run([c], best, "turn packing (LOCO-CV lam)", check=True)
    pages = setup.run({}, setup.convs, a.budget)  # flat
    structured = []
    for c in setup.convs:
        structured += setup.run(chosen_params[c.conv], [c], a.budget)
    lam0 = run(setup.convs, 0)
    print(table({"flat hybrid (pages)": pages, "structured (pages)": structured, "structured, turn packing lam=0": lam0,
                 "structured, turn packing (CV lam)": held}))
    print("lam per held-out conv:", lams)
    print("turn packing - structured pages:", paired_diff(held, structured))
    print("turn packing - flat hybrid pages:", paired_diff(held, pages))
    _j.dump({"lams": lams, "held": [o.as_dict() for o in held]}, open(f"results/turns_{tag}.json", "w"))


if __name__ == "__main__":
    main()
