"""``yake_single_words`` returns exactly what the ``yake`` package returns for ``n=1`` (yake is the oracle).

Identity means: the same words, in the same order, with bit-identical ``np.float64`` scores. The corpus
checks compare whole rankings (``top`` larger than any text's vocabulary): yake's dedup is greedy in score
order, so a smaller ``top`` gives a prefix of that ranking, and the small-``top`` cases check the cut.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import string
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yake

from langchain_memoryos.evaluation.locomo import load_locomo, plain_pages, plain_turn
from langchain_memoryos.retrieval import keywords
from langchain_memoryos.retrieval.keywords import extract_keywords
from langchain_memoryos.retrieval.yake_words import yake_single_words
from langchain_memoryos.schema.pages import DialoguePage

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "unit_tests" / "data" / "locomo_fixture.json"
#: the five LoCoMo dev conversations (outside the repository, by default ../shared/data/locomo_dev.json as in the
#: Makefile; the checks on it skip without it)
LOCOMO_DEV = Path(os.environ.get("MEMORYOS_LOCOMO_DEV", ROOT.parent / "shared" / "data" / "locomo_dev.json"))
ALL = 100_000  # a top that keeps every candidate: the whole ranking is compared


@cache
def _oracle(lan: str, top: int, dedup_lim: float) -> Any:
    return yake.KeywordExtractor(lan=lan, n=1, top=top, dedup_lim=dedup_lim)


def assert_same(text: str, top: int = ALL, *, dedup_lim: float = 0.9, lan: str = "en") -> list[tuple[str, Any]]:
    expected = _oracle(lan, top, dedup_lim).extract_keywords(text)
    got = yake_single_words(text, top, dedup_lim=dedup_lim, lan=lan)
    assert [w for w, _ in got] == [w for w, _ in expected], text[:300]
    assert [float(s).hex() for _, s in got] == [float(s).hex() for _, s in expected], text[:300]
    assert [type(s) for _, s in got] == [type(s) for _, s in expected]
    return got


def _locomo_texts(path: Path) -> Iterator[str]:
    """Every turn text, every page as extract_keywords gets it (user + agent) and as it is embedded."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    for sample in raw if isinstance(raw, list) else [raw]:
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                yield from (str(t["text"]) for t in turns)
    for sample in load_locomo(path):
        for page in plain_pages(sample):
            user, agent = plain_turn(page)
            yield f"{user}\n{agent}"
            yield DialoguePage(id="p", user_input=user, agent_response=agent).embedding_text


def test_locomo_fixture_texts_are_identical() -> None:
    texts = list(_locomo_texts(FIXTURE))
    assert len(texts) > 20
    for text in texts:
        assert_same(text)


@pytest.mark.skipif(not LOCOMO_DEV.exists(), reason=f"{LOCOMO_DEV} not present (set MEMORYOS_LOCOMO_DEV)")
def test_every_locomo_dev_text_is_identical() -> None:
    texts = list(_locomo_texts(LOCOMO_DEV))
    assert len(texts) > 5000
    nonempty = 0
    for text in texts:
        nonempty += bool(assert_same(text))
    assert nonempty > 5000  # the comparison is on real rankings, not on empty results


def _bench_engine() -> Any:
    name = "_memoryos_bench_engine"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "bench_engine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_synthetic_dialogues_are_identical() -> None:
    bench = _bench_engine()
    for seed in (0, 1, 7):
        stream = bench.dialogue(seed)
        for _ in range(60):
            turn = next(stream)
            assert_same(turn.user_input)
            assert_same(turn.agent_response)
            assert_same(f"{turn.user_input}\n{turn.agent_response}")
    for query in bench.queries(3, 40, range(len(bench.TOPICS))):
        assert_same(query)


EDGE_CASES = [
    "",
    " ",
    "\n\n\t  \n",
    ".",
    "?!... ;;; --",
    "the and of to in is it",
    "The. And. Of!",
    "I me my myself we our ours",
    "42",
    "1,234.56 and 3.14 and 2024 and 10-12 and 5th and 3x4",
    "Room 101 has 3 windows, 2 doors and 1,000 books.",
    "NASA and the FBI met the CIA. NASA WON. USA USA USA.",
    "THIS TEXT IS ALL CAPS AND SHOUTS ABOUT CATS AND DOGS.",
    "I use HTML, CSS and JSON; my GPU is an RTX 4090.",
    "state-of-the-art well-known mother-in-law x-ray e-mail co-op",
    "don't can't won't it's I'm we're they'll Caroline's dog's dogs' rock'n'roll",
    "Café naïve résumé Zürich São Paulo Ελληνικά русский 日本語のテキスト 😀 emoji 🎉 party",
    "Visit https://example.com/path?q=1&x=2 or mail me at ana.silva@example.org today.",
    "www.example.com is down; see http://foo.bar/baz.html#frag for details.",
    "dog dog dog dog dog dog dog dog",
    "Dog dog DOG dOg dogs Dogs DOGS",
    "hiking",
    "Hiking",
    "Denver",
    "a",
    "I moved to Denver last spring and I love the mountains.",
    "this thi this thi. thi this",
    "thi this thi this. this thi",
    "glasses glasse glass glas. bus buses bu",
    "Mr. Smith went to Washington. Dr. Jones stayed in St. Louis. Prof. X. Y. Zed came too.",
    "Line one\nline two\nLine three\n\nParagraph two\twith\ttabs",
    "first sentence without end\nSecond Sentence Starts Capital\nthird lower",
    "  leading spaces. Trailing spaces.   ",
    "(parenthesis) [brackets] {braces} <angles> \"quotes\" 'single' `back`",
    "co-operation cooperation co--operation co---operation",
    "test tests testing tested tester testers",
    "abc abd abe abf abg abh",
    "painting paintings painter painters painted",
    "sunset sunrise sunshine sunny sun suns",
    "I I I I you you you he she it we they",
    "Mel Mel Mel Caroline Caroline Melanie Carol",
    "e.g. i.e. etc. vs. a.m. p.m. U.S.A. U.K.",
    "...wait... what?! Really?!? No way!!! OK.",
    "#hashtag @mention $100 50% 3/4 a+b a=b a_b a|b a~b",
    "x" * 50 + " " + "y" * 3 + " zz",
    "¹²³ ½ ① ٣ 五",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_are_identical(text: str) -> None:
    assert_same(text)
    for top in (1, 3, 16):
        assert_same(text, top)


def test_very_long_text_is_identical() -> None:
    rng = random.Random(5)
    words = [w for t in EDGE_CASES for w in t.split()] + ["memory", "Denver", "hiking", "painting", "Caroline"]
    text = ". ".join(" ".join(rng.choice(words) for _ in range(rng.randint(3, 20))) for _ in range(900))
    assert len(text) > 20_000
    assert_same(text[:20_000], 16)
    assert_same(text, ALL)


_WORDS = (
    "memory hiking Denver painting sunset Caroline Melanie adoption support group LGBTQ counseling camping "
    "pottery book books reading guitar violin Beethoven concert NASA API JSON dog dogs cat kids child children "
    "mountain mountains beach trip trips this thi was wa is the a an and of to in I you we they my your it's "
    "don't I'm Caroline's well-known self-care 2023 7 10:30 3.5 1,000 5k x86 covid-19 café naïve e-mail "
    "ocean oceans paint painter painted test tests tested running runs run ran"
).split()
_PUNCT = [" "] * 4 + [", ", ". ", "! ", "? ", "; ", ": ", " - ", "\n", "\n\n", " (", ") ", ' "', '" ', "...", "\t"]


def _random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 80)):
        word = rng.choice(_WORDS)
        roll = rng.random()
        if roll < 0.15:
            word = word.capitalize()
        elif roll < 0.2:
            word = word.upper()
        elif roll < 0.22:
            word = "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(1, 9)))
        parts.append(word)
        parts.append(rng.choice(_PUNCT))
    return "".join(parts)


def test_random_texts_are_identical() -> None:
    rng = random.Random(19)
    for i in range(400):
        text = _random_text(rng)
        assert_same(text, ALL if i % 2 else rng.choice([1, 2, 5, 16, 40]))


def test_other_settings_are_identical() -> None:
    rng = random.Random(23)
    texts = [_random_text(rng) for _ in range(30)] + EDGE_CASES[20:30]
    for text in texts:
        assert_same(text, 16, dedup_lim=1.0)  # no dedup: yake returns the lower-cased words
        assert_same(text, ALL, dedup_lim=0.5)
        assert_same(text, 16, lan="pt")
        assert_same(text, 16, lan="zz")  # no list for the language: yake's language-free list


def test_scores_are_numpy_floats_best_first() -> None:
    got = yake_single_words("I moved to Denver last spring. Denver has mountains and Denver has sun.", 5)
    assert got[0][0] == "Denver"
    assert all(type(score) is np.float64 for _, score in got)
    assert [s for _, s in got] == sorted(s for _, s in got)


def test_extract_keywords_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """extract_keywords gives the same keywords as with the yake package doing the extraction."""
    texts = list(_locomo_texts(FIXTURE)) + EDGE_CASES + [_random_text(random.Random(i)) for i in range(40)]
    tops = (1, 3, 8)
    ours = [[extract_keywords(t, top) for top in tops] for t in texts]

    def with_yake(text: str, top: int, *, dedup_lim: float, lan: str) -> Any:
        return _oracle(lan, top, dedup_lim).extract_keywords(text)

    monkeypatch.setattr(keywords, "yake_single_words", with_yake)
    assert ours == [[extract_keywords(t, top) for top in tops] for t in texts]
    assert any(ours)
