"""Lexical page ranking: a stemmed tokenizer and an incremental BM25 index.

Dense MiniLM vectors miss exact words — names, places, "pottery" — that a
question shares with the turn holding its answer (on LoCoMo, dense top-10 pages
find 10–20 points less evidence than BM25). The read path therefore fuses the
dense ranking with BM25 (:func:`rrf`).

Pages arrive one at a time, so the index is incremental: adding or removing a
page touches only its own terms. Scores are those of the BM25 "lucene"
variant used by the ``bm25s`` library (the benchmark's baselines use that
library on the same tokens, and a test checks both give the same scores).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_memoryos.errors import InvalidInputError

if TYPE_CHECKING:
    from langchain_memoryos.schema import DialoguePage

__all__ = ["STOPWORDS", "Bags", "LexicalIndex", "page_tokens", "ranked", "rrf", "rrf_scores", "tokenize"]

_IntArray = np.ndarray[Any, np.dtype[np.int64]]
_FloatArray = np.ndarray[Any, np.dtype[np.float64]]
_TOKEN = re.compile(r"(?u)\b\w\w+\b")


@dataclass
class Bags:
    """Documents as bags of words in compressed rows: ``terms[ids[ptr[d]:ptr[d+1]]]`` with counts ``tfs[...]``.

    The compact form in which a :class:`LexicalIndex` is saved and restored
    (a user's index snapshot), without one Python object per term.

    Attributes:
        keys: the documents' keys, in row order.
        terms: the vocabulary.
        ptr: row offsets (``len(keys) + 1``).
        ids: term ids of each row (a term that repeats in a row: its counts add up).
        tfs: their counts.

    Example:
        >>> ix = LexicalIndex(); ix.add("a", ["x", "y", "x"])
        >>> bags = ix.bags(); bags.keys, [bags.terms[i] for i in bags.ids], bags.tfs.tolist()
        (['a'], ['x', 'y'], [2, 1])
    """

    keys: list[str]
    terms: list[str]
    ptr: _IntArray
    ids: _IntArray
    tfs: _IntArray

    def counts(self, row: int) -> Counter[str]:
        """The bag of one row (the counts of a term that repeats in the row add up).

        Example:
            >>> ix = LexicalIndex(); ix.add("a", ["x", "x"]); ix.bags().counts(0)
            Counter({'x': 2})
        """
        a, b = int(self.ptr[row]), int(self.ptr[row + 1])
        out: Counter[str] = Counter()
        for term, tf in zip(self.ids[a:b].tolist(), self.tfs[a:b].tolist(), strict=True):
            out[self.terms[term]] += tf
        return out

    def joined(self, keys: Sequence[str], rows: _IntArray) -> Bags:
        """New bags, one per key: the rows of ``rows`` put end to end (a chain window from its pages).

        A term in two of the joined rows appears twice in the new row; its
        counts add up wherever the bags are read (:meth:`counts`, :meth:`LexicalIndex.restore`),
        so no sort is needed to merge them.

        Args:
            keys: the new documents' keys.
            rows: a ``(len(keys), members)`` array of row numbers of these bags.

        Example:
            >>> ix = LexicalIndex(); ix.add("a", ["x"]); ix.add("b", ["x", "y"])
            >>> w = ix.bags().joined(["w"], np.array([[0, 1]])); w.counts(0) == Counter({"x": 2, "y": 1})
            True
        """
        src = np.asarray(rows, dtype=np.int64).reshape(-1)
        counts = np.diff(self.ptr)[src]
        ends = np.cumsum(counts)
        total = int(ends[-1]) if len(ends) else 0
        # the positions of every member's entries, gathered in one pass
        offsets = np.repeat(self.ptr[src] - (ends - counts), counts) + np.arange(total)
        per_row = ends.reshape(len(keys), -1)[:, -1] if len(keys) else ends
        ptr = np.concatenate(([0], per_row)).astype(np.int64)
        return Bags(list(keys), self.terms, ptr, self.ids[offsets], self.tfs[offsets])


#: English function words left out of lexical matching.
STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can cannot could did do does doing don't down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is isn't it it's its itself
    just let's me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves also yes yeah oh hey hi ok okay really so im ive id youre thats""".split()
)


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: Snowball stemmers in C

    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens of ``text`` without stopwords.

    Words of two or more letters or digits; English Snowball stemming, so
    "painting", "paints" and "painted" meet.

    Example:
        >>> tokenize("She was painting sunsets in May 2023!")
        ['paint', 'sunset', 'may', '2023']
    """
    words = [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]
    return list(_stemmer().stemWords(words)) if words else []


def page_tokens(page: DialoguePage) -> list[str]:
    """The tokens a page is indexed under: its embedding text (speaker names included) and its month and year.

    Example:
        >>> import datetime as dt
        >>> from langchain_memoryos.schema import DialoguePage
        >>> page_tokens(DialoguePage(id="p", user_input="Pottery!", agent_response="Fun.",
        ...                          timestamp=dt.datetime(2023, 5, 8, tzinfo=dt.UTC)))
        ['potteri', 'fun', 'may', '2023']
    """
    return tokenize(f"{page.embedding_text}\n{page.timestamp:%B %Y}")


class LexicalIndex:
    """An incremental BM25 index over keyed documents.

    Args:
        k1: term-frequency saturation (1.5, as ``bm25s``).
        b: length normalisation (0.75).

    Example:
        >>> ix = LexicalIndex()
        >>> ix.add("p1", tokenize("I started pottery classes"))
        >>> ix.add("p2", tokenize("We went camping in the mountains"))
        >>> [key for key, _ in ix.search(tokenize("When did she start pottery?"), 5)]
        ['p1']
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._slot: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._lengths: list[int] = []
        self._terms: list[Counter[str] | None] = []
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._arrays: dict[str, tuple[_IntArray, _FloatArray]] = {}
        self._lengths_array: _FloatArray = np.zeros(0, dtype=np.float64)
        self._alive: np.ndarray[Any, np.dtype[np.bool_]] = np.zeros(0, dtype=bool)
        self._df: Counter[str] = Counter()
        self._total_length = 0
        self._dead = 0
        # documents restored in bulk (:meth:`restore`): their bags, read per term on its first search
        self._base: Bags | None = None
        self._base_vocab: dict[str, int] = {}
        self._base_postings: dict[int, tuple[_IntArray, _FloatArray]] = {}

    @classmethod
    def restore(cls, bags: Bags, k1: float = 1.5, b: float = 0.75) -> LexicalIndex:
        """An index of the documents in ``bags``, built in bulk (no Python object per posting).

        Nothing is sorted or inverted here: a term's postings are read from the
        bags on its first search (one pass over the term ids, about 0.1 ms for
        a 5,000-page user), so a new process's first query costs what its
        words need. Searches, additions and removals then behave as on an
        index built document by document (a test compares them).

        Example:
            >>> ix = LexicalIndex(); ix.add("p1", tokenize("pottery class")); ix.add("p2", tokenize("camping"))
            >>> twin = LexicalIndex.restore(ix.bags())
            >>> twin.search(tokenize("pottery"), 3) == ix.search(tokenize("pottery"), 3)
            True
        """
        ix = cls(k1, b)
        n = len(bags.keys)
        ix._base = bags
        ix._slot = dict(zip(bags.keys, range(n), strict=True))
        ix._keys = list(bags.keys)
        running = np.concatenate(([0], np.cumsum(bags.tfs, dtype=np.int64)))
        lengths = running[bags.ptr[1:]] - running[bags.ptr[:-1]]
        ix._lengths = lengths.tolist()
        ix._terms = [None] * n  # held by the bags
        ix._total_length = int(lengths.sum())
        size = max(64, 1 << max(n - 1, 0).bit_length())
        ix._alive = np.zeros(size, dtype=bool)
        ix._alive[:n] = True
        ix._lengths_array = np.zeros(size, dtype=np.float64)
        ix._lengths_array[:n] = lengths
        ix._base_vocab = dict(zip(bags.terms, range(len(bags.terms)), strict=True))
        return ix

    def _base_posting(self, tid: int) -> tuple[_IntArray, _FloatArray]:
        """The restored documents holding term ``tid`` (removed ones too) and its counts there, once per term."""
        cached = self._base_postings.get(tid)
        if cached is None:
            assert self._base is not None
            at = np.flatnonzero(self._base.ids == tid)
            slots = np.searchsorted(self._base.ptr, at, side="right") - 1
            tfs = self._base.tfs[at].astype(np.float64)
            if slots.size > 1 and not bool(np.all(slots[1:] != slots[:-1])):  # a row holds the term twice: add up
                first = np.ones(slots.size, dtype=bool)
                first[1:] = slots[1:] != slots[:-1]
                starts = np.flatnonzero(first)
                slots, tfs = slots[starts], np.add.reduceat(tfs, starts)
            cached = self._base_postings[tid] = (slots.astype(np.int64), tfs)
        return cached

    def bags(self) -> Bags:
        """The live documents as :class:`Bags` (what :meth:`restore` takes), in insertion order.

        Example:
            >>> ix = LexicalIndex(); ix.add("a", ["x"]); ix.add("b", ["y"]); ix.remove(["a"]); ix.bags().keys
            ['b']
        """
        vocab: dict[str, int] = {}
        keys: list[str] = []
        ptr = [0]
        ids: list[int] = []
        tfs: list[int] = []
        for slot, key in enumerate(self._keys):
            if key is None:
                continue
            counts = self._counts(slot)
            keys.append(key)
            for term, tf in counts.items():
                ids.append(vocab.setdefault(term, len(vocab)))
                tfs.append(tf)
            ptr.append(len(ids))
        return Bags(
            keys,
            list(vocab),
            np.asarray(ptr, dtype=np.int64),
            np.asarray(ids, dtype=np.int64),
            np.asarray(tfs, dtype=np.int64),
        )

    def _counts(self, slot: int) -> Counter[str]:
        """The bag of words of the document in ``slot``."""
        counts = self._terms[slot]
        if counts is None:
            assert self._base is not None
            return self._base.counts(slot)
        return counts

    def _doc_freq(self, term: str) -> int:
        tid = self._base_vocab.get(term)
        base = int(np.count_nonzero(self._alive[self._base_posting(tid)[0]])) if tid is not None else 0
        return self._df.get(term, 0) + base

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: object) -> bool:
        return key in self._slot

    def add(self, key: str, tokens: Sequence[str]) -> None:
        """Index a document (replacing the one with the same key).

        Example:
            >>> ix = LexicalIndex(); ix.add("a", ["x"]); ix.add("a", ["y"]); len(ix)
            1
        """
        if key in self._slot:
            self.remove([key])
        slot = len(self._keys)
        counts = Counter(tokens)
        self._slot[key] = slot
        self._keys.append(key)
        self._lengths.append(len(tokens))
        self._terms.append(counts)
        self._total_length += len(tokens)
        for term, tf in counts.items():
            self._postings.setdefault(term, []).append((slot, tf))
            self._arrays.pop(term, None)
            self._df[term] += 1
        if slot >= len(self._alive):  # grow by doubling
            size = max(64, 2 * len(self._alive))
            self._alive = np.concatenate([self._alive, np.zeros(size - len(self._alive), dtype=bool)])
            self._lengths_array = np.concatenate(
                [self._lengths_array, np.zeros(size - len(self._lengths_array), dtype=np.float64)]
            )
        self._alive[slot] = True
        self._lengths_array[slot] = len(tokens)

    def remove(self, keys: Iterable[str]) -> None:
        """Drop documents (unknown keys are ignored).

        Example:
            >>> ix = LexicalIndex(); ix.add("a", ["x"]); ix.remove(["a", "zz"]); len(ix)
            0
        """
        for key in keys:
            slot = self._slot.pop(key, None)
            if slot is None:
                continue
            if self._terms[slot] is not None:  # a restored one leaves its postings, as dead (``_alive``)
                for term in self._terms[slot]:  # type: ignore[union-attr]
                    self._df[term] -= 1
                    if self._df[term] <= 0:
                        del self._df[term]
            self._total_length -= self._lengths[slot]
            self._keys[slot] = None
            self._terms[slot] = Counter()
            self._lengths[slot] = 0
            self._alive[slot] = False
            self._lengths_array[slot] = 0.0
            self._dead += 1
        if self._dead > 64 and self._dead > len(self._slot):
            self._compact()

    def _compact(self) -> None:
        live = [(key, self._counts(slot), self._lengths[slot]) for key, slot in self._slot.items()]
        self.__init__(self.k1, self.b)  # type: ignore[misc]
        for key, counts, _ in live:
            self.add(key, list(counts.elements()))

    def search(self, query: Sequence[str], k: int, *, within: Iterable[str] | None = None) -> list[tuple[str, float]]:
        """The ``k`` best documents for the query tokens, best first (score > 0; ties by key: :func:`ranked`).

        Args:
            query: query tokens (see :func:`tokenize`); repeated tokens count once.
            k: how many to return.
            within: only these keys (``None``: all).

        Example:
            >>> ix = LexicalIndex(); ix.add("a", ["cat"]); ix.add("b", ["cat", "dog"])
            >>> [key for key, _ in ix.search(["dog"], 5)]
            ['b']
        """
        n = len(self._slot)
        if n == 0 or k <= 0:
            return []
        size = len(self._keys)
        scores = np.zeros(size, dtype=np.float64)
        lengths = self._lengths_array[:size]
        avg = self._total_length / n if self._total_length else 1.0
        for term in dict.fromkeys(query):
            df = self._doc_freq(term)
            if df == 0:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            idx, tfs = self._posting_arrays(term)
            norm = self.k1 * (1.0 - self.b + self.b * lengths[idx] / avg)
            scores[idx] += idf * tfs / (norm + tfs)
        if within is not None:
            mask = np.zeros(size, dtype=bool)
            mask[[self._slot[key] for key in within if key in self._slot]] = True
        else:
            mask = self._alive[:size]
        scores[~mask] = 0.0  # removed documents keep their postings until compaction
        return ranked(self._keys, scores, k)

    def _posting_arrays(self, term: str) -> tuple[_IntArray, _FloatArray]:
        """A term's postings as (slots, term frequencies) arrays, cached until the term gets a new document."""
        cached = self._arrays.get(term)
        if cached is None:
            pairs = np.asarray(self._postings.get(term, []), dtype=np.int64).reshape(-1, 2)
            cached = (pairs[:, 0], pairs[:, 1].astype(np.float64))
            tid = self._base_vocab.get(term)
            if tid is not None:
                slots, tfs = self._base_posting(tid)
                cached = (np.concatenate((slots, cached[0])), np.concatenate((tfs, cached[1])))
            self._arrays[term] = cached
        return cached


def ranked(keys: Sequence[str | None], scores: _FloatArray, k: int) -> list[tuple[str, float]]:
    """The ``k`` best positive ``scores`` as ``(key, score)``, best first; equal scores by key.

    Ties are common in BM25 (pages of one template, one length), and an order
    taken from the slots would depend on the order the documents were added:
    a user loaded from its snapshot, rebuilt from its records or built turn by
    turn would rank its ties (and choose which of them make the ``k``) each
    its own way. By key, the ranking depends only on the documents.

    Example:
        >>> ranked(["b", "a", "c", None], np.array([1.0, 1.0, 2.0, 0.0]), 2)
        [('c', 2.0), ('a', 1.0)]
    """
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0 or k <= 0:
        return []
    values = scores[positive]
    if k < positive.size:  # the k-th best score; every document scoring as much competes for the last places
        kth = np.partition(values, positive.size - k)[positive.size - k]
        keep = values >= kth
        positive, values = positive[keep], values[keep]
    order = sorted(zip((-values).tolist(), [str(keys[i]) for i in positive.tolist()], strict=True))
    return [(key, -negative) for negative, key in order[:k]]


def rrf_scores(
    rankings: Sequence[Sequence[str]], *, k: float = 20.0, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal-rank fusion scores: ``sum_i w_i / (k + rank_i)`` per key (ranks from 1).

    Args:
        rankings: ranked key lists, best first.
        k: the rank offset (smaller trusts the top ranks more).
        weights: one weight per ranking (default 1 each).

    Returns:
        Every key of any ranking with its fused score, in first-seen order.

    Example:
        >>> {key: round(s, 3) for key, s in rrf_scores([["a", "b"], ["b"]], k=10).items()}
        {'a': 0.091, 'b': 0.174}
    """
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise InvalidInputError(f"rrf: {len(rankings)} rankings but {len(weights)} weights")
    score: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, key in enumerate(ranking):
            score[key] = score.get(key, 0.0) + weight / (k + rank + 1)
    return score


def rrf(rankings: Sequence[Sequence[str]], *, k: float = 20.0, weights: Sequence[float] | None = None) -> list[str]:
    """Reciprocal-rank fusion: keys ordered by ``sum_i w_i / (k + rank_i)`` (see :func:`rrf_scores`).

    Returns:
        Every key of any ranking, best fused score first (ties keep first-seen order).

    Example:
        >>> rrf([["a", "b", "c"], ["c", "a"]])
        ['a', 'c', 'b']
    """
    score = rrf_scores(rankings, k=k, weights=weights)
    return sorted(score, key=lambda key: -score[key])
