"""The fact-phrasing suite : what a fact is, given a dialogue page.

The suite is hand-written files in ``tests/unit_tests/data``: ``fact_phrasing_dev.json`` (the
rules are worked on against it), ``fact_phrasing_test.json`` (the held-out quarter, written and
committed before the rules and not read while writing them), ``fact_phrasing_test2.json`` (a
second held-out set, written after the first was measured once, before the rules changed again),
``fact_phrasing_test3.json`` (a third held-out set, written blind: by someone who had not read the
controller's rules or their history, from the issue's text alone, and committed before it was ever run),
``fact_phrasing_test4.json`` (a fourth held-out set, written blind in the same way, and committed before it
was ever run; measured once on 51ba2fa: 40/48 through the controller and the write path; read since, and the
rules fixed on its failures as classes of phrasing, with new dev items dev-268 …),
``fact_phrasing_test5.json`` (a fifth, written blind after test4's rules and to a contract of strings matched inside
words, ``"match": "substring"``; measured once after those rules, on fef4313: 42/48 through both; read since, and
the rules fixed on its failures as classes, with new dev items dev-305 …) and ``fact_phrasing_test6.json`` (a
sixth, written blind in the same way after test5's rules; measured once after them: 31/48 through the controller,
32/48 through the write path).
Each item is one dialogue page (its two sides and its timestamp), optionally after earlier pages,
with the write it must cause:

* ``add``: one fact of the page holds every ``must`` string (``"a|b"``: either), about ``subject``
  when one is given (the fact's ``subject``); no fact of the page holds a ``must_not`` string; with
  ``shorter``, the page's facts have fewer words than its turn; ``keep``: an earlier fact still holds
  these strings after the page (facts that coexist);
* ``update``: as ``add``, and the page's fact replaces the earlier page's (the relation judge says
  ``update``; through the write path the memory no longer holds a ``must_not`` string);
* ``none``: the page yields no fact;
* ``request``: no fact, and the page's reading marks the request (``request``: ``"forget"``;
  :func:`run_controller` checks the mark, :func:`run_write_path` that nothing is stored).

Two runs: :func:`run_controller` asks a controller for each page's records directly (the
write-gate's verdict decides which are facts); :func:`run_write_path` writes the turns with
``MemoryOS.add_turn`` and reads ``list_facts`` (a page's facts are written when it leaves STM or
when it is added: both pass, since a filler turn follows every page).

The rates: ``PYTHONPATH=$PWD python -m tests.fact_phrasing`` (the dev set's failures are listed,
the held-out sets' are not unless ``--show-failures`` is given: only once a set has been measured).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.controllers import HeuristicController, MemoryController
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.schema import DialoguePage, MemoryRecord
from langchain_memoryos.scoring import gate

DATA = Path(__file__).resolve().parent / "unit_tests" / "data"
DEV = DATA / "fact_phrasing_dev.json"
TEST = DATA / "fact_phrasing_test.json"
TEST2 = DATA / "fact_phrasing_test2.json"
TEST3 = DATA / "fact_phrasing_test3.json"
TEST4 = DATA / "fact_phrasing_test4.json"
TEST5 = DATA / "fact_phrasing_test5.json"
TEST6 = DATA / "fact_phrasing_test6.json"
GATE = MemoryOSConfig().gate_threshold
FILLER = ("ok", "ok")


@dataclass(frozen=True)
class Turn:
    """One page of an item: its two sides and its time."""

    user: str
    agent: str
    timestamp: dt.datetime


@dataclass(frozen=True)
class Item:
    """One utterance of the suite and the write it must cause (see the module)."""

    id: str
    turn: Turn
    action: str
    must: tuple[str, ...]
    must_not: tuple[str, ...]
    subject: str = ""
    request: str = ""
    shorter: bool = False
    keep: tuple[str, ...] = ()
    previous: tuple[Turn, ...] = ()
    substring: bool = False  # the file's "match" is "substring": its writer was told strings match inside words

    def holds(self, text: str, wanted: str) -> bool:
        """Whether ``text`` holds ``wanted`` under this item's file's matching (:func:`holds`)."""
        if self.substring:
            return any(alternative.lower() in text.lower() for alternative in wanted.split("|"))
        return holds(text, wanted)


def _time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def load(path: Path) -> list[Item]:
    """The items of one suite file (a file whose ``"match"`` is ``"substring"`` matches its strings inside words)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    raw, substring = data["items"], data.get("match", "words") == "substring"
    return [
        Item(
            id=x["id"],
            turn=Turn(x["user"], x["agent"], _time(x["timestamp"])),
            action=x["action"],
            must=tuple(x.get("must", ())),
            must_not=tuple(x.get("must_not", ())),
            subject=x.get("subject", ""),
            request=x.get("request", ""),
            shorter=bool(x.get("shorter", False)),
            keep=tuple(x.get("keep", ())),
            previous=tuple(Turn(p["user"], p["agent"], _time(p["timestamp"])) for p in x.get("previous", ())),
            substring=substring,
        )
        for x in raw
    ]


def holds(text: str, wanted: str) -> bool:
    """Whether ``text`` holds ``wanted`` (case-blind, whole words, an "s"/"es" ending folded; ``"a|b"``: either).

    The ending is folded as in the answers-in-context measure: "never drive" is held by "never drives".

    >>> holds("Ana lives in Rome.", "rome"), holds("The user can't swim.", "not|n't"), holds("Romeo", "rome")
    (True, True, False)
    >>> holds("The user no longer smokes.", "smoke"), holds("The user smoked.", "smoke")
    (True, False)
    """
    for alternative in wanted.split("|"):
        contraction = alternative.lower().startswith("n'")  # "n't" is the end of "can't", "doesn't"
        left = r"(?<![A-Za-z0-9])" if alternative[:1].isalnum() and not contraction else ""
        right = r"(?:e?s)?(?![A-Za-z0-9])" if alternative[-1:].isalpha() else ""
        right = right or (r"(?![A-Za-z0-9])" if alternative[-1:].isalnum() else "")
        if re.search(left + re.escape(alternative) + right, text, re.IGNORECASE):
            return True
    return False


def _n_words(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9']+", text))


def _text(split_side: str) -> str:
    return re.sub(r"^[A-Z][\w .'-]{0,40}:\s", "", split_side)


def judge_facts(item: Item, facts: Sequence[MemoryRecord], requests: Sequence[str]) -> str:
    """Why the page's ``facts`` (and ``requests``) miss the item ("" when they pass)."""
    texts = [f.summary for f in facts]
    for f in facts:
        bad = [w for w in item.must_not if item.holds(f.summary, w)]
        if bad:
            return f"holds {bad}: {f.summary!r}"
    if item.action in ("none", "request"):
        if facts:
            return f"a fact from a page that states none: {texts}"
        if item.action == "request" and item.request not in requests:
            return f"not read as a {item.request!r} request (requests: {list(requests)})"
        return ""
    matching = [f for f in facts if all(item.holds(f.summary, w) for w in item.must)]
    if not matching:
        return f"no fact holds {list(item.must)}: {texts}"
    if item.subject and not any(f.subject.lower() == item.subject.lower() for f in matching):
        return f"subject is not {item.subject!r}: {[(f.subject, f.summary) for f in matching]}"
    if item.shorter:
        turn = _n_words(_text(item.turn.user)) + _n_words(_text(item.turn.agent))
        if sum(_n_words(t) for t in texts) >= turn:
            return f"facts ({sum(_n_words(t) for t in texts)} words) not shorter than the turn ({turn}): {texts}"
    return ""


def _page(turn: Turn, key: str) -> DialoguePage:
    return DialoguePage(id=key, user_input=turn.user, agent_response=turn.agent, timestamp=turn.timestamp)


@dataclass
class Outcome:
    """The result of one item: ``why`` is empty when it passed."""

    item: Item
    why: str
    facts: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.why


def _admitted(records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    return [r for r in records if gate(r, GATE).admitted]


def run_controller(items: Sequence[Item], controller: MemoryController | None = None) -> list[Outcome]:
    """Each item's page through ``controller.analyze_page`` (an update: and the offline relation judge).

    A page's facts are judged offline by the write path (no model call), so the judge is always the
    heuristic controller's.
    """
    controller = controller or HeuristicController()
    judge = HeuristicController()
    embeddings = resolve_embeddings()
    out: list[Outcome] = []
    for item in items:
        analysis = controller.analyze_page(_page(item.turn, item.id), None, None)
        facts = _admitted(analysis.records)
        requests = [r.request for r in getattr(analysis, "requests", [])]
        why = judge_facts(item, facts, requests)
        if not why and item.action == "update":
            old = [
                r
                for i, turn in enumerate(item.previous)
                for r in _admitted(controller.analyze_page(_page(turn, f"{item.id}-{i}"), None, None).records)
            ]
            new = [f for f in facts if all(item.holds(f.summary, w) for w in item.must)]
            labels = []
            for record in new:
                for j, o in enumerate(old):
                    o.id = o.id or f"old{j}"
                    a, b = embeddings.encode([record.summary, o.summary])  # type: ignore[attr-defined]
                    labels += [r.label for r in judge.judge_relations(record, [(o, float(a @ b))]).relations]
            if "update" not in labels:
                why = f"not an update of {[o.summary for o in old]} (labels {labels})"
        out.append(Outcome(item, why, [f.summary for f in facts]))
    return out


def _add(memory: MemoryOS, turn: Turn) -> None:
    """A page and a filler page after it (so the page leaves an STM of one page)."""
    memory.add_turn(turn.user, turn.agent, user_id="u", thread_id="t", timestamp=turn.timestamp)
    later = turn.timestamp + dt.timedelta(seconds=30)
    memory.add_turn(*FILLER, user_id="u", thread_id="t", timestamp=later)


def _facts(memory: MemoryOS) -> list[MemoryRecord]:
    """The user's facts and agent traits."""
    return memory.list_facts(user_id="u") + memory.list_facts(user_id="u", kind="agent")


def run_write_path(items: Sequence[Item], memory: Callable[[], MemoryOS] | None = None) -> list[Outcome]:
    """Each item through ``MemoryOS.add_turn`` (earlier pages first, a filler turn after every page)."""
    make = memory or (lambda: MemoryOS(config=MemoryOSConfig(stm_capacity=1)))
    out: list[Outcome] = []
    for item in items:
        m = make()
        for turn in item.previous:
            _add(m, turn)
        before = {f.id: f for f in _facts(m)}
        _add(m, item.turn)
        after = _facts(m)
        new = [f for f in after if f.id not in before]
        # the write path stores no fact of a request; the reading's mark is checked by run_controller
        why = judge_facts(item, new, [item.request])
        if not why and item.action == "update":
            stale = [f.summary for f in after for w in item.must_not if item.holds(f.summary, w)]
            if stale:
                why = f"the old fact is kept: {stale}"
            elif not any(e.action == "updated" for e in m.write_log(user_id="u")):
                why = "no update in the write log"
        if not why and item.keep and not any(all(item.holds(f.summary, w) for w in item.keep) for f in after):
            why = f"the earlier fact {list(item.keep)} is gone: {[f.summary for f in after]}"
        out.append(Outcome(item, why, [f.summary for f in new]))
    return out


def rate(outcomes: Sequence[Outcome]) -> float:
    """The share of items that passed."""
    return sum(o.passed for o in outcomes) / len(outcomes) if outcomes else 0.0


def _report(name: str, outcomes: Sequence[Outcome], show: bool) -> None:
    print(f"{name}: {sum(o.passed for o in outcomes)}/{len(outcomes)} = {rate(outcomes):.1%}")
    for o in outcomes:
        if show and not o.passed:
            print(f"  {o.item.id} [{o.item.action}] {o.item.turn.user!r} -> {o.why}")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Print the dev and test rates of both runs (the dev set's failures too; every set's with ``--show-failures``).

    The held-out sets' failures are listed only on request: a set not yet measured is read blind.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    show_all = "--show-failures" in args
    dev, test, test2, test3, test4 = load(DEV), load(TEST), load(TEST2), load(TEST3), load(TEST4)
    test5, test6 = load(TEST5), load(TEST6)
    rates: dict[str, Any] = {}
    for run_name, run in (("controller", run_controller), ("write path", run_write_path)):
        for set_name, items in (
            ("dev", dev),
            ("test", test),
            ("test2", test2),
            ("test3", test3),
            ("test4", test4),
            ("test5", test5),
            ("test6", test6),
        ):
            outcomes = run(items)
            _report(f"{run_name} {set_name}", outcomes, show=show_all or set_name == "dev")
            rates[f"{run_name} {set_name}"] = rate(outcomes)
    return rates


if __name__ == "__main__":
    main()
