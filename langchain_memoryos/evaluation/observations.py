"""LPM facts against LoCoMo's ``observation`` annotations: how much of what annotators saw the memory keeps.

LoCoMo gives, per session and speaker, the facts the annotators saw (``[fact, dia_id]``).
The user knowledge base is measured against them with MiniLM cosine:

* **coverage**: the share of speaker_a's observations whose best cosine to any stored
  user fact is ≥ 0.6;
* **precision**: the share of stored facts whose best cosine to an observation of
  *either* speaker is ≥ 0.6 (the issue's definition; ``precision_a``: speaker_a's only);
* **near-duplicate pairs**: stored fact pairs at cosine ≥ 0.9, over all n(n−1)/2 pairs;
* **capacity reached**: the knowledge base is full, or a fact was evicted.

With names, cosine ≥ 0.6 is met by content-free sentences ("Caroline likes things."):
the **name-blind** figures replace both speakers' names, "the user" and "the assistant"
by "someone" in facts and observations first (eight content-free sentences cover
45.7 % of the dev observations with names, 3.8 % name-blind: docs/research.md).

Run on the dev conversations with the plain protocol (each session's turns paired by
position, ``"Name: text"``, one timestamp per session)::

    python -m langchain_memoryos.evaluation.observations path/to/locomo10.json

Example:
    >>> blind("Caroline told Melanie about the user's dog.", ["Caroline", "Melanie"])
    "someone told someone about someone's dog."
"""

from __future__ import annotations

import argparse
import datetime as _dt
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_memoryos.embeddings import encode_texts, resolve_embeddings
from langchain_memoryos.evaluation.locomo import _numbered_sessions, _turn_text, load_locomo, normalize_evidence

__all__ = [
    "DUPLICATE_THRESHOLD",
    "OBSERVATION_THRESHOLD",
    "ObservationFigures",
    "blind",
    "ingest_plain",
    "main",
    "measure_facts",
    "observation_figures",
    "observations_of",
    "plain_pairs",
    "pooled",
]

#: An observation is matched by a fact at MiniLM cosine >= 0.6 (lenient with names: hence the name-blind figures).
OBSERVATION_THRESHOLD = 0.6
#: Two stored facts at cosine >= 0.9 are a near-duplicate pair.
DUPLICATE_THRESHOLD = 0.9


def blind(text: str, names: Iterable[str]) -> str:
    """The text with the speakers' names, "the user" and "the assistant" as "someone".

    Example:
        >>> blind("The user met Ana's sister.", ["Ana"])
        "someone met someone's sister."
    """
    for name in [*names, "the user", "The user", "the assistant", "The assistant"]:
        if not name:
            continue
        text = re.sub(rf"\b{re.escape(name)}'s\b", "someone's", text)
        text = re.sub(rf"\b{re.escape(name)}\b", "someone", text)
    return text


def observations_of(sample: Mapping[str, Any], speaker: str | None = None) -> list[str]:
    """The observation texts of one speaker (``None``: both), session by session.

    Example:
        >>> obs = {"Ana": [["Ana paints.", "D1:1"]], "Ben": [["Ben runs.", "D1:2"]]}
        >>> s = {"observation": {"session_1_observation": obs}}
        >>> observations_of(s, "Ana"), observations_of(s)
        (['Ana paints.'], ['Ana paints.', 'Ben runs.'])
    """
    out: list[str] = []
    obs = sample.get("observation") or {}
    for key in sorted(obs, key=lambda k: int(re.sub(r"\D", "", k) or 0)):
        for who, items in obs[key].items():
            if speaker is None or who == speaker:
                out.extend(str(item[0]) for item in items)
    return out


@dataclass
class ObservationFigures:
    """The figures of one conversation's stored user facts (counts; see :func:`pooled` for shares).

    Example:
        >>> f = ObservationFigures("c", facts=2, observations=4, covered=3, matched=1)
        >>> f.coverage, f.precision
        (0.75, 0.5)
    """

    conversation: str
    facts: int = 0
    observations: int = 0
    covered: int = 0
    matched: int = 0
    matched_a: int = 0
    dup_pairs: int = 0
    pairs: int = 0
    blind_covered: int = 0
    blind_matched: int = 0
    capacity_reached: bool = False
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        """Share of speaker_a's observations matched by a fact."""
        return self.covered / self.observations if self.observations else 0.0

    @property
    def precision(self) -> float:
        """Share of facts that match an observation of either speaker."""
        return self.matched / self.facts if self.facts else 0.0

    @property
    def dup_rate(self) -> float:
        """Share of fact pairs that are near-duplicates."""
        return self.dup_pairs / self.pairs if self.pairs else 0.0

    @property
    def blind_coverage(self) -> float:
        """Name-blind coverage."""
        return self.blind_covered / self.observations if self.observations else 0.0

    @property
    def blind_precision(self) -> float:
        """Name-blind precision (either speaker)."""
        return self.blind_matched / self.facts if self.facts else 0.0

    def line(self) -> str:
        """One printed row.

        Example:
            >>> ObservationFigures("c", facts=1, observations=2, covered=1, matched=1).line().split(" | ")[1]
            'coverage  50.0 %'
        """
        return (
            f"{self.conversation:>8} | coverage {100 * self.coverage:5.1f} % | precision {100 * self.precision:5.1f} % "
            f"| facts {self.facts:4d} | near-dup {100 * self.dup_rate:.2f} % ({self.dup_pairs}/{self.pairs}) "
            f"| blind coverage {100 * self.blind_coverage:5.1f} % "
            f"| blind precision {100 * self.blind_precision:5.1f} % "
            f"| capacity {'reached' if self.capacity_reached else 'no'}"
        )


def _encode(embeddings: Embeddings, texts: Sequence[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return np.asarray(encode_texts(embeddings, tuple(texts)), dtype=np.float32)


def observation_figures(
    sample: Mapping[str, Any],
    facts: Sequence[str],
    embeddings: Embeddings,
    *,
    capacity_reached: bool = False,
    threshold: float = OBSERVATION_THRESHOLD,
    duplicate: float = DUPLICATE_THRESHOLD,
) -> ObservationFigures:
    """Coverage, precision, near-duplicate pairs and the name-blind figures of one conversation's facts.

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> s = {"sample_id": "c", "conversation": {"speaker_a": "Ana", "speaker_b": "Ben"},
        ...      "observation": {"session_1_observation": {"Ana": [["Ana adopted a dog named Rex.", "D1:1"]]}}}
        >>> f = observation_figures(s, ["Ana adopted a dog called Rex."], resolve_embeddings())
        >>> f.coverage, f.precision, f.blind_coverage
        (1.0, 1.0, 1.0)
    """
    conv = sample.get("conversation", {})
    a, b = str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))
    own, every = observations_of(sample, a), observations_of(sample)
    out = ObservationFigures(str(sample.get("sample_id", "")), facts=len(facts), observations=len(own))
    out.capacity_reached = capacity_reached
    out.pairs = len(facts) * (len(facts) - 1) // 2
    if not facts or not own:
        return out
    fv, ov, ev = _encode(embeddings, facts), _encode(embeddings, own), _encode(embeddings, every)
    out.covered = int(((ov @ fv.T).max(axis=1) >= threshold).sum())
    out.matched = int(((ev @ fv.T).max(axis=0) >= threshold).sum())
    out.matched_a = int(((ov @ fv.T).max(axis=0) >= threshold).sum())
    ff = fv @ fv.T
    out.dup_pairs = int((ff[np.triu_indices(len(facts), 1)] >= duplicate).sum())
    names = [a, b]
    bf = _encode(embeddings, [blind(f, names) for f in facts])
    bo = _encode(embeddings, [blind(o, names) for o in own])
    be = _encode(embeddings, [blind(o, names) for o in every])
    out.blind_covered = int(((bo @ bf.T).max(axis=1) >= threshold).sum())
    out.blind_matched = int(((be @ bf.T).max(axis=0) >= threshold).sum())
    return out


def pooled(rows: Sequence[ObservationFigures]) -> ObservationFigures:
    """The conversations pooled (counts summed; capacity reached if in any).

    Example:
        >>> pooled([ObservationFigures("a", facts=1, observations=2, covered=1),
        ...         ObservationFigures("b", facts=1, observations=2, covered=2)]).coverage
        0.75
    """
    total = ObservationFigures("pooled")
    for r in rows:
        for name in (
            "facts",
            "observations",
            "covered",
            "matched",
            "matched_a",
            "dup_pairs",
            "pairs",
            "blind_covered",
            "blind_matched",
        ):
            setattr(total, name, getattr(total, name) + getattr(r, name))
    total.capacity_reached = any(r.capacity_reached for r in rows)
    total.extra["capacity_reached_in"] = float(sum(r.capacity_reached for r in rows))
    return total


def plain_pairs(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The plain protocol: each session's turns paired by position, ``"Name: text"``, the session's date.

    Example:
        >>> s = {"conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
        ...      "session_1_date_time": "1:56 pm on 8 May, 2023",
        ...      "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "Hi!"},
        ...                    {"speaker": "Ben", "dia_id": "D1:2", "text": "Hello."}]}}
        >>> [(p["user_input"], p["agent_response"], p["source_id"]) for p in plain_pairs(s)]
        [('Ana: Hi!', 'Ben: Hello.', ['D1:1', 'D1:2'])]
    """
    out: list[dict[str, Any]] = []
    for _, (date, turns) in _numbered_sessions(sample):
        stamp = date or _dt.datetime(2023, 1, 1, tzinfo=_dt.UTC)
        for i in range(0, len(turns), 2):
            group = turns[i : i + 2]
            texts = [f"{t.get('speaker', '')}: {_turn_text(t)}" for t in group]
            out.append(
                {
                    "user_input": texts[0],
                    "agent_response": texts[1] if len(texts) > 1 else "",
                    "timestamp": stamp,
                    "source_id": [d for t in group for d in normalize_evidence(t.get("dia_id", ""))],
                }
            )
    return out


def ingest_plain(memory: Any, sample: Mapping[str, Any]) -> int:
    """Feed one conversation through ``add_turn`` with the plain protocol; returns the turns added.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> s = {"sample_id": "c", "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
        ...      "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a dog."}]}}
        >>> ingest_plain(MemoryOS(), s)
        1
    """
    conv = str(sample.get("sample_id", "conv"))
    pairs = plain_pairs(sample)
    for p in pairs:
        memory.add_turn(
            p["user_input"],
            p["agent_response"],
            user_id=conv,
            thread_id=conv,
            timestamp=p["timestamp"],
            metadata={"source_id": p["source_id"]},
        )
    return len(pairs)


def measure_facts(
    samples: Sequence[Mapping[str, Any]],
    make_memory: Callable[[], Any],
    *,
    embeddings: Embeddings | None = None,
    ingest: Callable[[Any, Mapping[str, Any]], int] = ingest_plain,
) -> tuple[list[ObservationFigures], float]:
    """Each conversation into a fresh memory, then its user facts measured; also the ingest seconds per turn.

    Args:
        samples: LoCoMo conversations.
        make_memory: a new ``MemoryOS`` per conversation (the memory system measured).
        embeddings: the encoder of the figures (default: the offline MiniLM).
        ingest: how turns are fed (default :func:`ingest_plain`).

    Returns:
        One row per conversation, and the mean ingest time per turn in seconds.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> s = {"sample_id": "c", "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
        ...      "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a dog."}]},
        ...      "observation": {"session_1_observation": {"Ana": [["Ana adopted a dog.", "D1:1"]]}}}
        >>> rows, per_turn = measure_facts([s], MemoryOS)
        >>> rows[0].observations, per_turn > 0
        (1, True)
    """
    emb = embeddings or resolve_embeddings()
    rows: list[ObservationFigures] = []
    seconds, turns = 0.0, 0
    for sample in samples:
        memory = make_memory()
        conv = str(sample.get("sample_id", "conv"))
        start = time.perf_counter()
        turns += ingest(memory, sample)
        seconds += time.perf_counter() - start
        facts = memory.list_facts(user_id=conv)
        evicted = any(e.action == "evicted" for e in memory.write_log(user_id=conv))
        full = evicted or len(facts) >= memory.config.user_kb_capacity
        rows.append(observation_figures(sample, [f.summary for f in facts], emb, capacity_reached=full))
    return rows, seconds / max(1, turns)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: the observation figures of the default memory on a LoCoMo file (plain protocol).

    Example:
        >>> import json, tempfile
        >>> turns = [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Oslo last year."},
        ...          {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice city!"}]
        >>> turns += [{"speaker": "Ana" if i % 2 == 0 else "Bo", "dia_id": f"D1:{i + 3}", "text": f"Chat {i}."}
        ...           for i in range(16)]  # enough turns for the first page to leave STM
        >>> sample = {"sample_id": "c1", "conversation": {"speaker_a": "Ana", "speaker_b": "Bo",
        ...     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns},
        ...     "observation": {"session_1_observation": {"Ana": [["Ana lives in Oslo.", "D1:1"]]}}, "qa": []}
        >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        ...     json.dump([sample], f)
        >>> main([f.name])  # doctest: +ELLIPSIS
              c1 | coverage 100.0 % | precision 100.0 % | facts    1 | near-dup 0.00 % (0/0) | ...
        ...
        0
    """
    from langchain_memoryos.config import MemoryOSConfig
    from langchain_memoryos.memory import MemoryOS

    parser = argparse.ArgumentParser(prog="python -m langchain_memoryos.evaluation.observations")
    parser.add_argument("path", help="a LoCoMo file (e.g. locomo_dev.json)")
    parser.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
    args = parser.parse_args(argv)
    samples = load_locomo(args.path)
    if args.conversations:
        wanted = set(args.conversations.split(","))
        samples = [s for s in samples if s["sample_id"] in wanted]
    rows, per_turn = measure_facts(samples, lambda: MemoryOS(config=MemoryOSConfig()))
    for row in rows:
        print(row.line())
    total = pooled(rows)
    print(total.line().replace("capacity reached", "capacity"))
    print(
        f"capacity reached in {int(total.extra['capacity_reached_in'])} of {len(rows)}; "
        f"ingest {1000 * per_turn:.1f} ms per turn"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
