"""Simulate the proposed write path on the candidate table, through the package's own AMU code.

Pages leave STM in order (one thread, STM capacity 7: page i leaves when page i+7 arrives; the last 7 stay
in STM, as in the real memory after ingestion). Each leaving page's candidates (table.py) pass:
gate (a score -> record.confidence, admitted iff >= tau_g, the package's ``gate``) -> candidates -> the
heuristic relation judge -> fuse -> commit, i.e. ``langchain_memoryos.amu.write_record`` itself, with the
capacity rule swapped by ``evict``.

Used as a library by the experiment scripts (gates.py, ...).
"""

from __future__ import annotations

import copy
import datetime as dt
import pickle
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, "/work/main")

from langgraph.store.memory import InMemoryStore  # noqa: E402

import langchain_memoryos.amu as amu  # noqa: E402
from langchain_memoryos.amu import AMUSettings, write_record  # noqa: E402
from langchain_memoryos.config import MemoryOSConfig  # noqa: E402
from langchain_memoryos.controllers import HeuristicController  # noqa: E402
from langchain_memoryos.controllers.base import RelationJudgement  # noqa: E402
from langchain_memoryos.pipeline.effects import Services, run_sync  # noqa: E402
from langchain_memoryos.schema import MemoryRecord  # noqa: E402
from langchain_memoryos.store.repository import MemoryRepository  # noqa: E402

from common import CachedEmbeddings, full_metrics, plain_pairs, pooled_full, quality, samples  # noqa: E402
from extract import split_speaker  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
STM = 7
_ORIGINAL_EVICT = amu.evict_over_capacity


def load_table() -> list[dict]:
    with open(OUT / "table.pkl", "rb") as fh:
        return pickle.load(fh)


def user_names(pairs: list[dict]) -> list[str | None]:
    """The user's name when page i leaves STM: the most frequent user-side prefix of the pages seen so far."""
    counts: Counter = Counter()
    first: dict[str, int] = {}
    seen: list[str | None] = []
    for p in pairs:
        name, _ = split_speaker(p["user_input"])
        if name:
            counts[name] += 1
            first.setdefault(name, len(first))
        seen.append(max(counts, key=lambda n: (counts[n], -first[n])) if counts else None)
    out = []
    for i in range(len(pairs)):
        j = min(i + STM, len(pairs) - 1)  # the page whose arrival pushes page i out
        out.append(seen[j])
    return out


class NamedJudge(HeuristicController):
    """The heuristic judge, reading slots on the 'the user' form of named facts (slots are written for it)."""

    def __init__(self, name: str, narrative: bool = True, **kw) -> None:
        super().__init__(**kw)
        self.name_ = name
        self.narrative = narrative

    def _neutral(self, r: MemoryRecord) -> MemoryRecord:
        c = copy.copy(r)
        c.summary = re.sub(rf"\b{re.escape(self.name_)}'s\b", "the user's", c.summary)
        c.summary = re.sub(rf"\b{re.escape(self.name_)}\b", "the user", c.summary)
        c.summary = c.summary[:1].upper() + c.summary[1:]
        return c

    def judge_relations(self, record, candidates) -> RelationJudgement:
        out = super().judge_relations(self._neutral(record), [(self._neutral(c), s) for c, s in candidates])
        if self.narrative:
            # narrative facts (events, no slot) are never 'updated' by a change cue: "just", "started", "new"
            # are how people tell events; only a slot (location, employer, ...) changes value
            for rel in out.relations:
                if rel.reason.startswith("change cue with new entities"):
                    rel.label, rel.reason = "duplicate", f"similarity {rel.similarity:.2f} in duplicate band"
                elif rel.reason.startswith("change cue on a shared entity"):
                    rel.label, rel.reason = "separate", "narrative fact: no slot changes"
        return out


def evict_utility(state, kind, capacity, *, keep):
    """Capacity: evict the least useful fact (lowest confidence = gate score), oldest first among equals."""
    facts = state.facts[kind]
    if len(facts) <= capacity:
        return []
    ordered = sorted((r for r in facts.values() if r.id != keep),
                     key=lambda r: (r.confidence, r.updated_at, r.created_at, r.id))
    evicted = ordered[: len(facts) - capacity]
    for old in evicted:
        state.delete_fact(kind, old.id)
    return evicted


MMR_LAMBDA = 0.5


def evict_mmr(state, kind, capacity, *, keep):
    """Capacity: evict the fact with the lowest score minus lambda x its highest cosine to another fact
    (a redundant fact goes before a unique one of similar usefulness)."""
    facts = state.facts[kind]
    if len(facts) <= capacity:
        return []
    evicted = []
    while len(facts) > capacity:
        ids = list(facts)
        vecs = np.stack([state.fact_index[kind].get(i) for i in ids])
        sim = vecs @ vecs.T
        np.fill_diagonal(sim, -1.0)
        red = sim.max(1)
        util = [(facts[i].confidence - MMR_LAMBDA * max(0.0, float(red[k])), facts[i].updated_at, i)
                for k, i in enumerate(ids) if i != keep]
        _, _, worst = min(util)
        evicted.append(facts[worst])
        state.delete_fact(kind, worst)
    return evicted


def run_conv(sample: dict, rows: list[dict], score: Callable[[dict], float], *, tau: float = 0.5,
             evict: str = "fifo", capacity: int = 100, sides: str = "user", flush_stm: bool = False,
             emb: CachedEmbeddings, dup_similarity: float | None = None, narrative: bool = True,
             field: str = "fact", group: str = "sentence", per_turn: int = 3) -> dict:
    """One conversation through the proposed path; returns the stored facts and the write log counts."""
    pairs = plain_pairs(sample)
    names = user_names(pairs)
    last = len(pairs) if flush_stm else len(pairs) - STM
    by_page: dict[int, list[dict]] = {}
    for r in rows:
        by_page.setdefault(r["page"], []).append(r)
    config = MemoryOSConfig(user_kb_capacity=capacity, gate_threshold=tau,
                            **({"duplicate_similarity": dup_similarity} if dup_similarity else {}))
    thresholds = config.thresholds("all-MiniLM-L6-v2")
    settings = AMUSettings.from_config(config, thresholds)
    user = sample["conversation"]["speaker_a"]
    judge = NamedJudge(names[-1] or user, narrative=narrative, thresholds=thresholds)
    repo = MemoryRepository(384)
    services = Services(InMemoryStore(), emb, judge, offline=judge)
    amu.evict_over_capacity = {"utility": evict_utility, "mmr": evict_mmr}.get(evict, _ORIGINAL_EVICT)
    actions: Counter = Counter()
    records = []
    for i in range(max(0, last)):
        name = names[i]
        admitted: dict[int, list[tuple[float, dict]]] = {}
        for r in by_page.get(i, []):
            if sides == "user" and name is not None and r["speaker"] != name:
                continue
            if sides == "known" and r["speaker"] != user:
                continue  # the user's name is given (e.g. metadata user_name): speaker_a
            s = float(score(r))
            if s < tau or not r[field]:
                actions["filtered"] += 1
                continue  # the package's gate would log it 'filtered' (G < tau_g): skip the round trip
            admitted.setdefault(r["side"], []).append((s, r))
        units: list[tuple[float, list[dict]]] = []
        for side, items in sorted(admitted.items()):
            if group == "turn":
                # one fact per turn: its best `per_turn` admitted sentences, in turn order
                best = sorted(items, key=lambda t: -t[0])[:per_turn]
                best.sort(key=lambda t: t[1]["index"])
                units.append((max(x for x, _ in best), [r for _, r in best]))
            else:
                units.extend((x, [r]) for x, r in items)
        for s, rs in units:
            r = rs[0]
            ents = [e for x in rs for e in x["entities"]] or [w for w in re.findall(r"[A-Za-z]{4,}", r["sentence"])][:3] or ["x"]
            aspect = next((x["aspect"] for x in rs if x["aspect"] != "other"), "activity")
            intent = next((x["intent"] for x in rs if x["intent"] not in ("other", "request")), "inform")
            rec = MemoryRecord(
                kind="user", aspect=aspect, intent=intent,
                personal=True, entities=ents[:6], summary=" ".join(x[field] for x in rs), confidence=round(s, 6),
                source_page_ids=[r["dia_id"]],
                created_at=pairs[i]["timestamp"] + dt.timedelta(seconds=i),
            )
            records.append((rec, pairs[i]["timestamp"] + dt.timedelta(seconds=i)))

    def step():
        state = yield from repo.load(sample["sample_id"])
        for rec, now in records:
            vec = emb.encode([rec.summary])[0]
            events = yield from write_record(state, rec, settings, now=now, source="page", vector=vec)
            for e in events:
                actions[e.action] += 1
        return state

    state = run_sync(step(), services)
    amu.evict_over_capacity = _ORIGINAL_EVICT
    facts = sorted(state.facts["user"].values(), key=lambda r: r.created_at)
    return {"facts": facts, "actions": dict(actions)}


def evaluate(results: dict[str, dict], emb: CachedEmbeddings, capacity: int = 100) -> dict:
    rows = []
    for s in samples():
        res = results.get(s["sample_id"])
        if res is None:
            continue
        facts = res["facts"]
        m = full_metrics(s, [f.summary for f in facts], [set(f.source_page_ids) for f in facts], emb)
        m["conv"] = s["sample_id"]
        m["capacity_reached"] = len(facts) >= capacity or res["actions"].get("evicted", 0) > 0
        m["actions"] = res["actions"]
        m["quality"] = quality([f.summary for f in facts], s["conversation"]["speaker_a"])
        rows.append(m)
    tot = pooled_full(rows)
    n = sum(r["facts"] for r in rows) or 1
    tot["quality"] = {k: sum(r["quality"][k] * r["facts"] for r in rows) / n for k in rows[0]["quality"]}
    return {"rows": rows, "pooled": tot}


__all__ = ["evaluate", "load_table", "run_conv", "user_names", "np"]
