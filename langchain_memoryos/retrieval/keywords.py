"""Keyword extraction without any model call (YAKE, pure Python, offline).

Keywords are lower-cased single words so that the Jaccard term of ``F_score``
compares like with like; speaker labels and very common chat words are dropped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from itertools import chain

from langchain_memoryos.retrieval.yake_words import yake_single_words

__all__ = ["extract_keywords", "merge_keywords"]

_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_IGNORED = frozenset(
    {
        "user",
        "assistant",
        "yeah",
        "yes",
        "okay",
        "ok",
        "thanks",
        "thank",
        "really",
        "great",
        "good",
        "nice",
        "awesome",
        "cool",
        "wow",
        "hey",
        "hi",
        "hello",
        "sure",
        "lot",
        "lots",
        "things",
        "thing",
        "something",
        "glad",
        "love",
        "like",
        "sounds",
        "amazing",
        "time",
        "know",
        "think",
        "feel",
        "going",
        "just",
        "well",
        "much",
        "also",
        "it's",
        "i'm",
        "that's",
        "don't",
        "can't",
        "i've",
        "you're",
        "what's",
        "let",
        "get",
        "got",
        "make",
        "made",
        "way",
    }
)


def _clean(word: str) -> str:
    w = word.lower().strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    return w


def extract_keywords(text: str, top: int = 8) -> list[str]:
    """Extract up to ``top`` lower-cased keywords from ``text``.

    Uses YAKE single words (statistical, language-light, no model; computed by
    :func:`~langchain_memoryos.retrieval.yake_words.yake_single_words`). Falls back to the most
    frequent content words when YAKE finds nothing (e.g. very short text).

    Args:
        text: any text.
        top: maximum number of keywords.

    Returns:
        Keywords, most salient first, without duplicates.

    Example:
        >>> "denver" in extract_keywords("I moved to Denver last spring and I love the mountains.")
        True
    """
    if top <= 0 or not text or not text.strip():
        return []
    out: list[str] = []
    seen: set[str] = set()
    # yake.KeywordExtractor(lan="en", n=1, top=top * 2, dedup_lim=0.9).extract_keywords, computed exactly
    # and faster (see yake_words); it returns [] where yake fails on odd inputs; fall back below
    pairs = yake_single_words(text[:20000], top * 2, dedup_lim=0.9, lan="en")
    for phrase, _score in pairs:
        for word in _WORD.findall(str(phrase)):
            w = _clean(word)
            if len(w) < 2 or w in _IGNORED or w in seen:
                continue
            seen.add(w)
            out.append(w)
            if len(out) >= top:
                return out
    if len(out) < top:
        counts = Counter(w for w in (_clean(x) for x in _WORD.findall(text)) if len(w) > 3 and w not in _IGNORED)
        for w, _ in counts.most_common():
            if w not in seen:
                seen.add(w)
                out.append(w)
                if len(out) >= top:
                    break
    return out


def merge_keywords(keyword_lists: Iterable[Iterable[str]], top: int) -> list[str]:
    """The ``top`` most frequent keywords across several lists (ties: first seen).

    Used for a segment's keyword set from its pages' keywords.

    Args:
        keyword_lists: keyword lists, oldest first.
        top: how many to keep.

    Returns:
        The merged keyword list.

    Example:
        >>> merge_keywords([["hiking", "denver"], ["hiking", "dog"]], 2)
        ['hiking', 'denver']
    """
    # a Counter keeps first-seen order, and most_common(top) is a stable sort by count: ties stay first seen
    counts = Counter(map(str.lower, chain.from_iterable(keyword_lists)))  # counted in C
    ranked = counts.most_common(top) if top >= 0 else counts.most_common()[:top]
    return [k for k, _ in ranked]
