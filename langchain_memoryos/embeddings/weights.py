"""The BERT configuration and weights of all-MiniLM-L6-v2, loaded once per process and shared read-only."""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from langchain_memoryos.embeddings.files import INSTALL_HINT, EmbeddingsNotAvailableError

__all__: list[str] = []

FloatArray = npt.NDArray[np.float32]


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
    # The matrices are stored (outputs, inputs), the checkpoint's own layout: a product is x @ w.T
    # (see encoder._matmul, which multiplies a few rows faster in that layout).
    w_qkv: FloatArray  # (3D, D), query rows pre-scaled by 1/sqrt(head_dim)
    b_qkv: FloatArray  # (3D,)
    w_out: FloatArray  # (D, D)
    b_out: FloatArray
    ln1_g: FloatArray
    ln1_b: FloatArray
    w_in: FloatArray  # (I, D)
    b_in: FloatArray
    w_ffo: FloatArray  # (D, I), pre-scaled by 1/2 (the GELU's factor)
    b_ffo: FloatArray
    ln2_g: FloatArray
    ln2_b: FloatArray


@dataclass(frozen=True, slots=True)
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
                get(att + "self.query.weight") * scale,
                get(att + "self.key.weight"),
                get(att + "self.value.weight"),
            ],
            axis=0,
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
                w_out=_frozen(get(att + "output.dense.weight")),
                b_out=_frozen(get(att + "output.dense.bias")),
                ln1_g=_frozen(get(att + "output.LayerNorm.weight")),
                ln1_b=_frozen(get(att + "output.LayerNorm.bias")),
                w_in=_frozen(get(p + "intermediate.dense.weight")),
                b_in=_frozen(get(p + "intermediate.dense.bias")),
                w_ffo=_frozen(get(p + "output.dense.weight") * 0.5),
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


# Read-only weights, loaded on first use and kept for the life of the process: one load per model file
# (the real path behind any symlinked folder, its size and modification time), whatever the instances.
_WEIGHTS_CACHE: dict[tuple[tuple[Path, int, int], _BertConfig], _Weights] = {}
_WEIGHTS_LOCK = threading.Lock()


def _file_key(path: Path) -> tuple[Path, int, int]:
    """What identifies a model file across folders and symlinks: its real path, size and modification time."""
    real = path.resolve()
    stat = real.stat()
    return real, stat.st_size, stat.st_mtime_ns


def _shared_weights(model_dir: Path, cfg: _BertConfig) -> _Weights:
    path = model_dir / "model.safetensors"
    key = (_file_key(path), cfg)
    with _WEIGHTS_LOCK:
        weights = _WEIGHTS_CACHE.get(key)
        if weights is None:
            weights = _load_weights(path, cfg)
            _WEIGHTS_CACHE[key] = weights
        return weights
