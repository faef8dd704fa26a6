"""The rows and the table of *answers in context* in ``memoryos bench locomo``.

The measure itself is :mod:`~langchain_memoryos.evaluation.answers`; this module gives the benchmark
what it needs around it:

* :func:`with_answers` — a row's outcomes of one conversation with ``answer_hit`` (the gold answer in
  that question's context) and ``chance_hit`` (in the context of the question half the list away);
* the rows of the measured memory beside its own: ``"<name>, no facts"`` (``top_facts=0``, read over the
  same store) and ``"<name>, oracle facts"`` (the memory's facts deleted and LoCoMo's ``observation``
  annotations written as the user's facts with ``add_fact``, dated by their session:
  :func:`write_observations`); the trivial store ``"raw turns ≤N words"`` (:func:`raw_turn_pages`);
* :func:`answers_summary` and :func:`answers_table` — per budget, each row's share of category 1, 2 and 4
  questions whose answer is in the context (95 % CI), its chance, temporal (2), open-domain (3, apart),
  and the chance-corrected gain of facts ``(with − chance) − (without − chance)`` with a paired 95 % CI.

Example:
    >>> from langchain_memoryos.evaluation.metrics import QuestionOutcome
    >>> qs = [QuestionOutcome("m", "c", f"q{i}", 4, (), frozenset(), 5, 5, 0.0, answer=a)
    ...       for i, a in enumerate(["Oslo", "pottery"])]
    >>> [(o.answer_hit, o.chance_hit) for o in with_answers(qs, ["Ana lives in Oslo.", "Ana paints."])]
    [(True, False), (False, False)]
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.evaluation.answers import (
    answer_in_context,
    answer_tokens,
    chance_corrected_gain,
    chance_partners,
    paired_difference,
)
from langchain_memoryos.evaluation.locomo import LocomoPage, _session_date
from langchain_memoryos.evaluation.metrics import CATEGORIES, QuestionOutcome, bootstrap_ci

__all__ = [
    "ANSWER_CATEGORIES",
    "CV_FACTS",
    "NO_FACTS",
    "ORACLE_FACTS",
    "RAW_TURNS",
    "answers_summary",
    "answers_table",
    "raw_turn_pages",
    "variant_name",
    "with_answers",
    "write_observations",
]

#: The categories of the headline share (short gold answers); 3 is reported apart, 5 has no answer.
ANSWER_CATEGORIES = frozenset({1, 2, 4})
#: The row of the measured memory read with ``top_facts=0`` over the same store.
NO_FACTS = "no facts"
#: The row of the measured memory whose ``facts_words`` each conversation gets from the others (LOCO-CV on answers).
CV_FACTS = "facts words by LOCO-CV"
#: The row of the measured memory with LoCoMo's observations as its facts.
ORACLE_FACTS = "oracle facts"
#: The trivial store: the raw transcript's turns most similar to the question (flat hybrid), at the same words.
RAW_TURNS = "raw turns"


def variant_name(row: str, system: str, variant: str) -> str:
    """The name of a variant of a memory row: ``"memoryos ≤500 words"`` → ``"memoryos, no facts ≤500 words"``.

    Example:
        >>> variant_name("memoryos ≤500 words", "memoryos", NO_FACTS), variant_name("memoryos", "memoryos", NO_FACTS)
        ('memoryos, no facts ≤500 words', 'memoryos, no facts')
    """
    return f"{system}, {variant}{row[len(system) :]}"


def with_answers(outcomes: Sequence[QuestionOutcome], contexts: Sequence[str]) -> list[QuestionOutcome]:
    """One row's outcomes of one conversation (in the order asked) with ``answer_hit`` and ``chance_hit``.

    ``chance_hit``: the gold answer checked against the context of the question half the list away
    (:func:`~langchain_memoryos.evaluation.answers.chance_partners`).

    Example:
        >>> qs = [QuestionOutcome("m", "c", f"q{i}", 4, (), frozenset(), 5, 5, 0.0, answer="Oslo") for i in range(2)]
        >>> [(o.answer_hit, o.chance_hit) for o in with_answers(qs, ["Oslo!", "Bergen."])]
        [(True, False), (False, True)]
    """
    if len(outcomes) != len(contexts):
        raise InvalidInputError(f"one context per outcome, got {len(outcomes)} outcomes and {len(contexts)} contexts")
    tokens = [answer_tokens(c) for c in contexts]
    partners = chance_partners(len(outcomes))
    return [
        replace(o, answer_hit=answer_in_context(o.answer, tokens[i]), chance_hit=answer_in_context(o.answer, tokens[j]))
        for i, (o, j) in enumerate(zip(outcomes, partners, strict=True))
    ]


def raw_turn_pages(pages: Sequence[LocomoPage]) -> list[LocomoPage]:
    """The trivial store: every turn of ``pages`` as a page of its own (speaker and session date kept).

    Example:
        >>> p = LocomoPage("I moved.", "Nice!", "Ana", "Ben", ("D1:1", "D1:2"), _dt.datetime(2023, 5, 8), 1)
        >>> [t.text() for t in raw_turn_pages([p])]
        ['[8 May 2023] Ana: I moved.', '[8 May 2023] Ben: Nice!']
    """
    out: list[LocomoPage] = []
    for page in pages:
        sides = [(page.user_input, page.user_speaker), (page.agent_response, page.agent_speaker)]
        ids = iter(page.dia_ids)
        for text, speaker in sides:
            if not text:
                continue
            dia = next(ids, "")
            out.append(LocomoPage(text, "", speaker, "", (dia,) if dia else (), page.timestamp, page.session))
    return out


def write_observations(memory: Any, sample: Mapping[str, Any], *, user_id: str) -> dict[str, int]:
    """The oracle: drop the memory's own user facts, then write LoCoMo's observations through ``add_fact``.

    The facts are dropped by exporting the user, leaving the facts out and importing the rest
    (``mode="replace"``): ``delete_fact`` would forget the sentences each fact was made from, and the
    oracle must read the same pages as the memory it stands beside. Every observation (both
    speakers) is written as the user's fact, dated by its session.

    Returns:
        ``{"deleted": …, "written": …, "<action>": …}`` — what the write path did with them.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> sample = {"conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023"},
        ...           "observation": {"session_1_observation": {"Ana": [["Ana adopted a dog named Max.", "D1:1"]]}}}
        >>> m = MemoryOS(); _ = m.add_turn("I'm vegan.", "Noted.", user_id="c")
        >>> write_observations(m, sample, user_id="c")
        {'deleted': 1, 'written': 1, 'stored': 1}
        >>> [(f.summary, f.created_at.date().isoformat()) for f in m.list_facts(user_id="c")]
        [('Ana adopted a dog named Max.', '2023-05-08')]
        >>> [p.user_input for p in m.get_stm(user_id="c")]  # the page the dropped fact was read off stays
        ["I'm vegan."]
    """
    counts: Counter[str] = Counter()
    exported = memory.export_user(user_id=user_id)
    kept = [item for item in exported["items"] if list(item["namespace"][:2]) != ["facts", "user"]]
    counts["deleted"] = len(exported["items"]) - len(kept)
    if counts["deleted"]:
        memory.import_user({**exported, "items": kept}, mode="replace")
    conv = sample.get("conversation") or {}
    obs = sample.get("observation") or {}
    counts["written"] += 0
    for key in sorted(obs, key=lambda k: int(re.sub(r"\D", "", k) or 0)):
        session = int(re.sub(r"\D", "", key) or 0)
        when: _dt.datetime | None = _session_date(conv.get(f"session_{session}_date_time"))
        for items in obs[key].values():
            for item in items:
                text = str(item[0]).strip() if item else ""
                if not text:
                    continue
                counts["written"] += 1
                for event in memory.add_fact(text, user_id=user_id, timestamp=when, source="observation"):
                    counts[event.action] += 1
    return dict(counts)


def _share(hits: Sequence[bool], n_boot: int) -> dict[str, Any]:
    values = [float(h) for h in hits]
    if not values:
        return {"share": None, "ci": [None, None], "n": 0}
    low, high = bootstrap_ci(values, n_boot=n_boot)
    return {"share": sum(values) / len(values), "ci": [low, high], "n": len(values)}


def _key(o: QuestionOutcome, seen: Counter[tuple[str, str]]) -> tuple[str, str, int]:
    seen[(o.sample_id, o.question)] += 1
    return (o.sample_id, o.question, seen[(o.sample_id, o.question)])


def _by_question(outcomes: Sequence[QuestionOutcome]) -> dict[tuple[str, str, int], QuestionOutcome]:
    seen: Counter[tuple[str, str]] = Counter()
    return {_key(o, seen): o for o in outcomes}


def _row_figures(outcomes: Sequence[QuestionOutcome], n_boot: int) -> dict[str, Any]:
    scored = [o for o in outcomes if o.answer_hit is not None and o.chance_hit is not None]
    head = [o for o in scored if o.category in ANSWER_CATEGORIES]
    out: dict[str, Any] = _share([bool(o.answer_hit) for o in head], n_boot)
    out["chance"] = _share([bool(o.chance_hit) for o in head], n_boot)["share"]
    out["words"] = sum(o.words for o in head) / len(head) if head else None
    for category in (1, 2, 3, 4):
        hits = [bool(o.answer_hit) for o in scored if o.category == category]
        chance = [bool(o.chance_hit) for o in scored if o.category == category]
        out[CATEGORIES[category]] = {
            "share": sum(hits) / len(hits) if hits else None,
            "chance": sum(chance) / len(chance) if chance else None,
            "n": len(hits),
        }
    return out


def _gain(
    with_rows: Sequence[QuestionOutcome],
    without_rows: Sequence[QuestionOutcome],
    categories: frozenset[int],
    n_boot: int,
) -> dict[str, Any]:
    """``(with − chance) − (without − chance)`` and the raw paired difference, over the questions both scored."""
    without = _by_question(without_rows)
    pairs = [
        (a, without[k])
        for k, a in _by_question(with_rows).items()
        if k in without and a.category in categories and a.answer_hit is not None and a.chance_hit is not None
    ]
    gain = chance_corrected_gain(
        [bool(a.answer_hit) for a, _ in pairs],
        [bool(a.chance_hit) for a, _ in pairs],
        [bool(b.answer_hit) for _, b in pairs],
        [bool(b.chance_hit) for _, b in pairs],
        n_boot=n_boot,
    )
    raw = paired_difference([float(bool(a.answer_hit)) - float(bool(b.answer_hit)) for a, b in pairs], n_boot=n_boot)
    return {
        "gain": gain.mean,
        "gain_ci": [gain.low, gain.high],
        "difference": raw.mean,
        "difference_ci": [raw.low, raw.high],
        "better": raw.better,
        "worse": raw.worse,
        "n": gain.n,
    }


def answers_summary(
    outcomes: Sequence[QuestionOutcome], rows: Mapping[int, Mapping[str, str]], *, n_boot: int = 1000
) -> dict[str, Any]:
    """Answers in context per budget: each row's figures and the chance-corrected gains of facts.

    Args:
        outcomes: the run's outcomes (those with ``answer_hit`` count).
        rows: per word budget, ``{"with facts": name, "without facts": name, "oracle facts": name,
            "hybrid": name, "raw turns": name, …}`` (missing systems are skipped).
        n_boot: bootstrap resamples.

    Returns:
        ``{"budgets": {budget: {"rows": {label: {"system", "share", "ci", "chance", …}},
        "gain": …, "gain_temporal": …, "cv_gain": …, "cv_gain_temporal": …, "oracle_gain": …,
        "oracle_gain_temporal": …}}}`` (``cv_``: the row ``"with facts (LOCO-CV words)"``); gains are
        ``(with − chance) − (without − chance)`` over categories 1, 2, 4 (temporal: 2), paired per question.

    Example:
        >>> def o(system, q, hit, chance):
        ...     return QuestionOutcome(system, "c", q, 2, (), frozenset(), 9, 9, 0.0, answer="x",
        ...                            answer_hit=hit, chance_hit=chance)
        >>> outs = [o("m", "q1", True, False), o("m", "q2", True, True), o("m0", "q1", False, False),
        ...         o("m0", "q2", True, True)]
        >>> s = answers_summary(outs, {500: {"with facts": "m", "without facts": "m0"}}, n_boot=50)
        >>> s["budgets"][500]["rows"]["with facts"]["share"], s["budgets"][500]["gain"]["gain"]
        (1.0, 0.5)
    """
    by_system: dict[str, list[QuestionOutcome]] = {}
    for o in outcomes:
        if o.answer_hit is not None:
            by_system.setdefault(o.system, []).append(o)
    budgets: dict[int, Any] = {}
    for budget, names in rows.items():
        entry: dict[str, Any] = {"rows": {}}
        for label, name in names.items():
            if name in by_system:
                entry["rows"][label] = {"system": name, **_row_figures(by_system[name], n_boot)}
        with_rows = by_system.get(names.get("with facts", ""))
        without_rows = by_system.get(names.get("without facts", ""))
        oracle_rows = by_system.get(names.get("oracle facts", ""))
        if with_rows and without_rows:
            entry["gain"] = _gain(with_rows, without_rows, ANSWER_CATEGORIES, n_boot)
            entry["gain_temporal"] = _gain(with_rows, without_rows, frozenset({2}), n_boot)
        cv_rows = by_system.get(names.get("with facts (LOCO-CV words)", ""))
        if cv_rows and without_rows:
            entry["cv_gain"] = _gain(cv_rows, without_rows, ANSWER_CATEGORIES, n_boot)
            entry["cv_gain_temporal"] = _gain(cv_rows, without_rows, frozenset({2}), n_boot)
        if oracle_rows and without_rows:
            entry["oracle_gain"] = _gain(oracle_rows, without_rows, ANSWER_CATEGORIES, n_boot)
            entry["oracle_gain_temporal"] = _gain(oracle_rows, without_rows, frozenset({2}), n_boot)
        budgets[budget] = entry
    return {
        "definition": "share of category 1, 2 and 4 questions whose gold answer's content tokens (lower-cased, "
        "punctuation and stopwords dropped, plural s folded, dates in any written form normalised) are all in "
        "the context text; chance: the same answer against the context of the question half the conversation's "
        "question list away; gain: (with facts - its chance) - (without facts - its chance), paired per question",
        "budgets": budgets,
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _points(gain: Mapping[str, Any] | None, key: str = "gain") -> str:
    if not gain or gain.get(key) is None:
        return "–"
    low, high = gain[f"{key}_ci"]
    return f"{100 * gain[key]:+.1f} ({100 * low:+.1f}, {100 * high:+.1f})"


def answers_table(summary: Mapping[str, Any]) -> str:
    """The answers-in-context table of a run (markdown): one line per budget and row, then the gains.

    Example:
        >>> print(answers_table({"budgets": {500: {"rows": {"with facts": {"system": "m", "share": 0.5,
        ...     "ci": [0.4, 0.6], "chance": 0.1, "n": 10, "words": 480.0, "temporal": {"share": 0.25},
        ...     "open-domain": {"share": None}}}}}}).splitlines()[2])
        | 500 | with facts (m) | 50.0 % (40.0–60.0) | 10.0 % | 25.0 % | – | 480 | 10 |
    """
    lines = [
        "| words | row | answers 1, 2, 4 (95 % CI) | chance | temporal (2) | open-domain (3) | mean words | n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    gains: list[str] = []
    for budget, entry in summary.get("budgets", {}).items():
        for label, row in entry.get("rows", {}).items():
            low, high = row.get("ci") or [None, None]
            ci = f" ({100 * low:.1f}–{100 * high:.1f})" if low is not None and high is not None else ""
            words = f"{row['words']:.0f}" if row.get("words") is not None else "–"
            lines.append(
                f"| {budget} | {label} ({row['system']}) | {_pct(row.get('share'))}{ci} | {_pct(row.get('chance'))} "
                f"| {_pct(row.get('temporal', {}).get('share'))} | {_pct(row.get('open-domain', {}).get('share'))} "
                f"| {words} | {row.get('n', 0)} |"
            )
        if "gain" in entry or "oracle_gain" in entry:
            gains.append(
                f"| {budget} | {_points(entry.get('gain'))} | {_points(entry.get('gain'), 'difference')} "
                f"| {_points(entry.get('gain_temporal'))} | {_points(entry.get('cv_gain'))} "
                f"| {_points(entry.get('cv_gain_temporal'))} | {_points(entry.get('oracle_gain'))} "
                f"| {_points(entry.get('oracle_gain_temporal'))} |"
            )
    if gains:
        lines += [
            "",
            "| words | facts: gain over chance (95 % CI) | with − without | temporal gain | LOCO-CV words: gain "
            "| LOCO-CV words: temporal | oracle gain | oracle temporal gain |",
            "|---|---|---|---|---|---|---|---|",
            *gains,
        ]
    return "\n".join(lines)
