"""What coverage is reachable at all: candidate facts from every speaker_a turn, at three granularities.

For each conversation: every speaker_a turn as (A) the raw 'Name: text', (B) the whole turn rewritten in
the third person with names, (C) each sentence rewritten (questions and vocative-only sentences dropped).
Reports the coverage of the observations about speaker_a with no capacity, and the ORACLE bound at
capacity 100 (greedy max-coverage choosing facts that cover the most still-uncovered observations,
which knows the observations: an upper bound, not a method).

    nice -n 10 /work/main/.venv/bin/python bounds.py
"""

from __future__ import annotations

import numpy as np
from common import CachedEmbeddings, OBS_THRESHOLD, samples, user_observations
from common import _numbered_sessions, _turn_text
from extract import is_vocative_only, name_third_person, sentences_of


def greedy_cover(sim: np.ndarray, k: int) -> int:
    """sim: obs x facts (bool). Greedy max coverage with k facts."""
    covered = np.zeros(sim.shape[0], bool)
    for _ in range(min(k, sim.shape[1])):
        gain = (sim & ~covered[:, None]).sum(0)
        j = int(gain.argmax())
        if gain[j] == 0:
            break
        covered |= sim[:, j]
    return int(covered.sum())


def main() -> None:
    emb = CachedEmbeddings()
    tot: dict[str, list[int]] = {}
    nobs = 0
    for s in samples():
        conv = s["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        obs = [f for f, _ in user_observations(s)]
        nobs += len(obs)
        ov = emb.encode(obs)
        cands: dict[str, list[str]] = {"A raw turn": [], "B turn 3rd": [], "C sentence 3rd": []}
        for _, (_, turns) in _numbered_sessions(s):
            for t in turns:
                if t.get("speaker") != a:
                    continue
                text = _turn_text(t)
                cands["A raw turn"].append(f"{a}: {text}")
                sents = sentences_of(text)
                rew = [name_third_person(x, a, b) for x in sents]
                cands["B turn 3rd"].append(" ".join(r for r in rew if r))
                for x, r in zip(sents, rew):
                    if r and not x.rstrip().endswith("?") and not is_vocative_only(x):
                        cands["C sentence 3rd"].append(r)
        for key, facts in cands.items():
            facts = [f for f in facts if f.strip()]
            sim = (ov @ emb.encode(facts).T) >= OBS_THRESHOLD
            row = tot.setdefault(key, [0, 0, 0])
            row[0] += int(sim.any(1).sum())
            row[1] += greedy_cover(sim, 100)
            row[2] += len(facts)
        emb.save()
        print(s["sample_id"], {k: len(v) for k, v in cands.items()}, flush=True)
    print(f"{'candidates':16s} {'n':>6s} {'coverage (no cap)':>18s} {'oracle @100':>12s}")
    for key, (cov, cap, n) in tot.items():
        print(f"{key:16s} {n:6d} {100 * cov / nobs:17.1f}% {100 * cap / nobs:11.1f}%")


if __name__ == "__main__":
    main()
