"""YAKE single-word keywords, computed exactly as the ``yake`` package (0.7.3) does for ``n=1``.

Why hand-written: ``yake.KeywordExtractor(lan="en", n=1, ...).extract_keywords`` costs ~3.3 ms of pure
Python per LoCoMo page (it builds a networkx graph, a ``SingleWord`` and a ``ComposedWord`` object per
term, calls ``np.median`` per term and reads degrees through networkx views) and holds the GIL while the
encoder thread needs it; keyword extraction runs on every write and every read. For single words the whole
algorithm reduces to a few counts per term, so this module computes them with plain dicts and lists and
keeps only what decides the floats: segtok's sentence splitter and web tokenizer (a ``yake`` dependency,
used as ``yake`` uses them), yake's stopword file, and numpy for the once-per-document mean and standard
deviation of term frequencies (pairwise summation, so the floats stay bit-identical). Measured on the
1414 LoCoMo dev page texts (user + agent, as ``extract_keywords`` gets them): median 2.5-2.9 ms per page
with yake, 0.56-0.58 ms here (4.3-5.1x; segtok's tokenizing is ~0.44 ms of it); 4.5x on LoCoMo questions
(0.59 -> 0.13 ms). It returns the same words in the same
order with bit-identical ``np.float64`` scores; ``tests/unit_tests/test_yake_words.py`` checks that against
the ``yake`` package on every LoCoMo dev turn and page, synthetic dialogues, edge cases and random texts.

Only ``n=1`` with yake's default window (1), features (all) and dedup function (``seqm``) is reproduced.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import string
import threading
from typing import Any

import numpy as np
from segtok.segmenter import split_multi
from segtok.tokenizer import split_contractions, web_tokenizer

__all__ = ["yake_single_words"]

_EXCLUDE = frozenset(string.punctuation)
_PUNCT = tuple(_EXCLUDE)  # yake strips punctuation from a term in the order of iterating its set
_CAPITAL = re.compile(r"^(\s*([A-Z]))")
_DISCARD = frozenset({"u", "d"})

_WordInfo = tuple[bool, str, str, str, str, bool]
# per language: (yake's stopword set, word -> (all punctuation, tag at sentence start, tag elsewhere,
# lower-cased, term key, stopword if the word creates its term)); the word cache is cleared when it grows big
_languages: dict[str, tuple[frozenset[str], dict[str, _WordInfo]]] = {}
_lock = threading.Lock()
_WORDS_MAX = 200_000


def _language(lan: str) -> tuple[frozenset[str], dict[str, _WordInfo]]:
    """Yake's stopword list for ``lan`` (read from the installed ``yake`` package as yake reads it), word cache."""
    cached = _languages.get(lan)
    if cached is not None:
        return cached
    spec = importlib.util.find_spec("yake")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the 'yake' package is not installed; install it with `pip install yake`")
    base = os.path.join(list(spec.submodule_search_locations)[0], "core", "StopwordsList")
    path = os.path.join(base, f"stopwords_{lan[:2].lower()}.txt")
    if not os.path.exists(path):
        path = os.path.join(base, "stopwords_noLang.txt")
    try:
        with open(path, encoding="utf-8") as f:
            words = frozenset(f.read().lower().split("\n"))
    except UnicodeDecodeError:
        with open(path, encoding="ISO-8859-1") as f:
            words = frozenset(f.read().lower().split("\n"))
    with _lock:
        return _languages.setdefault(lan, (words, {}))


def _tag(word: str, first: bool) -> str:
    """Yake's get_tag (``first``: the word is at position 0 of its sentence)."""
    bare = word.replace(",", "")
    if bare.isdigit() or bare.replace(".", "", 1).isdigit():
        return "d"
    cdigit = calpha = cexclude = 0
    for c in word:
        if c.isdigit():
            cdigit += 1
        if c.isalpha():
            calpha += 1
        if c in _EXCLUDE:
            cexclude += 1
    if (cdigit > 0 and calpha > 0) or (cdigit == 0 and calpha == 0) or cexclude > 1:
        return "u"
    if word.isupper() and len(word) > 0:
        return "a"
    if len(word) > 1 and word[0].isupper() and not first and sum(c.isupper() for c in word) == 1:
        return "n"
    return "p"


def _word_info(word: str, stopwords: frozenset[str]) -> _WordInfo:
    """What yake derives from a token alone (see ``_languages``); stopword status as yake's ``get_term``."""
    if all(c in _EXCLUDE for c in word):
        return (True, "", "", "", "", True)
    lower = word.lower()
    simple_sto = lower in stopwords
    key = lower[:-1] if lower.endswith("s") and len(lower) > 3 else lower
    bare = key
    for p in _PUNCT:
        bare = bare.replace(p, "")
    stop = simple_sto or key in stopwords or len(bare) < 3
    return (False, _tag(word, True), _tag(word, False), lower, key, stop)


def _sentences(text: str) -> list[list[str]]:
    """Yake's pre_filter + tokenize_sentences (after yake replaced newlines by spaces)."""
    text = ("\n\n" if _CAPITAL.match(text) else " ") + text.replace("\t", " ")
    return [
        [w for w in split_contractions(web_tokenizer(s)) if not (w.startswith("'") and len(w) > 1) and len(w) > 0]
        for s in list(split_multi(text))
        if len(s.strip()) > 0
    ]


def _pre_filter(cand1: str, cand2: str) -> bool:
    """The pre-filter of yake's seqm (KeywordExtractor._aggressive_pre_filter)."""
    if cand1 == cand2:
        return True
    len1, len2 = len(cand1), len(cand2)
    max_len = max(len1, len2)
    if abs(len1 - len2) > max_len * 0.6:
        return False
    if max_len > 3:
        if cand1[0] != cand2[0] or cand1[-1] != cand2[-1]:
            return False
        if min(len1, len2) >= 3 and cand1[:2].lower() != cand2[:2].lower():
            return False
    if abs(cand1.count(" ") - cand2.count(" ")) > 1:
        return False
    return True


def _similarity(s1: str, s2: str) -> float:
    """Yake's KeywordExtractor._ultra_fast_similarity (the ``seqm`` dedup function after its pre-filter)."""
    if s1 == s2:
        return 1.0
    max_len = max(len(s1), len(s2))
    if max_len == 0:
        return 0.0
    len_ratio = min(len(s1), len(s2)) / max_len
    if len_ratio < 0.3:
        return 0.0
    s1_lower, s2_lower = s1.lower(), s2.lower()
    chars_union = set(s1_lower) | set(s2_lower)
    if not chars_union:
        return 0.0
    char_overlap = len(set(s1_lower) & set(s2_lower)) / len(chars_union)
    if char_overlap < 0.2:
        return 0.0
    if max_len <= 4:
        return char_overlap * len_ratio
    words1, words2 = s1_lower.split(), s2_lower.split()
    if len(words1) > 1 or len(words2) > 1:
        word_union = set(words1) | set(words2)
        if word_union:
            word_overlap = len(set(words1) & set(words2)) / len(word_union)
            if word_overlap > 0.4:
                return word_overlap
    trigrams1 = {s1_lower[i : i + 3] for i in range(len(s1_lower) - 2)}
    trigrams2 = {s2_lower[i : i + 3] for i in range(len(s2_lower) - 2)}
    trigram_union = trigrams1 | trigrams2
    trigram_overlap = len(trigrams1 & trigrams2) / len(trigram_union) if trigram_union else 0
    return min(0.3 * len_ratio + 0.2 * char_overlap + 0.5 * trigram_overlap, 1.0)


def _seqm(cand1: str, cand2: str) -> float:
    """Yake's KeywordExtractor.seqm (its caches only memoise this pure, symmetric function)."""
    return _similarity(cand1, cand2) if _pre_filter(cand1, cand2) else 0.0


# a term's record: [tf, tf_a, tf_n, distinct sentence ids, left neighbours, left count,
#                   right neighbours, right count, stopword]
_TF, _TF_A, _TF_N, _SIDS, _LEFT, _NLEFT, _RIGHT, _NRIGHT, _STOP = range(9)


def _ranked(text: str, lan: str) -> list[tuple[float, str, str]]:
    """Yake's valid single-word candidates as ``(h, lower-cased, first spelling)``, sorted by ``h``."""
    stopwords, words = _language(lan)
    sentences = _sentences(text.replace("\n", " "))
    if len(words) > _WORDS_MAX:
        words.clear()
    terms: dict[str, list[Any]] = {}
    # candidate (lower-cased word) -> [first spelling, term key, occurrences, has a tag other than u/d]
    cands: dict[str, list[Any]] = {}
    for sid, sentence in enumerate(sentences):
        prev: list[Any] | None = None  # the previous word's term in the block; None at its start or after u/d
        for pos, word in enumerate(sentence):
            info = words.get(word)
            if info is None:
                info = _word_info(word, stopwords)
                words[word] = info
            if info[0]:  # punctuation ends the block
                prev = None
                continue
            tag = info[1] if pos == 0 else info[2]
            key = info[4]
            term = terms.get(key)
            if term is None:
                term = [0.0, 0.0, 0.0, [], set(), 0, set(), 0, info[5]]
                terms[key] = term
            term[_TF] += 1.0
            if tag == "a":
                term[_TF_A] += 1.0
            elif tag == "n":
                term[_TF_N] += 1.0
            sids = term[_SIDS]
            if not sids or sids[-1] != sid:
                sids.append(sid)
            cand = cands.get(info[3])
            if cand is None:
                cands[info[3]] = [word, key, 1.0, tag not in _DISCARD]
            else:
                cand[2] += 1.0
                if not cand[3] and tag not in _DISCARD:
                    cand[3] = True
            if tag in _DISCARD:
                prev = None
            else:
                if prev is not None:
                    prev[_RIGHT].add(key)
                    prev[_NRIGHT] += 1
                    term[_LEFT].add(id(prev))  # distinct term records are distinct terms
                    term[_NLEFT] += 1
                prev = term
    valid_tfs = [t[_TF] for t in terms.values() if not t[_STOP]]  # yake's build_single_terms_features
    if not valid_tfs:
        return []
    arr = np.array(valid_tfs)
    tf_norm = float(arr.mean() + arr.std())
    max_tf = max(t[_TF] for t in terms.values())
    n_sentences = len(sentences)

    hs: dict[str, float] = {}
    ranked: list[tuple[float, str, str]] = []
    for lower, (kw, key, ctf, ok) in cands.items():
        term = terms[key]
        if not ok or term[_STOP]:
            continue
        h = hs.get(key)
        if h is None:
            h = hs[key] = _term_score(term, max_tf, tf_norm, n_sentences)
        ranked.append((h / ((h + 1) * ctf), lower, kw))
    ranked.sort(key=_first)  # stable: ties keep the order of first occurrence, as yake's sort
    return ranked


def _term_score(term: list[Any], max_tf: float, tf_norm: float, n_sentences: int) -> float:
    """Yake's ``H`` of a single term from its features (relatedness, frequency, spread, case, position)."""
    log = math.log
    tf = term[_TF]
    wdl, wil = len(term[_LEFT]), float(term[_NLEFT])
    wdr, wir = len(term[_RIGHT]), float(term[_NRIGHT])
    pwl = 0 if wil == 0 else wdl / wil
    pwr = 0 if wir == 0 else wdr / wir
    wrel = (0.5 + (pwl * (tf / max_tf))) + (0.5 + (pwr * (tf / max_tf)))
    wfreq = tf / tf_norm
    wspread = len(term[_SIDS]) / n_sentences
    wcase = max(term[_TF_A], term[_TF_N]) / (1.0 + log(tf))
    wpos = log(log(3.0 + _median(term[_SIDS])))
    h: float = (wpos * wrel) / (wcase + (wfreq / wrel) + (wspread / wrel))
    return h


def _first(item: tuple[float, str, str]) -> float:
    return item[0]


def _median(sorted_ids: list[int]) -> float:
    """``np.median`` of ascending integers (the mean of the two middle ones for an even count)."""
    n = len(sorted_ids)
    mid = n // 2
    if n % 2:
        return float(sorted_ids[mid])
    return (sorted_ids[mid - 1] + sorted_ids[mid]) / 2


def yake_single_words(text: str, top: int, *, dedup_lim: float = 0.9, lan: str = "en") -> list[tuple[str, Any]]:
    """What ``yake.KeywordExtractor(lan=lan, n=1, top=top, dedup_lim=dedup_lim).extract_keywords(text)`` returns.

    The same words (first spelling in the text), in the same order, with bit-identical ``np.float64``
    scores (lower is more salient), for yake 0.7.3's single-word configuration with its default window,
    features and ``seqm`` dedup. Like yake, it returns ``[]`` for empty text and on any failure.

    Args:
        text: any text.
        top: how many keywords at most.
        dedup_lim: a word is dropped when its similarity to a kept one exceeds this (``>= 1``: no dedup).
        lan: stopword language (yake's list for ``lan[:2]``, else its language-free list).

    Returns:
        ``(word, score)`` pairs, best first.

    Example:
        >>> [w for w, _ in yake_single_words("I moved to Denver last spring and I love the mountains.", 3)]
        ['Denver', 'mountains', 'moved']
        >>> yake_single_words("", 5), yake_single_words("the and of", 5)
        ([], [])
    """
    if not text:
        return []
    try:
        ranked = _ranked(text, lan)
    except Exception:  # noqa: BLE001 - yake returns [] on any failure; so does this
        return []
    if dedup_lim >= 1.0:  # yake then returns the lower-cased words
        return [(lower, np.float64(h)) for h, lower, _ in ranked][:top]
    # yake keeps a word unless its seqm similarity to an already kept word exceeds dedup_lim; seqm is 0
    # unless the pre-filter passes, which for two words longer than 3 needs the same first letter: so a
    # word is compared only with kept words of its first letter and, if it is short, with short kept words
    chosen: list[tuple[float, str, str]] = []
    by_first: dict[str, list[str]] = {}
    short: list[str] = []
    for cand in ranked:
        lower = cand[1]
        if " " in lower:  # not a web_tokenizer word; compare with all, as yake does
            others = [c[1] for c in chosen]
        else:
            others = by_first.get(lower[0], [])
            if len(lower) <= 3:
                others = others + short
        if all(_seqm(lower, other) <= dedup_lim for other in others):
            chosen.append(cand)
            by_first.setdefault(lower[0], []).append(lower)
            if len(lower) <= 3:
                short.append(lower)
        if len(chosen) == top:
            break
    return [(kw, np.float64(h)) for h, _, kw in chosen]
