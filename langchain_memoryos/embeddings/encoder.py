"""The pure-numpy BERT forward pass: batching by length, layer norm, attention, exact GELU, mean pooling."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import Final, cast

import numpy as np
import numpy.typing as npt

from langchain_memoryos.embeddings.weights import FloatArray, _BertConfig, _Weights

__all__: list[str] = []

_MASK_BIAS: Final[float] = -1e30
_INV_SQRT2: Final[float] = 1.0 / math.sqrt(2.0)

# Rational minimax approximation of erf(x) on [-4, 4] (odd numerator of degree
# 13 over even denominator of degree 8; the float32 approximation used by
# Eigen/XLA).  Approximation error < 7e-8 in exact arithmetic and < 5e-7 when
# evaluated in float32 -- i.e. a few float32 ulps, far below the noise of the
# float32 matmuls.  Outside [-4, 4], erf(x) rounds to +/-1 in float32.
_ERF_ALPHA: Final[tuple[float, ...]] = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_BETA: Final[tuple[float, ...]] = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)
# The same approximation rewritten in x (not t = x / sqrt(2)), with s = x**2:
# erf(x / sqrt(2)) = x * sum_k NUM[k] s^(6-k) / sum_k DEN[k] s^(4-k).
_GELU_NUM: Final[tuple[float, ...]] = tuple(
    c * 0.5 ** (len(_ERF_ALPHA) - 1 - k) * _INV_SQRT2 for k, c in enumerate(_ERF_ALPHA)
)
_GELU_DEN: Final[tuple[float, ...]] = tuple(c * 0.5 ** (len(_ERF_BETA) - 1 - k) for k, c in enumerate(_ERF_BETA))
_GELU_CLIP: Final[float] = 4.0 * math.sqrt(2.0)
# Products of fewer rows than this get their rows padded to a multiple of four (see _matmul); above it the
# padding's copy costs about what it saves.
_PAD_ROWS_BELOW: Final[int] = 64
# Max elements per GELU block, so that its temporaries stay in the CPU cache.
_GELU_BLOCK: Final[int] = 96 * 1024


# At most one forward pass per core at once (each runs on one math thread, see threads.py): a page and
# the facts read off it are embedded side by side on two cores; more passes than cores would only wait.
_CORES: Final[int] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_COMPUTE_SLOTS = threading.BoundedSemaphore(max(1, _CORES))

# Cost model used to group texts into batches (see _plan_batches): a forward
# pass has a fixed cost (streaming ~40 MB of weights through the caches) worth
# about this many tokens, and attention makes a token of a length-L text cost
# (1 + L / _ATTENTION_TOKENS) times a token of a very short text.
_BATCH_OVERHEAD_TOKENS: Final[float] = 32.0
_ATTENTION_TOKENS: Final[float] = 1024.0


def _plan_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Group text indices into batches of similar token length.

    Indices are sorted by token length, then cut into consecutive batches of at
    most ``batch_size`` that minimise an estimated cost: one fixed overhead per
    forward pass plus the padded token count (a padded token costs as much as a
    real one).  Dynamic programming, O(n * batch_size).

    Example:
        >>> _plan_batches([3, 200, 4, 5], batch_size=32)
        [[0, 2, 3], [1]]
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    n = len(order)
    best = [0.0] * (n + 1)
    start = [0] * (n + 1)
    for end in range(1, n + 1):
        longest = lengths[order[end - 1]]
        per_text = longest * (1.0 + longest / _ATTENTION_TOKENS)
        best_cost, best_start = math.inf, end - 1
        for first in range(max(0, end - batch_size), end):
            cost = best[first] + (end - first) * per_text
            if cost < best_cost:
                best_cost, best_start = cost, first
        best[end] = best_cost + _BATCH_OVERHEAD_TOKENS
        start[end] = best_start
    batches: list[list[int]] = []
    end = n
    while end > 0:
        batches.append(order[start[end] : end])
        end = start[end]
    batches.reverse()
    return batches


def _matmul(x: FloatArray, w: FloatArray) -> FloatArray:
    """``x @ w``; a short ``x`` is given zero rows up to a multiple of four first (the same floats, faster).

    OpenBLAS multiplies a few rows (a question's tokens) 10-25 % faster when their
    count is a multiple of four (measured: 11 rows 9.8 ms, 12 rows 7.7 ms over the
    model's 24 products); every row's floats are the same as without the padding
    (checked in tests/unit_tests/test_embeddings.py). One row is left alone:
    OpenBLAS takes another path (a matrix-vector product) for it.
    """
    rows = x.shape[0]
    if rows % 4 == 0 or rows == 1 or rows >= _PAD_ROWS_BELOW:
        return cast(FloatArray, x @ w)
    padded = np.zeros((rows + 4 - rows % 4, x.shape[1]), dtype=x.dtype)
    padded[:rows] = x
    return (padded @ w)[:rows]


def _layer_norm(x: FloatArray, gamma: FloatArray, beta: FloatArray, eps: float) -> FloatArray:
    """LayerNorm over the last axis (biased variance, like torch) into a new array."""
    centred: FloatArray = x - x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(centred), axis=-1, keepdims=True)
    var += eps
    np.sqrt(var, out=var)
    centred /= var
    centred *= gamma
    centred += beta
    return centred


def _attention_mask_bias(lengths: npt.NDArray[np.int64], seq_len: int) -> FloatArray:
    """Additive key mask (B, 1, 1, L): 0 for real tokens, very negative for padding."""
    valid = np.arange(seq_len)[None, :] < lengths[:, None]
    bias = np.where(valid, np.float32(0.0), np.float32(_MASK_BIAS)).astype(np.float32)
    return bias[:, None, None, :]


def _forward(
    weights: _Weights,
    cfg: _BertConfig,
    ids: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
) -> FloatArray:
    """Run BERT + mean pooling + L2 normalisation on a padded (B, L) id matrix.

    Pure function of its inputs (weights are read-only), hence thread-safe.
    """
    batch, seq_len = ids.shape
    hidden, heads = cfg.hidden, cfg.heads
    head_dim = hidden // heads
    padded = bool(lengths.min() < seq_len)

    x = weights.word[ids]  # (B, L, D) fresh array
    x += weights.pos_type[:seq_len]
    x = _layer_norm(x.reshape(batch * seq_len, hidden), weights.ln_g, weights.ln_b, cfg.eps)
    bias = _attention_mask_bias(lengths, seq_len) if padded else None

    for layer in weights.layers:
        qkv = _matmul(x, layer.w_qkv)
        qkv += layer.b_qkv
        # (B, L, 3, H, dh) -> (3, B, H, L, dh)
        qkv = qkv.reshape(batch, seq_len, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
        # (B, H, L, L); the 1/sqrt(head_dim) scale is folded into the query weights
        scores: FloatArray = np.matmul(qkv[0], qkv[1].transpose(0, 1, 3, 2))
        if bias is not None:
            scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context: FloatArray = np.matmul(scores, qkv[2])  # (B, H, L, dh)
        context = context.transpose(0, 2, 1, 3).reshape(batch * seq_len, hidden)
        h = _matmul(context, layer.w_out)
        h += layer.b_out
        h += x
        x = _layer_norm(h, layer.ln1_g, layer.ln1_b, cfg.eps)

        inter = _matmul(x, layer.w_in)
        inter += layer.b_in
        _gelu_half(inter)  # 2 * GELU; the 1/2 lives in w_ffo
        h = _matmul(inter, layer.w_ffo)
        h += layer.b_ffo
        h += x
        x = _layer_norm(h, layer.ln2_g, layer.ln2_b, cfg.eps)

    tokens = x.reshape(batch, seq_len, hidden)
    if padded:
        mask = (np.arange(seq_len)[None, :] < lengths[:, None]).astype(np.float32)
        summed = np.matmul(mask[:, None, :], tokens)[:, 0, :]
    else:
        summed = tokens.sum(axis=1)
    pooled = summed / np.maximum(lengths, 1).astype(np.float32)[:, None]
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    pooled /= np.maximum(norms, np.float32(1e-12))
    return cast(FloatArray, pooled.astype(np.float32, copy=False))


def _gelu_half(x: FloatArray) -> None:
    """In-place ``2 * GELU(x) = x * (1 + erf(x / sqrt(2)))`` (exact, erf-based GELU).

    The factor 1/2 of GELU is folded into the next weight matrix (exact, a
    power of two).  ``1 + erf(x / sqrt(2))`` is evaluated as ``(P + Q) / Q`` with
    the rational erf approximation in ``_GELU_NUM`` / ``_GELU_DEN`` (variable
    ``s = x**2`` on x clipped to +-4*sqrt(2)).  Work is done in row blocks that
    stay in the CPU cache.
    """
    rows = x.shape[0]
    blocks = -(-x.size // _GELU_BLOCK)  # ceil; balanced row blocks
    step = max(1, -(-rows // max(1, blocks)))
    for start in range(0, rows, step):
        blk = x[start : start + step]
        t = np.clip(blk, -_GELU_CLIP, _GELU_CLIP)
        s = np.square(t)
        num = np.multiply(s, _GELU_NUM[0])
        num += _GELU_NUM[1]
        for coef in _GELU_NUM[2:]:
            num *= s
            num += coef
        num *= t
        den = np.multiply(s, _GELU_DEN[0])
        den += _GELU_DEN[1]
        for coef in _GELU_DEN[2:]:
            den *= s
            den += coef
        num += den
        num /= den  # 1 + erf(x / sqrt(2))
        blk *= num
