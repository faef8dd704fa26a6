"""Offline fact extraction from a dialogue page: speakers, sentences, third person with names resolved.

Everything here is a pure function of the page text (and, for the user's name, of the names seen so
far on the user's pages): no model, no data fitted except where a constant says so.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field

sys.path.insert(0, "/work/main")

from langchain_memoryos.controllers.rules import (  # noqa: E402
    _INTERJECTION,
    analyze_sentence,
    split_sentences,
    third_person,
    words,
)

# "Caroline: text" – a speaker prefix (one or two capitalised words, a colon, a space)
_PREFIX = re.compile(r"^\s*([A-Z][\w'’-]{1,30}(?:\s[A-Z][\w'’-]{1,30})?):\s+")
_PHOTO = re.compile(r"\s*\[shares a photo: [^\]]*\]\s*")
_VOCATIVE_LEAD = re.compile(r"^(?:(?:hey|hi|hello|thanks|thank you|wow|oh|yeah|yes|aw+|omg|congrats|congratulations|"
                            r"haha+|lol|so|well|ok|okay|sure|right|totally|great|cool|nice)\b[\s,!.]*)*"
                            r"(?:[A-Z][a-z]+)?[\s,!.]*$", re.I)


def split_speaker(text: str) -> tuple[str | None, str]:
    """('Caroline', 'text') for 'Caroline: text'; (None, text) without a prefix."""
    m = _PREFIX.match(text or "")
    if not m:
        return None, (text or "").strip()
    return m.group(1), text[m.end():].strip()


@dataclass
class Speakers:
    """The user's name, learned online: the most frequent speaker prefix on the user side so far."""

    counts: Counter = field(default_factory=Counter)
    first: dict[str, int] = field(default_factory=dict)

    def see(self, name: str | None) -> None:
        if name:
            self.counts[name] += 1
            self.first.setdefault(name, len(self.first))

    def user(self) -> str | None:
        if not self.counts:
            return None
        return max(self.counts, key=lambda n: (self.counts[n], -self.first[n]))


_REPL = [
    (re.compile(r"\bThe user's\b"), "{N}'s"),
    (re.compile(r"\bthe user's\b"), "{N}'s"),
    (re.compile(r"\bThe user and others\b"), "{N} and {G}"),
    (re.compile(r"\bthe user and others\b"), "{N} and {G}"),
    (re.compile(r"\bThe user\b"), "{N}"),
    (re.compile(r"\bthe user\b"), "{N}"),
    (re.compile(r"\bthe assistant's\b", re.I), "{O}'s"),
    (re.compile(r"\bthe assistant\b", re.I), "{O}"),
    (re.compile(r"\bthemself\b"), "themselves"),
]


def name_third_person(sentence: str, name: str, other: str | None, group: str = "others") -> str:
    """The package's third-person rewrite with 'the user' -> the speaker's name, 'you' -> the other's name."""
    text = third_person(sentence)
    if not text:
        return ""
    other_name = other or "the other person"
    for pat, rep in _REPL:
        text = pat.sub(rep.replace("{N}", name).replace("{O}", other_name).replace("{G}", group), text)
    # "Name is Name's ..." artefacts are rare; capitalise the first letter
    return text[0].upper() + text[1:]


def page_sides(user_input: str, agent_response: str) -> list[tuple[str | None, str, str | None]]:
    """[(speaker, text, other speaker)] for the two sides of a page."""
    u_name, u_text = split_speaker(user_input)
    a_name, a_text = split_speaker(agent_response)
    out = []
    if u_text:
        out.append((u_name, u_text, a_name))
    if a_text:
        out.append((a_name, a_text, u_name))
    return out


def sentences_of(text: str) -> list[str]:
    text = _PHOTO.sub(" ", text)
    return [s for s in split_sentences(" ".join(text.split())) if s.strip()]


def is_vocative_only(sentence: str) -> bool:
    return bool(_VOCATIVE_LEAD.match(sentence.strip()))


__all__ = [
    "Speakers",
    "analyze_sentence",
    "is_vocative_only",
    "name_third_person",
    "page_sides",
    "sentences_of",
    "split_speaker",
    "words",
    "_INTERJECTION",
]
