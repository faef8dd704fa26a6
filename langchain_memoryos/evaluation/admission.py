"""LoCoMo admission check: does the write-gate admit the turns worth remembering?

LoCoMo questions cite the dialogue turns that hold their evidence. A turn is
*worth remembering* when any question cites it; the gate *admits* a turn when
at least one typed record parsed from it passes ``G >= tau_g``. Precision,
recall and F1 of the admitted turns against the cited ones measure the gate
without any model; two floors put the numbers in context (admit every turn;
admit turns of at least 25 words).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from langchain_memoryos.evaluation.locomo import LocomoTurn, cited_turns, iter_locomo_turns
from langchain_memoryos.kernel.controller import MemoryController
from langchain_memoryos.scoring import gate

__all__ = ["AdmissionScore", "admission_check"]


@dataclass(frozen=True)
class AdmissionScore:
    """Precision, recall and F1 of admitted turns against cited turns.

    Example:
        >>> AdmissionScore(tp=5, fp=5, fn=0).f1
        0.6666666666666666
    """

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        """``tp / (tp + fp)``.

        Example:
            >>> AdmissionScore(1, 1, 0).precision
            0.5
        """
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        """``tp / (tp + fn)``.

        Example:
            >>> AdmissionScore(1, 0, 1).recall
            0.5
        """
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall.

        Example:
            >>> AdmissionScore(1, 1, 1).f1
            0.5
        """
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _score(
    turns: Iterable[LocomoTurn], cited: set[tuple[str, str]], admit: Callable[[LocomoTurn], bool]
) -> AdmissionScore:
    tp = fp = fn = 0
    for turn in turns:
        gold = (turn.sample_id, turn.dia_id) in cited
        predicted = admit(turn)
        tp += gold and predicted
        fp += predicted and not gold
        fn += gold and not predicted
    return AdmissionScore(tp, fp, fn)


def admission_check(
    path: str | Path,
    controller: MemoryController,
    *,
    gate_threshold: float = 0.5,
) -> dict[str, AdmissionScore]:
    """Score the write-gate's admission against LoCoMo's cited turns, with two floors.

    Every turn is parsed with ``controller.parse_records(text, "user")`` (both
    speakers: either may be asked about) and admitted when any record passes
    the gate.

    Args:
        path: a LoCoMo file (``locomo10.json`` format).
        controller: the controller whose typed records are gated.
        gate_threshold: ``tau_g``.

    Returns:
        ``{"gate": …, "admit_all": …, "min_25_words": …}``.

    Example:
        >>> import json, tempfile
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> sample = {"sample_id": "c1", "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023",
        ...     "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben!"},
        ...                   {"speaker": "Ben", "dia_id": "D1:2", "text": "I moved to Oslo last month."}]},
        ...     "qa": [{"question": "Where does Ben live?", "evidence": ["D1:2"], "category": 4}]}
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = Path(tmp) / "locomo.json"
        ...     _ = path.write_text(json.dumps([sample]))
        ...     scores = admission_check(path, HeuristicController())
        >>> {name: (s.tp, s.fp, s.fn) for name, s in scores.items()}
        {'gate': (1, 0, 0), 'admit_all': (1, 1, 0), 'min_25_words': (0, 0, 1)}
    """
    turns = [t for t in iter_locomo_turns(path) if t.dia_id]
    cited = cited_turns(path)

    def admitted(turn: LocomoTurn) -> bool:
        records = controller.parse_records(turn.text, "user").records
        return any(gate(r, gate_threshold).admitted for r in records)

    return {
        "gate": _score(turns, cited, admitted),
        "admit_all": _score(turns, cited, lambda t: True),
        "min_25_words": _score(turns, cited, lambda t: len(t.text.split()) >= 25),
    }
