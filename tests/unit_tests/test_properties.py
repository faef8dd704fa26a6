"""Property-based tests: the scoring formulas, and the engine's invariants over random conversations."""

from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import dataclass
from typing import get_args

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.config import DEFAULT_AGENT_PROFILE
from langchain_memoryos.schema import Aspect, Intent, MemoryRecord, Relation, RelationLabel, Segment
from langchain_memoryos.scoring import (
    COMPATIBLE_INTENTS,
    decide_action,
    f_score,
    gate,
    heat,
    jaccard,
    recency,
    segment_heat,
    select_candidates,
    top_k,
)
from tests.conftest import at

FAST = settings(max_examples=200, deadline=None, derandomize=True)

seconds = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)
taus = st.floats(min_value=1.0, max_value=1e9, allow_nan=False)
counts = st.integers(min_value=0, max_value=10_000)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
weights = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)
cosines = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
words = st.text(alphabet="abcdefgXYZ", min_size=1, max_size=4)
keyword_sets = st.lists(words, max_size=6)


# -- recency: R = exp(-dt / mu) -------------------------------------------------------
@FAST
@given(seconds, taus)
def test_recency_lies_in_the_unit_interval(delta: float, tau: float) -> None:
    r = recency(delta, tau)
    assert 0.0 <= r <= 1.0
    if max(delta, 0.0) / tau < 700:  # exp(-x) is a positive double up to x ~ 745
        assert r > 0.0
    if delta <= 0:
        assert r == 1.0


@FAST
@given(seconds, seconds, taus)
def test_recency_does_not_grow_with_age(a: float, b: float, tau: float) -> None:
    young, old = sorted((a, b))
    assert recency(old, tau) <= recency(young, tau)


@FAST
@given(st.floats(min_value=0, max_value=1e8), taus, taus)
def test_recency_fades_slower_with_a_longer_time_constant(delta: float, t1: float, t2: float) -> None:
    short, long_ = sorted((t1, t2))
    assert recency(delta, short) <= recency(delta, long_)


@FAST
@given(st.floats(min_value=0, max_value=1e7), st.floats(min_value=0, max_value=1e7), taus)
def test_recency_is_an_exponential(a: float, b: float, tau: float) -> None:
    assert math.isclose(recency(a + b, tau), recency(a, tau) * recency(b, tau), rel_tol=1e-9, abs_tol=1e-300)
    assert math.isclose(recency(tau, tau), math.exp(-1))


# -- heat: H = alpha*N_visit + beta*L_interaction + gamma*R ---------------------------------
@FAST
@given(counts, counts, unit, weights, weights, weights)
def test_heat_is_the_weighted_sum(n: int, l_: int, r: float, alpha: float, beta: float, gamma: float) -> None:
    h = heat(n, l_, r, alpha=alpha, beta=beta, gamma=gamma)
    assert math.isclose(h, alpha * n + beta * l_ + gamma * r, rel_tol=1e-12, abs_tol=1e-12)
    assert h >= 0.0
    assert heat(n, l_, r) == n + l_ + r  # the paper's weights are 1


@FAST
@given(counts, counts, unit, counts, unit, weights, weights, weights)
def test_heat_is_monotone_in_each_input(
    n: int, l_: int, r: float, more: int, extra: float, alpha: float, beta: float, gamma: float
) -> None:
    w = {"alpha": alpha, "beta": beta, "gamma": gamma}
    base = heat(n, l_, r, **w)
    assert heat(n + more, l_, r, **w) >= base
    assert heat(n, l_ + more, r, **w) >= base
    assert heat(n, l_, min(1.0, r + extra), **w) >= base
    assert heat(n, l_, r, alpha=alpha + 1, beta=beta, gamma=gamma) >= base


@FAST
@given(counts, counts, st.floats(min_value=0, max_value=1e8), st.floats(min_value=0, max_value=1e8))
def test_a_segment_cools_as_the_clock_moves_on(n: int, l_: int, d1: float, d2: float) -> None:
    config = MemoryOSConfig()
    seg = Segment(id="s", n_visit=n, l_interaction=l_, last_access=at())
    early, late = sorted((d1, d2))
    h_early = segment_heat(seg, at() + dt.timedelta(seconds=early), config)
    h_late = segment_heat(seg, at() + dt.timedelta(seconds=late), config)
    assert h_late <= h_early <= n + l_ + 1.0
    assert h_late >= n + l_  # the recency term is never negative


# -- Jaccard and F_score -----------------------------------------------------------------
@FAST
@given(keyword_sets, keyword_sets)
def test_jaccard_is_a_symmetric_similarity(a: list[str], b: list[str]) -> None:
    j = jaccard(a, b)
    assert 0.0 <= j <= 1.0
    assert j == jaccard(b, a)
    lower_a, lower_b = {x.lower() for x in a}, {x.lower() for x in b}
    assert (j == 0.0) == (not lower_a & lower_b)
    assert (j == 1.0) == (bool(lower_a) and lower_a == lower_b)


@FAST
@given(keyword_sets, keyword_sets)
def test_jaccard_ignores_case_order_and_repeats(a: list[str], b: list[str]) -> None:
    assert jaccard(a, b) == jaccard([x.upper() for x in reversed(a)] + a, b)
    if a:
        assert jaccard(a, a) == 1.0


@FAST
@given(cosines, cosines, keyword_sets, keyword_sets)
def test_f_score_bounds_and_monotonicity(c1: float, c2: float, a: list[str], b: list[str]) -> None:
    f = f_score(c1, a, b)
    assert -1.0 <= f <= 2.0
    assert f == c1 + jaccard(a, b)
    assert f == f_score(c1, b, a)
    lo, hi = sorted((c1, c2))
    assert f_score(lo, a, b) <= f_score(hi, a, b)


# -- the write-gate ------------------------------------------------------------------------
records = st.builds(
    MemoryRecord,
    aspect=st.sampled_from(get_args(Aspect)),
    intent=st.sampled_from(get_args(Intent)),
    personal=st.booleans(),
    entities=st.lists(st.sampled_from(["", " ", "Felix", "Denver", "vegan"]), max_size=2),
    summary=st.sampled_from(["", "  ", "The user is vegan.", "The user lives in Denver."]),
    confidence=st.floats(min_value=-0.5, max_value=1.5, allow_nan=False),
)


@FAST
@given(records, unit)
def test_gate_score_and_verdict(record: MemoryRecord, threshold: float) -> None:
    verdict = gate(record, threshold)
    assert 0.0 <= verdict.score <= 1.0
    factors_pass = (
        record.personal
        and record.aspect != "other"
        and record.intent != "other"
        and any(e.strip() for e in record.entities)
        and bool(record.summary.strip())
    )
    if factors_pass:
        assert verdict.score == max(0.0, min(1.0, record.confidence))
        assert verdict.admitted == (verdict.score >= threshold)
    else:
        assert (verdict.score, verdict.admitted) == (0.0, False)


@FAST
@given(records, unit, unit, unit)
def test_gate_is_monotone_in_confidence_and_threshold(record: MemoryRecord, c2: float, t1: float, t2: float) -> None:
    low, high = sorted((max(0.0, min(1.0, record.confidence)), c2))
    lo_rec = MemoryRecord.from_dict({**record.to_dict(), "confidence": low})
    hi_rec = MemoryRecord.from_dict({**record.to_dict(), "confidence": high})
    t_lo, t_hi = sorted((t1, t2))
    assert gate(lo_rec, t_lo).score <= gate(hi_rec, t_lo).score
    assert not gate(lo_rec, t_lo).admitted or gate(hi_rec, t_lo).admitted
    assert not gate(record, t_hi).admitted or gate(record, t_lo).admitted


# -- candidate selection and the action rule ---------------------------------------------------
existing_records = st.lists(
    st.tuples(
        st.builds(
            MemoryRecord,
            aspect=st.sampled_from(["health", "activity", "personal_profile"]),
            intent=st.sampled_from(get_args(Intent)),
            entities=st.lists(st.sampled_from(["Felix", "denver", "Denver", "chess"]), max_size=2),
            slot=st.sampled_from(["", "", "location", "employer"]),
        ),
        cosines,
    ),
    max_size=8,
)


@FAST
@given(records, existing_records, unit)
def test_select_candidates(record: MemoryRecord, existing: list[tuple[MemoryRecord, float]], threshold: float) -> None:
    existing = [(MemoryRecord.from_dict({**r.to_dict(), "id": f"r{i}"}), s) for i, (r, s) in enumerate(existing)]
    kept = select_candidates(record, existing, threshold)
    ids = [r.id for r, _ in kept]
    assert len(ids) == len(set(ids))
    assert set(ids) <= {r.id for r, _ in existing}
    assert [s for _, s in kept] == sorted((s for _, s in kept), reverse=True)
    names = {e.lower() for e in record.entities if e[:1].isupper()}
    allowed = COMPATIBLE_INTENTS.get(record.intent, frozenset({record.intent}))
    for r, s in existing:
        named = bool(record.slot and r.slot == record.slot) or (
            r.aspect == record.aspect and bool(names & {e.lower() for e in r.entities if e[:1].isupper()})
        )
        similar = r.aspect == record.aspect and s >= threshold
        if named or (similar and r.intent == record.intent):
            assert r.id in ids  # always a candidate
        if r.id in ids and not named:
            assert similar and r.intent in allowed | {record.intent}


labels = st.lists(st.sampled_from(get_args(RelationLabel)), max_size=6)


@FAST
@given(labels, st.randoms(use_true_random=False))
def test_the_action_rule(labels_: list[str], rnd: random.Random) -> None:
    relations = [Relation(f"c{i}", label) for i, label in enumerate(labels_)]  # type: ignore[arg-type]
    action = decide_action(relations)
    if "update" in labels_:
        assert action == "fuse"
    elif "duplicate" in labels_:
        assert action == "discard"
    else:
        assert action == "store"
    shuffled = list(relations)
    rnd.shuffle(shuffled)
    assert decide_action(shuffled) == action  # order does not matter


@FAST
@given(st.lists(st.floats(min_value=-10, max_value=10, allow_nan=False), max_size=10), st.integers(-2, 12))
def test_top_k(scores: list[float], k: int) -> None:
    items = list(range(len(scores)))
    best = top_k(items, scores, k)
    assert len(best) == max(0, min(k, len(scores)))
    got = [s for _, s in best]
    assert got == sorted(got, reverse=True)
    if best:
        assert all(s <= got[-1] for i, s in enumerate(scores) if i not in {x for x, _ in best})
    for (i, s), (j, t) in zip(best, best[1:], strict=False):
        assert s > t or i < j  # ties keep the input order


# -- the engine over random conversations ------------------------------------------------------------
VOCABULARY = [
    "My name is Ana and I live in Lyon.",
    "I moved to Denver last month.",
    "Actually I moved again, I live in Boston now.",
    "I work at Google as an engineer.",
    "I just started a new job at Stripe.",
    "I am vegan.",
    "My dog Felix is sick.",
    "Felix is feeling better today.",
    "I love hiking in the mountains.",
    "How is the weather?",
    "Thanks, that helps!",
    "ok",
    "Can you recommend a book?",
]
FACTS = ["I am allergic to peanuts.", "I live in Oslo.", "Answer in bullet points.", "Be brief."]


@dataclass(frozen=True)
class Action:
    """One step of a random conversation."""

    kind: str  # "turn", "repeat" (an earlier turn again), "retrieve" or "fact"
    text: int
    thread: int
    gap_minutes: int
    pick: int


actions = st.builds(
    Action,
    kind=st.sampled_from(["turn"] * 6 + ["repeat", "retrieve", "fact"]),
    text=st.integers(0, len(VOCABULARY) - 1),
    thread=st.integers(1, 3),
    gap_minutes=st.sampled_from([0, 0, 1, 30, 600, 1500]),
    pick=st.integers(0, 100),
)
configs = st.builds(
    MemoryOSConfig,
    stm_capacity=st.integers(2, 4),
    mtm_max_segments=st.integers(2, 6),
    user_kb_capacity=st.integers(1, 4),
    agent_traits_capacity=st.integers(1, 3),
    promotion_heat=st.sampled_from([1.0, 2.0, 5.0]),
    stm_idle_seconds=st.sampled_from([None, 0.0, 3600.0, 86400.0]),
    segment_threshold=st.sampled_from([0.6, 1.0, 1.5]),
    page_ranking=st.sampled_from(["hybrid", "segments"]),
    agent_profile=st.just(DEFAULT_AGENT_PROFILE),
)
USER = "u"
THREADS = ("t1", "t2", "t3")


def _stored(memory: MemoryOS) -> tuple[set[str], dict[str, str | None]]:
    stm = {p.id for t in THREADS for p in memory.get_stm(user_id=USER, thread_id=t)}
    mtm = {p.id: p.segment_id for p in memory.list_pages(user_id=USER)}
    return stm, mtm


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.lists(actions, min_size=12, max_size=30))
def test_random_conversations_keep_every_invariant(config: MemoryOSConfig, script: list[Action]) -> None:
    memory = MemoryOS(InMemoryStore(), config=config)
    minutes = 0
    turns: list[tuple[str, str, int]] = []  # (thread, text, minute) of every turn sent
    added = evicted_pages = promoted = 0
    for step in script:
        minutes += step.gap_minutes
        if step.kind == "retrieve":
            memory.retrieve(VOCABULARY[step.text], user_id=USER, thread_id=THREADS[step.thread - 1])
            continue
        if step.kind == "fact":
            fact = FACTS[step.pick % len(FACTS)]
            memory.add_fact(fact, user_id=USER, kind="agent" if fact in FACTS[2:] else "user", timestamp=at(0, minutes))
            assert memory.check(user_id=USER) == []
            continue
        if step.kind == "repeat" and turns:
            thread, text, minute = turns[step.pick % len(turns)]  # the very same turn again
        else:
            thread, text, minute = THREADS[step.thread - 1], VOCABULARY[step.text], minutes
        turns.append((thread, text, minute))
        stm_before, mtm_before = _stored(memory)
        report = memory.add_turn(text, "Noted.", user_id=USER, thread_id=thread, timestamp=at(0, minute))
        stm_after, mtm_after = _stored(memory)
        before = stm_before | set(mtm_before)
        after = stm_after | set(mtm_after)
        # idempotence: a turn whose page is stored changes nothing
        assert report.added == (report.page_id not in before)
        new = {report.page_id} if report.added else set()
        if not report.added:
            assert (stm_after, mtm_after) == (stm_before, mtm_before)
        # conservation: no page appears from nowhere; every page that left STM went to MTM;
        # every page that disappeared went with a segment the report says was evicted
        assert after <= before | new
        assert set(report.moved_to_mtm) == (stm_before | new) - stm_after
        assert set(mtm_after) - set(mtm_before) <= set(report.moved_to_mtm)
        for page in (before | new) - after:
            if page in mtm_before:
                assert mtm_before[page] in report.segments_evicted
            else:  # moved and evicted within this turn
                assert page in report.moved_to_mtm and report.segments_evicted
        assert not set(report.segments_evicted) & {s.id for s in memory.list_segments(user_id=USER)}
        added += report.added
        evicted_pages += len((before | new) - after)
        assert memory.check(user_id=USER) == []
        promoted += len(report.segments_promoted)
    stats = memory.stats(user_id=USER)
    event(f"pages evicted: {'some' if evicted_pages else 'none'}")
    event(f"promotions: {'some' if promoted else 'none'}")
    event(f"repeats not added: {'some' if len(turns) > added else 'none'}")
    assert stats.stm_pages + stats.mtm_pages + evicted_pages == added
    assert memory.repair(user_id=USER) == []
