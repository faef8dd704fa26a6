"""The memory's decisions as pure functions.

Heat, recency, F_score and Jaccard come from the MemoryOS paper (§3.2–§3.3); the
write-gate, candidate filtering and the action rule from the AMU paper (§3.2–§3.3).
Nothing here does IO; the engine wraps these thinly.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.schema import MemoryRecord, Relation, Segment

__all__ = [
    "COMPATIBLE_INTENTS",
    "GateResult",
    "PlannedAction",
    "best_segment",
    "coldest_segment",
    "decide_action",
    "f_score",
    "gate",
    "heat",
    "hot_segments",
    "jaccard",
    "recency",
    "segment_heat",
    "select_candidates",
    "states_new_use",
    "states_reversal",
]

T = TypeVar("T")

PlannedAction = Literal["store", "discard", "fuse"]


def recency(delta_seconds: float, tau_seconds: float) -> float:
    """The recency term ``R = exp(-dt / mu)`` of the heat.

    Args:
        delta_seconds: seconds since the segment's last access (negative counts as 0).
        tau_seconds: the time constant ``mu`` (paper: 1e7).

    Returns:
        A value in (0, 1].

    Example:
        >>> round(recency(1e7, 1e7), 6)
        0.367879
    """
    return math.exp(-max(0.0, delta_seconds) / tau_seconds)


def heat(
    n_visit: int,
    l_interaction: int,
    recency_value: float,
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    gamma: float = 1.0,
) -> float:
    """Segment heat ``H = alpha*N_visit + beta*L_interaction + gamma*R_recency``.

    Args:
        n_visit: retrievals that hit the segment.
        l_interaction: pages in the segment since its last promotion.
        recency_value: the recency term from :func:`recency`.
        alpha: weight of ``n_visit``.
        beta: weight of ``l_interaction``.
        gamma: weight of the recency term.

    Returns:
        The heat.

    Example:
        >>> heat(2, 3, 0.5)
        5.5
    """
    return alpha * n_visit + beta * l_interaction + gamma * recency_value


def jaccard(a: Collection[str], b: Collection[str]) -> float:
    """Jaccard similarity ``|A ∩ B| / |A ∪ B|`` of two keyword sets (case-insensitive).

    Args:
        a: first keyword set.
        b: second keyword set.

    Returns:
        A value in [0, 1]; 0 when both are empty.

    Example:
        >>> jaccard({"hiking", "denver"}, {"Denver", "dogs"})
        0.3333333333333333
    """
    return _jaccard_lowered({x.lower() for x in a}, {x.lower() for x in b})


def _jaccard_lowered(sa: set[str], sb: set[str]) -> float:
    """:func:`jaccard` of two sets already lower-cased."""
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0


def f_score(cosine: float, keywords_a: Collection[str], keywords_b: Collection[str]) -> float:
    """MemoryOS matching score ``F = cos(e_s, e_p) + Jaccard(K_s, K_p)``.

    Args:
        cosine: cosine similarity of the two embeddings.
        keywords_a: one keyword set.
        keywords_b: the other keyword set.

    Returns:
        A value in [-1, 2].

    Example:
        >>> f_score(0.5, {"a", "b"}, {"b"})
        1.0
    """
    return cosine + jaccard(keywords_a, keywords_b)


@dataclass(frozen=True)
class GateResult:
    """The write-gate's verdict on a typed record.

    Attributes:
        score: ``G = personal * q_aspect * q_intent * r_entities * r_summary * confidence``.
        admitted: ``score >= tau_g``.
        reason: the first factor that failed, or why it passed.

    Example:
        >>> gate(MemoryRecord(aspect="health", entities=["vegan"], summary="The user is vegan."), 0.5)
        GateResult(score=1.0, admitted=True, reason='admitted: G=1.00 >= 0.50')
        >>> gate(MemoryRecord(aspect="other", entities=["x"], summary="Something."), 0.5)
        GateResult(score=0.0, admitted=False, reason="fallback aspect 'other'")
    """

    score: float
    admitted: bool
    reason: str


def gate(record: MemoryRecord, threshold: float) -> GateResult:
    """AMU write-gate.

    ``personal`` is 1 when the record carries reusable personal information;
    ``q_aspect`` is 0 for the fallback aspect ``other``; ``q_intent`` is 0 for the
    fallback intent ``other`` and for a request without personal content;
    ``r_entities`` and ``r_summary`` are 1 when entities and summary are non-empty;
    ``confidence`` is the rubric score. Admitted iff ``G >= threshold``.

    Args:
        record: the typed record.
        threshold: ``tau_g``.

    Returns:
        The verdict with the failing factor as its reason.

    Example:
        >>> r = MemoryRecord(aspect="health", intent="inform", entities=["vegan"],
        ...                  summary="The user is vegan.", confidence=0.75)
        >>> gate(r, 0.5).score
        0.75
    """
    factors: list[tuple[float, str]] = [
        (1.0 if record.personal else 0.0, "not personal: no reusable fact about the user"),
        (0.0 if record.aspect == "other" else 1.0, "fallback aspect 'other'"),
        (
            0.0 if record.intent == "other" or (record.intent == "request" and not record.personal) else 1.0,
            "task-oriented request or fallback intent",
        ),
        (1.0 if any(e.strip() for e in record.entities) else 0.0, "no entities"),
        (1.0 if record.summary.strip() else 0.0, "empty summary"),
    ]
    score = max(0.0, min(1.0, float(record.confidence)))
    for value, reason in factors:
        if value == 0.0:
            return GateResult(0.0, False, reason)
        score *= value
    if score >= threshold:
        return GateResult(score, True, f"admitted: G={score:.2f} >= {threshold:.2f}")
    return GateResult(score, False, f"low confidence: G={score:.2f} < {threshold:.2f}")


#: Intents that may describe the same fact. When no existing record shares the
#: new record's aspect *and* intent, candidates widen to these intents under the
#: same aspect. A statement, a plan, a reflection and an expressed feeling about
#: one subject can revise each other; a request only matches a request.
COMPATIBLE_INTENTS: dict[str, frozenset[str]] = {
    "inform": frozenset({"inform", "plan", "reflect", "express"}),
    "plan": frozenset({"inform", "plan", "reflect", "express"}),
    "reflect": frozenset({"inform", "plan", "reflect", "express"}),
    "express": frozenset({"inform", "plan", "reflect", "express"}),
    "request": frozenset({"request"}),
    "other": frozenset({"other"}),
}


def select_candidates(
    record: MemoryRecord,
    existing: Iterable[tuple[MemoryRecord, float]],
    threshold: float,
) -> list[tuple[MemoryRecord, float]]:
    """AMU candidate filtering.

    Keeps existing records of the same aspect and intent whose cosine similarity
    to the new record is at least ``threshold`` (``tau_s``); when there are none,
    widens to the compatible intents (:data:`COMPATIBLE_INTENTS`) under the same
    aspect. "None" is counted after the similarity filter, so an unrelated
    same-intent record does not hide a similar record of a compatible intent.

    Our addition: a record that fills the same named slot (``record.slot``,
    e.g. ``location``), or that names the same entity under the same aspect
    ("Felix"), is a candidate whatever its cosine and intent. A sentence
    encoder scores "lives in Denver" against "works at Stripe"-style pairs by
    their entities, so a change of city or employer can fall under ``tau_s``
    ("works at Google" / "works at Stripe": 0.53 with MiniLM) and would
    otherwise be stored beside the state it replaces.

    Args:
        record: the new, admitted record.
        existing: existing records of the same kind with their cosine to ``record``.
        threshold: ``tau_s``.

    Returns:
        ``(record, similarity)`` pairs, most similar first.

    Example:
        >>> new = MemoryRecord(aspect="personal_profile", intent="inform")
        >>> old = MemoryRecord(id="a", aspect="personal_profile", intent="plan")
        >>> [r.id for r, _ in select_candidates(new, [(old, 0.7)], 0.6)]
        ['a']
        >>> new = MemoryRecord(aspect="personal_profile", slot="employer")
        >>> old = MemoryRecord(id="b", aspect="personal_profile", slot="employer")
        >>> [r.id for r, _ in select_candidates(new, [(old, 0.53)], 0.6)]
        ['b']
    """
    pairs = list(existing)
    pool = [(r, s) for r, s in pairs if r.aspect == record.aspect and s >= threshold]
    kept = [(r, s) for r, s in pool if r.intent == record.intent]
    if not kept:
        allowed = COMPATIBLE_INTENTS.get(record.intent, frozenset({record.intent}))
        kept = [(r, s) for r, s in pool if r.intent in allowed]
    names = _names(record)
    ended = _content(record.summary) if _states_end(record.summary) else set()
    seen = {r.id for r, _ in kept}
    for r, s in pairs:
        if r.id in seen:
            continue
        if (
            (record.slot and r.slot == record.slot)
            or (r.aspect == record.aspect and names & _names(r))
            or bool(_shared_topic(ended, record, r))  # "quit tennis" / "plays tennis": the judge decides
            or states_new_use(record, r)  # "switched to green tea" / "drinks coffee": the judge decides
            or states_reversal(record, r)  # "switched from law to …" / "studies law": the judge decides
        ):
            kept.append((r, s))
            seen.add(r.id)
    kept.sort(key=lambda pair: pair[1], reverse=True)
    return kept


#: A stated end ("no longer", "stopped", "quit" …): the fact it ends may score under ``tau_s`` ("quit tennis").
_ENDED = re.compile(r"\b(?:no longer|any ?more|stopped|quit|gave up|passed away|died|graduated)\b", re.IGNORECASE)
_LIGHT = frozenset(
    """the user users and others their with from that this have has had does doesn't not for was are but
    his her its any all now one who""".split()
)


#: Words before an end word that make it no end ("won't quit", "never gave up").
_NOT_AN_END = frozenset("won't wont never not don't dont didn't didnt doesn't can't cannot will would".split())


def _states_end(summary: str) -> bool:
    """Whether ``summary`` states an end: an end word not negated or future ("Jon won't quit" states none)."""
    for match in _ENDED.finditer(summary):
        before = summary[: match.start()].lower().replace("\u2019", "'").split()
        if not before or before[-1] not in _NOT_AN_END:
            return True
    return False


def _shared_topic(ended: set[str], record: MemoryRecord, other: MemoryRecord) -> set[str]:
    """The content words of an end that ``other`` shares, less the name of a subject both are about.

    Every fact about Jon names Jon: "Jon won't quit" would otherwise share a word with all of them. A
    name that is the topic of the other fact ("Biscuit passed away" / "The user has a dog named Biscuit")
    stays.
    """
    common = ended & _content(other.summary)
    if record.subject and record.subject == other.subject:
        common -= set(re.findall(r"[a-z]{3,}", record.subject.lower()))
    return common


#: Things one has one of at a time, by kind: a switch to one ("switched to green tea") ends the other of its kind.
_KINDS = (
    frozenset("coffee tea decaf espresso latte cappuccino matcha juice soda cola water wine beer kombucha".split()),
    frozenset("car bike bicycle bus train tube subway metro tram scooter e-bike motorbike motorcycle".split()),
    frozenset("iphone android pixel samsung mac macbook windows linux".split()),
)
#: A switch to a new one ("has switched to green tea"); one that says what it left ("from coffee") has its slot.
_SWITCH = re.compile(
    r"\b(?:switched|changed|swapped|moved over|gone over|went over|converted)\s+(?:over\s+)?to\s+"
    r"(?:an?\s+|the\s+)?([a-z][\w -]{1,30}?)(?=\s*[.,;!?]|\s+(?:now|instead|these days|and|but|because|since)\b|$)",
    re.IGNORECASE,
)
#: A state said as the current one ("drives an electric car now", "drinks matcha these days").
_NOW = re.compile(r"\b(?:now|these days|nowadays)\b(?![^.;]*\b(?:anymore|any more)\b)", re.IGNORECASE)
#: Verbs of what one uses one of at a time: a new object "now" replaces the old one.
_ONE_AT_A_TIME = frozenset("drives drinks rides commutes".split())
#: Verbs of using a thing: a new one of a kind "now" replaces the other of that kind.
_USING = _ONE_AT_A_TIME | frozenset("takes uses has owns orders gets".split())
_NOT_SAID = re.compile(r"\b(?:not|never|no longer|won't|wouldn't|doesn't|don't|didn't|can't)\b|n't\b", re.IGNORECASE)


def _verb_after_subject(summary: str, subject: str) -> tuple[str, set[str]]:
    """The verb after a fact's subject ("The user", the subject's name) and the words after it."""
    who = re.escape(subject) if subject else r"the user"
    m = re.match(rf"(?i:{who})\s+(?:(?:now|also|mostly|only|still)\s+)?([a-z]+)\b(.*)$", summary.strip())
    if m is None:
        return "", set()
    return m.group(1).lower(), set(re.findall(r"[a-z][a-z-]+", m.group(2).lower()))


def states_new_use(record: MemoryRecord, other: MemoryRecord) -> bool:
    """Whether ``record`` states a new one of what ``other`` says its subject has or uses one of.

    A switch to a thing of a kind ("has switched to green tea") ends the fact that holds another of that
    kind ("drinks coffee every morning"); a state said "now" with a verb of what one uses one at a time
    ("drives an electric car now") ends the same verb's other object ("drives a Honda Civic"). Facts about
    two people, and negated statements, never do.

    Example:
        >>> old = MemoryRecord(summary="The user drinks coffee every morning.")
        >>> states_new_use(MemoryRecord(summary="The user has switched to green tea."), old)
        True
        >>> states_new_use(MemoryRecord(summary="The user has switched to a standing desk."), old)
        False
        >>> states_new_use(MemoryRecord(summary="Jon drives a Tesla now.", subject="Jon"),
        ...                MemoryRecord(summary="Jon drives a Honda Civic.", subject="Jon"))
        True
        >>> states_new_use(MemoryRecord(summary="Jon takes the train to work now.", subject="Jon"),
        ...                MemoryRecord(summary="Jon rides a bike to work.", subject="Ana"))  # not Jon's bike
        False
    """
    if record.subject.strip().lower() != other.subject.strip().lower() or _NOT_SAID.search(record.summary):
        return False
    held = set(re.findall(r"[a-z][a-z-]+", other.summary.lower()))
    switch = _SWITCH.search(record.summary)
    if switch:
        new = set(re.findall(r"[a-z][a-z-]+", switch.group(1).lower()))
        kind = next((k for k in _KINDS if new & k), frozenset())
        return bool(kind & (held - new))
    if not _NOW.search(record.summary):
        return False
    verb, said = _verb_after_subject(record.summary, record.subject)
    old_verb, old_said = _verb_after_subject(other.summary, other.subject)
    objects = said - {"now", "these", "days", "nowadays"}
    if verb in _ONE_AT_A_TIME and verb == old_verb:
        return bool(old_said - objects) and not old_said <= objects
    kind = next((k for k in _KINDS if objects & k), frozenset())  # "takes the train now" / "rides a bike to work"
    return verb in _USING and old_verb in _USING and bool(kind & (old_said - objects))


#: A change that names what it left ("switched from law to architecture", "transferred from Ohio State to …").
_SWITCHED_FROM = re.compile(
    r"\b(?:switched|changed|swapped|transferred|converted|shifted)\s+(?:over\s+|(?:jobs|careers|schools|majors|"
    r"courses|teams|clubs|banks|gyms|plans|providers)\s+)?from\s+"
    r"(?:the\s+|an?\s+|the user's\s+|their\s+|his\s+|her\s+)?([\w' -]{2,40}?)\s+(?:to|over to|for)\s+\w",
    re.IGNORECASE,
)
#: A state taken back ("is not celiac after all", "isn't moving to Denver after all"); the negation is group 1.
_AFTER_ALL = re.compile(
    r"(?:^|[,;:]\s*|\b(?:but|and|so)\s+)((?:[^,;:.!?]*?\b(?:not|never|no longer)\b|[^,;:.!?]*?n't\b)?)"
    r"([^,;:.!?]*?)\s+after all\b(?!\s+(?:these|those|this|that|the|we|I|he|she|they|it|you)\b)",
    re.IGNORECASE,
)
#: Back to what had stopped ("is back to eating bread", "went back to drinking coffee", "is back on dairy").
_BACK_TO = re.compile(
    r"\b(?:is|am|are|was|went|gone|got|getting|going|has gone)\s+back\s+(?:to\s+|on\s+)(?:the\s+)?([^,;:.!?]{2,40})",
    re.IGNORECASE,
)
#: A stopped or negated state, which "back to …" ends.
_STOPPED = re.compile(
    r"\b(?:quit|stopped|gave up|cut out|cut back on|is off|went off|no longer|not|never)\b|n't\b", re.IGNORECASE
)


def _stems(text: str) -> set[str]:
    """Content words, an "-ing", "-s" or "-ed" ending folded ("eating" and "eats" are "eat")."""
    out = set()
    for w in _content(text):
        for end in ("ing", "ed", "es", "s"):
            if w.endswith(end) and len(w) - len(end) >= 3:
                w = w[: -len(end)]
                break
        out.add(w)
    return out


def states_reversal(record: MemoryRecord, other: MemoryRecord) -> bool:
    """Whether ``record`` says that the state ``other`` holds has ended: left, taken back, or resumed.

    "switched from law to architecture" ends the fact about law; "is not celiac after all" ends "is
    celiac" (and "got the job after all" a fact that says they did not); "is back to drinking coffee"
    ends "quit coffee". Facts about two people never do, nor a negated switch.

    Example:
        >>> old = MemoryRecord(summary="The user's sister Jana is studying law in Vienna.", subject="Jana")
        >>> states_reversal(MemoryRecord(summary="Jana switched from law to architecture.", subject="Jana"), old)
        True
        >>> states_reversal(MemoryRecord(summary="Jana switched from Android to iPhone.", subject="Jana"), old)
        False
        >>> celiac = MemoryRecord(summary="The user can't eat gluten, the user is celiac.")
        >>> states_reversal(MemoryRecord(summary="The user is not celiac after all."), celiac)
        True
        >>> states_reversal(MemoryRecord(summary="The user is back to drinking coffee."),
        ...                 MemoryRecord(summary="The user quit coffee."))
        True
        >>> states_reversal(MemoryRecord(summary="The user is back to running."),
        ...                 MemoryRecord(summary="The user loves running."))  # it never stopped
        False
    """
    if record.subject.strip().lower() != other.subject.strip().lower():
        return False
    held = _stems(other.summary) - _stems(record.subject)
    switched = _SWITCHED_FROM.search(record.summary)
    if switched and not _NOT_SAID.search(record.summary[: switched.start()]):
        left = _stems(switched.group(1))
        if left and left <= held:
            return True
    for m in _AFTER_ALL.finditer(record.summary):
        taken_back = _stems(m.group(2)) & held
        if taken_back and (m.group(1) or _NOT_SAID.search(other.summary)):  # "not X after all" / "X after all"
            return True
    back = _BACK_TO.search(record.summary)
    return back is not None and bool(_STOPPED.search(other.summary)) and bool(_stems(back.group(1)) & held)


def _content(summary: str) -> set[str]:
    """The content words of a summary (three letters or more, not the subject's words), lower-cased."""
    return {w for w in re.findall(r"[a-z]{3,}", summary.lower()) if w not in _LIGHT} - {
        "stopped",
        "quit",
        "longer",
        "anymore",
        "gave",
        "passed",
        "away",
        "died",
        "graduated",
        "going",
        "goes",
    }


def _names(record: MemoryRecord) -> set[str]:
    """The record's named entities (capitalised), lower-cased."""
    return {e.lower() for e in record.entities if e[:1].isupper()}


def decide_action(relations: Sequence[Relation]) -> PlannedAction:
    """AMU's deterministic action rule.

    All separate (or no candidates) → store; any update → fuse the new record
    with the update candidates; otherwise (at least one duplicate) → discard.

    Args:
        relations: the relation-judge's labels for every candidate.

    Returns:
        ``"store"``, ``"fuse"`` or ``"discard"``.

    Example:
        >>> decide_action([Relation("a", "duplicate"), Relation("b", "update")])
        'fuse'
    """
    labels = {r.label for r in relations}
    if "update" in labels:
        return "fuse"
    if "duplicate" in labels:
        return "discard"
    return "store"


def top_k(items: Sequence[T], scores: Sequence[float], k: int) -> list[tuple[T, float]]:
    """The ``k`` best items by score, best first (stable for ties).

    Args:
        items: the items.
        scores: one score per item.
        k: how many to keep.

    Returns:
        ``(item, score)`` pairs.

    Example:
        >>> top_k(["a", "b", "c"], [0.1, 0.9, 0.5], 2)
        [('b', 0.9), ('c', 0.5)]
    """
    order = sorted(range(len(items)), key=lambda i: (-scores[i], i))[: max(0, k)]
    return [(items[i], float(scores[i])) for i in order]


def segment_heat(segment: Segment, now: _dt.datetime | None, config: MemoryOSConfig) -> float:
    """Heat of a segment at conversation time ``now`` (paper Eq. 4).

    Args:
        segment: the segment.
        now: the user's conversation clock (``None``: the segment's last access).
        config: weights and time constant.

    Returns:
        ``alpha*N_visit + beta*L_interaction + gamma*exp(-dt/mu)``.

    Example:
        >>> segment_heat(Segment(id="s", n_visit=1, l_interaction=2), None, MemoryOSConfig())
        4.0
    """
    delta = 0.0 if now is None else (now - segment.last_access).total_seconds()
    return heat(
        segment.n_visit,
        segment.l_interaction,
        recency(delta, config.recency_tau_seconds),
        alpha=config.heat_alpha,
        beta=config.heat_beta,
        gamma=config.heat_gamma,
    )


def best_segment(
    scored: Iterable[tuple[Segment, float]], page_keywords: Collection[str], threshold: float
) -> Segment | None:
    """Which segment a page joins: the best ``F_score`` if it is above ``theta``, else none (a new segment).

    Args:
        scored: segments with their cosine to the page, best cosine first
            (ties of ``F_score`` go to the earlier one); the scan stops once
            no later segment can reach the best ``F_score`` (``F <= cos + 1``).
        page_keywords: the page's keywords.
        threshold: ``theta`` (``segment_threshold``).

    Example:
        >>> a, b = Segment(id="a", keywords=["tea"]), Segment(id="b", keywords=["pottery"])
        >>> best_segment([(a, 0.5), (b, 0.45)], ["pottery"], 0.6).id
        'b'
        >>> best_segment([(a, 0.5)], ["pottery"], 0.6) is None
        True
    """
    best: Segment | None = None
    best_score = -math.inf
    page = {k.lower() for k in page_keywords}
    for segment, cosine in scored:
        if cosine + 1.0 <= best_score:
            break  # F <= cosine + 1 and the cosines only fall from here: no later segment can win
        score = cosine + _jaccard_lowered({k.lower() for k in segment.keywords}, page)  # f_score, page set made once
        if score > best_score:
            best, best_score = segment, score
    return best if best is not None and best_score > threshold else None


def coldest_segment(
    segments: Iterable[Segment], now: _dt.datetime | None, config: MemoryOSConfig, *, keep: str
) -> Segment | None:
    """Which segment heat-eviction drops: the lowest heat (then the oldest), never ``keep``.

    Example:
        >>> hot, cold = Segment(id="hot", n_visit=5), Segment(id="cold")
        >>> coldest_segment([hot, cold], None, MemoryOSConfig(), keep="").id
        'cold'
        >>> coldest_segment([hot, cold], None, MemoryOSConfig(), keep="cold").id
        'hot'
    """
    candidates = [s for s in segments if s.id != keep]
    if not candidates:
        return None
    return min(candidates, key=lambda s: (segment_heat(s, now, config), s.created_at, s.id))


def hot_segments(segments: Iterable[Segment], now: _dt.datetime | None, config: MemoryOSConfig) -> list[Segment]:
    """The segments to promote: pages not yet promoted and heat at least ``tau``, oldest first.

    Example:
        >>> warm = Segment(id="w", n_visit=3, l_interaction=1, pending_page_ids=["p"])
        >>> [s.id for s in hot_segments([warm, Segment(id="c", pending_page_ids=["q"])], None, MemoryOSConfig())]
        ['w']
    """
    hot = [s for s in segments if s.pending_page_ids and segment_heat(s, now, config) >= config.promotion_heat]
    return sorted(hot, key=lambda s: (s.created_at, s.id))
