"""The write-control suite: labelled writes, gold AMU actions, accuracy and redundancy.

The suite (``data/write_control_suite.json``, written by the project) holds
realistic multi-turn sequences of one user each: stable facts, repeats,
paraphrases, changes of state, narrowing, transient requests, small talk,
emotions without facts and third-party facts, each with its gold action
(``store`` / ``discard`` / ``update`` / ``filter``). Every write is sent to
``MemoryOS.add_fact`` for a fresh user per sequence; the predicted action of a
write is its strongest effect on the store (``update`` > ``store`` >
``discard`` > ``filter``).
"""

from __future__ import annotations

import datetime as _dt
import json
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.schema import WriteEvent

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = [
    "GOLD_ACTIONS",
    "SuiteWrite",
    "WriteControlResult",
    "load_write_control_suite",
    "predicted_action",
    "redundancy",
    "run_write_control",
]

GoldAction = Literal["store", "discard", "update", "filter"]
#: The gold vocabulary, in the order of the confusion matrix.
GOLD_ACTIONS: tuple[GoldAction, ...] = ("store", "discard", "update", "filter")
_EVENT_TO_GOLD: dict[str, GoldAction] = {
    "stored": "store",
    "discarded": "discard",
    "updated": "update",
    "filtered": "filter",
}
_STRENGTH = {"update": 3, "store": 2, "discard": 1, "filter": 0}


@dataclass(frozen=True)
class SuiteWrite:
    """One labelled write.

    Attributes:
        sequence: the sequence (one user) it belongs to.
        index: its position in the sequence.
        text: what the user said.
        kind: ``"user"`` fact or ``"agent"`` trait.
        gold: the gold action.
        gold_aspect: the gold AMU aspect.
        phenomenon: what the write tests (``moved_city``, ``small_talk`` …).
        refers_to: for discard/update, the index of the write it repeats or revises.

    Example:
        >>> w = load_write_control_suite()[0][0]  # the suite's first write: a request, not a fact
        >>> w.text[:34], w.gold, w.phenomenon
        ('hey! can you recommend a decent we', 'filter', 'transient_request')
    """

    sequence: str
    index: int
    text: str
    kind: Literal["user", "agent"]
    gold: GoldAction
    gold_aspect: str
    phenomenon: str
    refers_to: int | None


def load_write_control_suite(path: str | Path | None = None) -> list[list[SuiteWrite]]:
    """Read the suite: one list of writes per sequence.

    Args:
        path: a suite file; default: the suite shipped with the package.

    Returns:
        The sequences, in file order.

    Raises:
        ValueError: on a write with an unknown gold action or kind.

    Example:
        >>> suite = load_write_control_suite()
        >>> sum(len(s) for s in suite) >= 80
        True
    """
    if path is None:
        text = (
            resources.files("langchain_memoryos.evaluation")
            .joinpath("data/write_control_suite.json")
            .read_text(encoding="utf-8")
        )
    else:
        text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text)
    suite: list[list[SuiteWrite]] = []
    for seq in data["sequences"]:
        writes = []
        for i, w in enumerate(seq["writes"]):
            if w["gold"] not in GOLD_ACTIONS or w.get("kind", "user") not in ("user", "agent"):
                raise InvalidInputError(f"{seq['id']}[{i}]: gold must be one of {GOLD_ACTIONS}, kind user|agent")
            writes.append(
                SuiteWrite(
                    sequence=str(seq["id"]),
                    index=i,
                    text=str(w["text"]),
                    kind=w.get("kind", "user"),
                    gold=w["gold"],
                    gold_aspect=str(w.get("gold_aspect", "")),
                    phenomenon=str(w.get("phenomenon", "")),
                    refers_to=w.get("refers_to"),
                )
            )
        suite.append(writes)
    return suite


def predicted_action(events: Sequence[WriteEvent]) -> GoldAction:
    """A write's strongest effect on the store: update > store > discard > filter.

    Capacity evictions and corrections do not count; a write with no decision
    counts as ``filter``.

    Example:
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> predicted_action([WriteEvent("filtered", MemoryRecord()), WriteEvent("stored", MemoryRecord())])
        'store'
    """
    actions = [_EVENT_TO_GOLD[e.action] for e in events if e.action in _EVENT_TO_GOLD]
    return max(actions, key=lambda a: _STRENGTH[a], default="filter")


def redundancy(vectors: np.ndarray, threshold: float = 0.9) -> tuple[int, int]:
    """``(redundant pairs, all pairs)`` among unit vectors: pairs with cosine ≥ ``threshold``.

    Example:
        >>> redundancy(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
        (1, 3)
    """
    n = len(vectors)
    if n < 2:
        return 0, 0
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    upper = sims[np.triu_indices(n, k=1)]
    return int((upper >= threshold).sum()), int(upper.size)


@dataclass
class WriteControlResult:
    """What the suite measured.

    Attributes:
        rows: one dict per write (sequence, index, text, gold, predicted,
            the events' actions and reasons).
        confusion: ``confusion[gold][predicted]`` counts.
        redundant_pairs: fact pairs of one user with cosine ≥ 0.9.
        total_pairs: all fact pairs of one user (summed over users).
        facts: facts kept at the end, over all users.

    Example:
        >>> WriteControlResult().accuracy
        0.0
    """

    rows: list[dict[str, Any]] = field(default_factory=list)
    confusion: dict[str, Counter[str]] = field(default_factory=dict)
    redundant_pairs: int = 0
    total_pairs: int = 0
    facts: int = 0

    @property
    def accuracy(self) -> float:
        """Share of writes whose predicted action equals the gold action.

        Example:
            >>> WriteControlResult(rows=[{"gold": "store", "predicted": "store"}]).accuracy
            1.0
        """
        if not self.rows:
            return 0.0
        correct = sum(1 for r in self.rows if r["gold"] == r["predicted"])
        return correct / len(self.rows)

    @property
    def redundancy(self) -> float:
        """Share of same-user fact pairs with cosine ≥ 0.9 (0 when there are no pairs).

        Example:
            >>> WriteControlResult(redundant_pairs=1, total_pairs=50).redundancy
            0.02
        """
        return self.redundant_pairs / self.total_pairs if self.total_pairs else 0.0

    def accuracy_by(self, key: str) -> dict[str, tuple[int, int]]:
        """``{value: (correct, total)}`` grouped by a row field (``phenomenon``, ``gold`` …).

        Example:
            >>> WriteControlResult(rows=[{"gold": "store", "predicted": "filter"}]).accuracy_by("gold")
            {'store': (0, 1)}
        """
        out: dict[str, tuple[int, int]] = {}
        for r in self.rows:
            ok, n = out.get(str(r[key]), (0, 0))
            out[str(r[key])] = (ok + (r["gold"] == r["predicted"]), n + 1)
        return out

    def confusion_table(self) -> str:
        r"""The confusion matrix as text (rows gold, columns predicted).

        Example:
            >>> print(WriteControlResult(confusion={"store": Counter(store=2)}).confusion_table().splitlines()[0])
            gold \ predicted     store  discard   update   filter
        """
        lines = ["gold \\ predicted " + "".join(f"{a:>9}" for a in GOLD_ACTIONS)]
        for gold in GOLD_ACTIONS:
            counts = self.confusion.get(gold, Counter())
            lines.append(f"{gold:<17}" + "".join(f"{counts.get(p, 0):>9}" for p in GOLD_ACTIONS))
        return "\n".join(lines)


def run_write_control(
    memory: MemoryOS,
    suite: list[list[SuiteWrite]] | None = None,
    *,
    similarity: float = 0.9,
) -> WriteControlResult:
    """Send every write of the suite through ``memory.add_fact`` and score it.

    Each sequence is written for a fresh user (a random id), one day apart per
    write, and that user is deleted afterwards.

    Args:
        memory: the memory under test (its controller and embeddings decide).
        suite: the sequences (default: :func:`load_write_control_suite`).
        similarity: the cosine above which two kept facts count as redundant.

    Returns:
        The per-write rows, the confusion matrix and the redundancy.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> mini = [[SuiteWrite("s", 0, "I'm vegan.", "user", "store", "health", "stable_fact", None),
        ...          SuiteWrite("s", 1, "I am vegan", "user", "discard", "health", "exact_repeat", 0)]]
        >>> run_write_control(MemoryOS(), mini).accuracy
        1.0
    """
    suite = load_write_control_suite() if suite is None else suite
    result = WriteControlResult(confusion={g: Counter() for g in GOLD_ACTIONS})
    start = _dt.datetime(2026, 1, 1, tzinfo=_dt.UTC)
    for sequence in suite:
        user = f"write-control-{uuid.uuid4().hex[:12]}"
        for write in sequence:
            events = memory.add_fact(
                write.text, user_id=user, kind=write.kind, timestamp=start + _dt.timedelta(days=write.index)
            )
            predicted = predicted_action(events)
            result.confusion[write.gold][predicted] += 1
            result.rows.append(
                {
                    "sequence": write.sequence,
                    "index": write.index,
                    "text": write.text,
                    "kind": write.kind,
                    "phenomenon": write.phenomenon,
                    "gold": write.gold,
                    "predicted": predicted,
                    "events": [(e.action, e.record.summary, e.reason) for e in events],
                }
            )
        for kind in ("user", "agent"):
            summaries = [f.summary for f in memory.list_facts(user_id=user, kind=kind)]
            result.facts += len(summaries)
            if len(summaries) > 1:
                vectors = np.asarray(memory.embeddings.embed_documents(summaries), dtype=np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
                redundant, pairs = redundancy(vectors, similarity)
                result.redundant_pairs += redundant
                result.total_pairs += pairs
        memory.delete_user(user_id=user)
    return result
