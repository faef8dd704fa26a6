"""A tiny logistic write-gate score over the rule features (numpy only), fitted leave-one-conversation-out.

Label of a candidate: it carries an annotated fact about its speaker — name-blind cosine >= 0.6 to an
observation of that speaker whose evidence is the candidate's own turn (``blind_same``). Both speakers'
candidates of the 4 training conversations are used (the task is the same for either speaker).
"""

from __future__ import annotations

import numpy as np

FEATURES: list[str] | None = None


def matrix(rows: list[dict]) -> np.ndarray:
    global FEATURES
    if FEATURES is None:
        FEATURES = sorted(rows[0]["feats"])
    return np.array([[r["feats"][k] for k in FEATURES] for r in rows], dtype=np.float64)


def label(r: dict, thr: float = 0.6) -> float:
    return float(r["blind_same"] >= thr)


def fit(rows: list[dict], l2: float = 1.0, iters: int = 400, lr: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = matrix(rows)
    y = np.array([label(r) for r in rows])
    mu, sd = x.mean(0), x.std(0) + 1e-9
    mu[FEATURES.index("bias")], sd[FEATURES.index("bias")] = 0.0, 1.0
    z = (x - mu) / sd
    w = np.zeros(z.shape[1])
    n = len(y)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(z @ w)))
        g = z.T @ (p - y) / n + l2 * w / n
        w -= lr * g
    return w, mu, sd


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray], rows: list[dict]) -> np.ndarray:
    w, mu, sd = model
    z = (matrix(rows) - mu) / sd
    return 1 / (1 + np.exp(-(z @ w)))


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = y == 1
    n1, n0 = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)) if n1 and n0 else float("nan")


def loco_scores(table: list[dict], convs: list[str]) -> dict[int, float]:
    """Held-out score of every row (by id(row)) and the models."""
    out: dict[int, float] = {}
    models = {}
    for held in convs:
        train = [r for r in table if r["conv"] != held]
        model = fit(train)
        models[held] = model
        test = [r for r in table if r["conv"] == held]
        for r, p in zip(test, predict(model, test), strict=True):
            out[id(r)] = float(p)
    return out, models


if __name__ == "__main__":
    import pickle
    from pathlib import Path

    table = pickle.load(open(Path(__file__).resolve().parent / "out" / "table.pkl", "rb"))
    convs = sorted({r["conv"] for r in table})
    a = [r for r in table if r["is_a"]]
    print("label rate (speaker_a):", np.mean([label(r) for r in a]), " named grounded:",
          np.mean([r["best_same"] >= 0.6 for r in a]))
    scores, models = loco_scores(table, convs)
    for held in convs:
        rows = [r for r in table if r["conv"] == held and r["is_a"]]
        s = np.array([scores[id(r)] for r in rows])
        y = np.array([label(r) for r in rows])
        pk = np.array([float(r["personal"] and r["aspect"] != "other" and r["intent"] not in ("other", "request"))
                       for r in rows])
        print(held, f"held-out AUC learned {auc(s, y):.3f}  package-gate AUC {auc(pk + 1e-3 * s, y):.3f}")
    w, mu, sd = models[convs[0]]
    for k, v in sorted(zip(FEATURES, w), key=lambda kv: -abs(kv[1]))[:15]:
        print(f"   {k:24s} {v:+.2f}")
