"""The proposed write path inside the real MemoryOS (monkeypatched; research prototype, not product code).

* ``FactController`` (a HeuristicController): ``analyze_page`` returns, for every page leaving STM, one
  typed record per speaker side — the side's best (<= 3) fact sentences rewritten in the third person with
  names resolved (facts.py) — with ``confidence`` = the write-gate score (rule utility, or a fitted
  logistic score), so the package's gate ``G = personal·q_aspect·q_intent·r_entities·r_summary·confidence
  >= tau_g`` admits or filters it (logged). Who the user is: ``metadata["user_name"]`` when given (only
  that speaker's facts), else every named speaker (names make each fact self-contained).
* ``judge_relations``: slots are read per speaker (a fact about Melanie never updates one about
  Caroline); a narrative fact (no slot) is never "updated" by a change cue (duplicate >= 0.9, else separate).
* engine: after ``mtm_insert`` the page's records go through ``write_gate → relation_judge → fuse →
  lpm_commit`` at once; promotion keeps the persona/traits only (no page record is written twice).
* capacity: the least useful fact (lowest confidence, then oldest) is evicted instead of the oldest.

    from proto_engine import make_memory
    memory = make_memory(emb, score="rule")
"""

from __future__ import annotations

import copy
import dataclasses
import re
import sys

sys.path.insert(0, "/work/main")

import langchain_memoryos.amu as amu  # noqa: E402
import langchain_memoryos.pipeline.stages as ST  # noqa: E402
import langchain_memoryos.pipeline.turn as TURN  # noqa: E402
import langchain_memoryos.pipeline.write as PW  # noqa: E402
import langchain_memoryos.tiers.lpm as LPM  # noqa: E402
import langchain_memoryos.tiers.mtm as MTM  # noqa: E402
from langchain_memoryos import MemoryOS, MemoryOSConfig  # noqa: E402
from langchain_memoryos.amu import RecordWrite  # noqa: E402
from langchain_memoryos.controllers import HeuristicController  # noqa: E402
from langchain_memoryos.controllers.base import PageAnalysis, RelationJudgement  # noqa: E402
from langchain_memoryos.controllers.slots import slot_of  # noqa: E402
from langchain_memoryos.schema import MemoryRecord, Relation  # noqa: E402
from langchain_memoryos.scoring import hot_segments  # noqa: E402

from facts import page_candidates  # noqa: E402

_ORIG = {"mtm_fn": PW.STAGE_FUNCTIONS["mtm_insert"], "mtm": MTM.stage_mtm_insert,
         "after_mtm": TURN.after_mtm, "after_record": TURN.after_record,
         "evict": amu.evict_over_capacity, "table": dict(ST.WRITE_TABLE)}


def _row(c) -> dict:
    return {"personal": c.rec.personal, "aspect": c.rec.aspect, "intent": c.rec.intent, "entities": c.rec.entities,
            "confidence": c.rec.confidence, "feats": c.feats}


def rule_score(row: dict) -> float:
    from gates import rule_utility  # noqa: PLC0415

    return rule_utility(row)


class FactController(HeuristicController):
    """HeuristicController whose page analysis yields named, gated, one-per-side fact records."""

    def __init__(self, score=rule_score, per_turn: int = 3, tau: float = 0.5, **kw) -> None:
        super().__init__(**kw)
        self.score = score
        self.tau = tau
        self.per_turn = per_turn
        self.speaker_of: dict[str, str] = {}

    def analyze_page(self, page, previous, similarity) -> PageAnalysis:
        base = super().analyze_page(page, previous, similarity)
        user_name = page.metadata.get("user_name") if page.metadata else None
        ids = page.metadata.get("source_id") or [] if page.metadata else []
        ids = [ids] if isinstance(ids, str) else list(ids)
        agent_name = page.metadata.get("agent_name") if page.metadata else None
        cands = page_candidates(page.user_input, page.agent_response, ids, user_name,
                                sides="user" if user_name else "both", agent_name=agent_name)
        by_side: dict[int, list] = {}
        for c in cands:
            by_side.setdefault(c.side, []).append((float(self.score(_row(c))), c))
        records = []
        for _, items in sorted(by_side.items()):
            admitted = [(s, c) for s, c in items if s >= self.tau]
            best = sorted(admitted or items, key=lambda t: -t[0])[: self.per_turn if admitted else 1]
            chosen = sorted(best, key=lambda t: t[1].index)
            score = max(s for s, _ in chosen)  # below tau_g when nothing was admitted: logged 'filtered'

            summary = " ".join(c.fact for _, c in chosen)
            speaker = chosen[0][1].speaker
            self.speaker_of[summary] = speaker
            ents = [e for _, c in chosen for e in c.rec.entities] or re.findall(r"[A-Za-z]{4,}", summary)[:3] or ["x"]
            aspect = next((c.rec.aspect for _, c in chosen if c.rec.aspect != "other"), "activity")
            intent = next((c.rec.intent for _, c in chosen if c.rec.intent not in ("other", "request")), "inform")
            neutral = re.sub(rf"\b{re.escape(speaker)}\b", "the user", chosen[0][1].fact)
            slot = slot_of(neutral[:1].upper() + neutral[1:])
            records.append(MemoryRecord(kind="user", aspect=aspect, intent=intent, personal=True,
                                        entities=ents[:6], summary=summary, confidence=round(score, 6),
                                        slot=f"{speaker}:{slot[0]}={slot[1]}" if slot else ""))
        base.records = records
        return base

    def judge_relations(self, record, candidates) -> RelationJudgement:
        dup = self.thresholds.duplicate_similarity
        rels = []
        for cand, sim in candidates:
            a, b = record.slot.split("=", 1) if "=" in record.slot else ("", "")
            c, d = cand.slot.split("=", 1) if "=" in cand.slot else ("", "")
            if a and a == c:
                rels.append(Relation(cand.id, "duplicate" if b == d else "update", sim,
                                     f"same slot {a}: {d} → {b}" if b != d else f"same {a}: {b}"))
            elif sim >= dup:
                rels.append(Relation(cand.id, "duplicate", sim, f"similarity {sim:.2f} in duplicate band"))
            else:
                rels.append(Relation(cand.id, "separate", sim, "different fact that can coexist"))
        return RelationJudgement(rels)

    def fuse(self, record, updated):
        out = super().fuse(record, updated)
        out.record.slot = record.slot
        return out


def _stage_mtm_insert(settings, t) -> None:
    page = t.current[0]
    _ORIG["mtm"](settings, t)
    recs = []
    for r in page.candidates:
        rec = copy.deepcopy(r)
        rec.source_page_ids = [page.id]
        recs.append(RecordWrite(rec, now=page.timestamp, source="page"))
    page.candidates = []  # written now; promotion updates the persona and traits only
    if recs:
        t.records = recs + t.records
        if t.next != "heat_evict":
            t.next = "write_gate"


def _mtm_stage(repo, settings, t):
    _stage_mtm_insert(settings, t)
    return
    yield  # pragma: no cover


def _hot(t, settings) -> bool:
    return bool(hot_segments(t.user.segments.values(), t.user.clock, settings.config))


def _after_mtm(t, settings) -> str:
    if t.records:
        return "write_gate"
    return _ORIG["after_mtm"](t, settings)


def _after_record(t, settings) -> str:
    if t.records:
        return "write_gate"
    if t.moving:
        return "chain_link"
    return "persona_promote" if _hot(t, settings) else "done"


def evict_least_useful(state, kind, capacity, *, keep):
    facts = state.facts[kind]
    if len(facts) <= capacity:
        return []
    ordered = sorted((r for r in facts.values() if r.id != keep),
                     key=lambda r: (r.confidence, r.updated_at, r.created_at, r.id))
    evicted = ordered[: len(facts) - capacity]
    for old in evicted:
        state.delete_fact(kind, old.id)
    return evicted


_EXTRA_ROUTES = {"mtm_insert": ("write_gate",), "heat_evict": ("write_gate",), "write_gate": ("chain_link",),
                 "relation_judge": ("chain_link",), "lpm_commit": ("chain_link",)}


def patch() -> None:
    """Page records go through AMU right after mtm_insert; the table gains the routes that needs."""
    PW.STAGE_FUNCTIONS["mtm_insert"] = _mtm_stage
    for mod in (TURN, MTM, PW, LPM):
        if hasattr(mod, "after_mtm"):
            mod.after_mtm = _after_mtm
        if hasattr(mod, "after_record"):
            mod.after_record = _after_record
    for name, extra in _EXTRA_ROUTES.items():
        spec = _ORIG["table"][name]
        ST.WRITE_TABLE[name] = dataclasses.replace(spec, routes=tuple(dict.fromkeys(spec.routes + extra)))
    amu.evict_over_capacity = evict_least_useful


def unpatch() -> None:
    PW.STAGE_FUNCTIONS["mtm_insert"] = _ORIG["mtm_fn"]
    for mod in (TURN, MTM, PW, LPM):
        if hasattr(mod, "after_mtm"):
            mod.after_mtm = _ORIG["after_mtm"]
        if hasattr(mod, "after_record"):
            mod.after_record = _ORIG["after_record"]
    ST.WRITE_TABLE.update(_ORIG["table"])
    amu.evict_over_capacity = _ORIG["evict"]


def make_memory(emb, score=rule_score, config: MemoryOSConfig | None = None, gate_threshold: float = 0.5):
    patch()
    config = (config or MemoryOSConfig()).replace(gate_threshold=gate_threshold)
    controller = FactController(score=score, tau=gate_threshold, thresholds=config.thresholds("all-MiniLM-L6-v2"))
    return MemoryOS(embeddings=emb, controller=controller, config=config)
