"""The pure-numpy BERT forward pass: texts packed without padding, layer norm, attention, exact GELU, mean pooling."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import Final, cast

import numpy as np

from langchain_memoryos.embeddings.weights import FloatArray, _BertConfig, _Weights

__all__: list[str] = []

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
# Products of fewer rows than this are computed as w @ x.T, their rows padded to a multiple of four (see _matmul).
_TRANSPOSED_BELOW: Final[int] = 128
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
    forward pass plus the batch's texts counted at its longest length.  The
    passes pack their texts without padding (:func:`_forward`), so the plan
    changes no row, only the speed; this model, made for padded batches, still
    splits a bulk write's pages into passes as well as plain chunks of
    ``batch_size`` sorted texts or better (214 LoCoMo pages on two threads:
    1.49-1.54 s against 1.59-1.61 s).  Dynamic programming, O(n * batch_size).

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
    """``x @ w.T`` for a weight matrix ``w`` stored (outputs, inputs); fewer than 128 rows go the faster way.

    OpenBLAS multiplies a few rows (a question's, a fact's or a page's tokens) against a
    large matrix 15-40 % faster as ``w @ x.T`` (measured on this machine over the model's
    24 products: 4 rows 4.6 → 3.0 ms, 40 rows 9.3 → 8.1 ms, 80 rows 13.4 → 12.3 ms; from
    about 160 rows on, ``x @ w.T`` is as fast or faster), and a little faster again when the
    row count is a multiple of four, so such ``x`` is given zero rows up to one. Every row's
    floats are those of ``x @ w.T`` (checked in tests/unit_tests/test_embeddings.py): a text's
    vector does not depend on the path or on the rows beside it.
    """
    rows = x.shape[0]
    if rows >= _TRANSPOSED_BELOW:
        return cast(FloatArray, x @ w.T)
    if rows % 4:
        padded = np.zeros((rows + 4 - rows % 4, x.shape[1]), dtype=x.dtype)
        padded[:rows] = x
        x = padded
    return np.ascontiguousarray((w @ x.T).T[:rows])


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


def _length_groups(lengths: Sequence[int]) -> list[tuple[int, int, int]]:
    """``(first row, texts, length)`` of each run of equal lengths, the texts' rows packed one after the other.

    Example:
        >>> _length_groups([3, 3, 5])
        [(0, 2, 3), (6, 1, 5)]
    """
    groups: list[tuple[int, int, int]] = []
    row = 0
    for length in lengths:
        if groups and groups[-1][2] == length:
            first, count, _ = groups[-1]
            groups[-1] = (first, count + 1, length)
        else:
            groups.append((row, 1, length))
        row += length
    return groups


def _forward(weights: _Weights, cfg: _BertConfig, ids: Sequence[Sequence[int]]) -> FloatArray:
    """Run BERT + mean pooling + L2 normalisation on texts' token ids; one row per text, in order.

    The texts' tokens are packed, without padding, into one matrix of rows:
    the products, layer norms and GELU work row by row, and a row depends
    on the rows beside it only through how the BLAS rounds a product of that
    shape (see :func:`_matmul`); attention and pooling run per group of texts
    of one length, as they would for each text alone. So a text's vector is
    the same alone or in any batch up to that rounding: to the bit where the
    BLAS rounds a row whatever the rows beside it,
    within a few float32 ulps where it does not (OpenBLAS 0.3.31 on an AMD
    EPYC): ``add_turns`` stores the vectors ``add_turn`` stores, to that rounding.

    Pure function of its inputs (weights are read-only), hence thread-safe.
    """
    n = len(ids)
    hidden, heads = cfg.hidden, cfg.heads
    head_dim = hidden // heads
    order = sorted(range(n), key=lambda i: len(ids[i]))
    groups = _length_groups([len(ids[i]) for i in order])
    flat = np.fromiter((t for i in order for t in ids[i]), dtype=np.int64)
    positions = np.concatenate([np.tile(np.arange(length), count) for _, count, length in groups])

    x = weights.word[flat]  # (rows, D) fresh array
    x += weights.pos_type[positions]
    x = _layer_norm(x, weights.ln_g, weights.ln_b, cfg.eps)

    for layer in weights.layers:
        qkv = _matmul(x, layer.w_qkv)
        qkv += layer.b_qkv
        context = np.empty_like(x)
        for first, count, length in groups:
            rows = slice(first, first + count * length)
            # (B, L, 3, H, dh) -> (3, B, H, L, dh)
            g = qkv[rows].reshape(count, length, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            # (B, H, L, L); the 1/sqrt(head_dim) scale is folded into the query weights
            scores: FloatArray = np.matmul(g[0], g[1].transpose(0, 1, 3, 2))
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context[rows] = np.matmul(scores, g[2]).transpose(0, 2, 1, 3).reshape(count * length, hidden)
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

    out = np.empty((n, hidden), dtype=np.float32)
    done = 0
    for first, count, length in groups:
        summed = x[first : first + count * length].reshape(count, length, hidden).sum(axis=1)
        pooled = summed / np.float32(max(length, 1))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        pooled /= np.maximum(norms, np.float32(1e-12))
        out[order[done : done + count]] = pooled
        done += count
    return out


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
