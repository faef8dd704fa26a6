"""Embeddings for the rest of the package: the shared default model and L2-normalised float32 rows."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_memoryos.embeddings.files import _locate_model_dir
from langchain_memoryos.embeddings.minilm import MiniLMEmbeddings
from langchain_memoryos.embeddings.weights import FloatArray
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError

__all__ = ["OFFLINE_MODELS", "aencode_texts", "encode_texts", "resolve_embeddings"]

_SHARED: dict[Path, MiniLMEmbeddings] = {}
_SHARED_LOCK = threading.Lock()


#: The names ``embeddings=`` accepts for the offline encoder (compared without case).
OFFLINE_MODELS: tuple[str, ...] = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


def resolve_embeddings(embeddings: Embeddings | str | None = None) -> Embeddings:
    """Return ``embeddings``, or the process-wide shared MiniLM model for ``None`` or its name.

    The shared instance is created once per model folder (so changing
    ``MEMORYOS_MINILM_DIR`` picks a different folder).  The model files are
    checked immediately, so a missing install fails here rather than at first use;
    the weights are loaded on the first encode, once per process.

    Args:
        embeddings: Any LangChain ``Embeddings`` object; ``None`` or a name in
            :data:`OFFLINE_MODELS` (``"all-MiniLM-L6-v2"``) for the offline encoder.

    Returns:
        The given object, or the shared :class:`MiniLMEmbeddings`.

    Raises:
        EmbeddingsNotAvailableError: If the offline encoder was asked for and
            its weights are not installed.
        ValueError: A name the offline encoder does not know.
        TypeError: Neither an ``Embeddings`` object nor a name.

    Example:
        >>> emb = resolve_embeddings()
        >>> emb is resolve_embeddings(None) is resolve_embeddings("all-MiniLM-L6-v2")
        True
        >>> resolve_embeddings("text-embedding-3-small")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: embeddings='text-embedding-3-small' is not a model the offline \
encoder knows ...
    """
    if isinstance(embeddings, str):
        if embeddings.strip().casefold() not in {name.casefold() for name in OFFLINE_MODELS}:
            raise InvalidInputError(
                f"embeddings={embeddings!r} is not a model the offline encoder knows ({', '.join(OFFLINE_MODELS)}); "
                "for another model pass a LangChain Embeddings object, e.g. "
                "OpenAIEmbeddings(model='text-embedding-3-small')."
            )
        embeddings = None
    if embeddings is not None:
        if not (
            callable(getattr(embeddings, "embed_documents", None))
            and callable(getattr(embeddings, "embed_query", None))
        ):
            raise InvalidTypeError(
                "embeddings must be a LangChain Embeddings object (with embed_documents and embed_query) or a "
                f"model name the offline encoder knows ({', '.join(OFFLINE_MODELS)}), got {type(embeddings).__name__}."
            )
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
        raise InvalidInputError(f"embeddings returned an array of shape {arr.shape}, expected ({n}, d)")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    np.divide(arr, norms, out=arr, where=norms > 0)
    return arr


def _dimension_hint(embeddings: Embeddings) -> int:
    dim = getattr(embeddings, "dimension", None)
    return dim if isinstance(dim, int) else 0


def encode_texts(embeddings: Embeddings, texts: Sequence[str], *, threads: int = 1) -> FloatArray:
    """Embed ``texts`` with any LangChain embeddings into L2-normalised float32 rows.

    Uses the fast :meth:`MiniLMEmbeddings.encode` path when possible, otherwise
    ``embed_documents``.  Rows of foreign embeddings are re-normalised (a zero
    vector stays zero).

    Args:
        embeddings: A :class:`MiniLMEmbeddings` or any ``Embeddings``.
        texts: The texts to embed.
        threads: forward passes at once for MiniLM (:meth:`MiniLMEmbeddings.encode`).

    Returns:
        Array of shape ``(len(texts), d)``, dtype float32.  For an empty input
        ``d`` is the object's ``dimension`` attribute if it has one, else 0.

    Example:
        >>> encode_texts(resolve_embeddings(), ["hello", "world"]).shape
        (2, 384)
    """
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.encode(texts, threads=threads)
    batch = list(texts)
    if not batch:
        return np.zeros((0, _dimension_hint(embeddings)), dtype=np.float32)
    return _normalise_rows(embeddings.embed_documents(batch), len(batch), 0)


async def aencode_texts(embeddings: Embeddings, texts: Sequence[str], *, threads: int = 1) -> FloatArray:
    """Async :func:`encode_texts`.

    MiniLM runs in a worker thread (``asyncio.to_thread``); other embeddings
    use their ``aembed_documents``.

    Args:
        embeddings: A :class:`MiniLMEmbeddings` or any ``Embeddings``.
        texts: The texts to embed.
        threads: forward passes at once for MiniLM.

    Returns:
        Array of shape ``(len(texts), d)``, dtype float32, L2-normalised rows.

    Example:
        >>> import asyncio
        >>> asyncio.run(aencode_texts(resolve_embeddings(), ["hi"])).shape
        (1, 384)
    """
    if isinstance(embeddings, MiniLMEmbeddings):
        return await asyncio.to_thread(embeddings.encode, list(texts), threads=threads)
    batch = list(texts)
    if not batch:
        return np.zeros((0, _dimension_hint(embeddings)), dtype=np.float32)
    result = await embeddings.aembed_documents(batch)
    return _normalise_rows(result, len(batch), 0)
