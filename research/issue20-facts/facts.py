"""Candidate facts of a page leaving STM (offline rules), with the features the write-gate reads.

A page is two sides ("Name: text"). For the side(s) spoken by the user (the name the user's side
carries most often so far; no prefix = the user), every sentence is a candidate. Each candidate is
rewritten as a self-contained third-person statement (the package's ``third_person`` with "the user"
-> the speaker's name, "you" -> the other speaker's name, leading vocatives and photo tags removed,
a dropped subject restored, a sentence opening on a dangling pronoun joined to the sentence before).
Its features are pure functions of the text.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

sys.path.insert(0, "/work/main")

from langchain_memoryos.controllers.rules import (  # noqa: E402
    _CHAT_REPLY,
    _EPISODE,
    _HABIT,
    _INTERJECTION,
    _PAST_VERB,
    ASPECT_LEXICON,
    EXPRESS_CUES,
    PLAN_CUES,
    analyze_sentence,
    split_sentences,
    third_person,
    words,
)
from langchain_memoryos.retrieval.lexical import STOPWORDS  # noqa: E402

from extract import split_speaker  # noqa: E402

_PHOTO = re.compile(r"\s*\[shares a photo: [^\]]*\]\s*")
_LEAD_NOISE = re.compile(
    r"^(?:(?:hey|hi|hello|thanks|thank you|thanks a lot|thx|wow|woah|whoa|oh|ooh|yeah|yep|yes|yup|aw+|omg|"
    r"congrats|congratulations|haha+|lol|so|well|ok|okay|sure|right|totally|great|cool|nice|awesome|ah|hmm+|"
    r"definitely|absolutely|exactly|indeed|true|good|sounds good|no way|gosh|dang|man|dude|hey there)\b[\s,!.:;—-]*)+",
    re.I,
)
_IMPLIED_SUBJECT = re.compile(
    r"^(?:just|finally|recently|also|still|actually)?\s*(?:got|went|started|finished|joined|made|took|had|bought|"
    r"visited|moved|signed|tried|saw|met|adopted|found|won|lost|learned|picked|spent|booked|ran|attended|"
    r"volunteered|painted|wrote|decided|baked|cooked|built|gonna|wanna|gotta)\b(?!\s+(?:is|are|was|were)\b)",
    re.I,
)
_COLLOQUIAL = [
    (re.compile(r"\bgonna\b", re.I), "going to"),
    (re.compile(r"\bwanna\b", re.I), "want to"),
    (re.compile(r"\bgotta\b", re.I), "have to"),
    (re.compile(r"\bI going to\b"), "I am going to"),
    (re.compile(r"\bI been\b"), "I have been"),
    (re.compile(r"\bI'm going to\b"), "I am going to"),
    (re.compile(r",\s*you know\b,?|\byou know,\s*|,?\s*\byou know\s*(?=[.!?]?$)", re.I), ""),
    (re.compile(r"\s*-\s*$"), ""),
]
_DANGLING_START = re.compile(r"^(?:it|it's|its|this|that|that's|these|those|they|they're|them|he|she|his|her|"
                             r"there|which)\b", re.I)
_SECOND = frozenset({"you", "your", "you're", "you've", "yours", "yourself", "u", "ur"})
_FIRST = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself", "im", "ive"})
_GROUP = frozenset({"we", "our", "us", "we're", "we've", "ours"})
_EVALUATIVE = frozenset(
    """great awesome amazing cool nice wonderful fantastic beautiful awesome incredible lovely sweet fun
    glad happy excited proud grateful thankful thanks thank sorry sounds looks seem seems feel feels felt
    good bad sad tough hard wow love loved really so very much totally definitely absolutely super""".split()
)
_LEX_ALL = frozenset().union(*ASPECT_LEXICON.values())
_PROPER_MID = re.compile(r"(?<=\s)(?:[A-Z][a-z]+|[A-Z]{2,})")
_NUMBER = re.compile(r"\b\d+\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|first|second|third)\b", re.I)
_PRONOUNS_3 = re.compile(r"\b(?:it|this|that|these|those|they|them|their|he|she|him|her|his)\b", re.I)
INTENTS = ("inform", "plan", "reflect", "express", "request", "other")
ASPECTS = ("health", "social_relationship", "personal_profile", "preference", "activity", "other")


@dataclass
class Candidate:
    """One candidate fact."""

    fact: str  # the rewritten, self-contained statement
    sentence: str  # the source sentence (cleaned)
    speaker: str | None
    other: str | None
    dia_id: str  # the turn it came from ("" when unknown)
    side: int  # 0 user side, 1 agent side of the page
    index: int  # sentence index in the turn
    n_sentences: int
    joined: bool  # joined with the previous sentence (dangling pronoun)
    rec: object = None  # analyze_sentence result
    feats: dict = field(default_factory=dict)


def clean_sentence(s: str, other: str | None) -> str:
    s = " ".join(s.replace("’", "'").split())
    prev = None
    while prev != s:
        prev = s
        s = _LEAD_NOISE.sub("", s).strip()
        if other:
            s = re.sub(rf"^{re.escape(other)}\b[\s,!.:;—-]*", "", s).strip()
            s = re.sub(rf"^(?:thanks|thank you|hey|hi|yeah|wow|oh|so|well)?[\s,]*{re.escape(other)}[,!.]\s*", "", s,
                       flags=re.I).strip()
    if other:
        s = re.sub(rf",\s*{re.escape(other)}\s*([.!?]?)$", r"\1", s)
        # a nickname of the other speaker used as a vocative ("Thanks, Mel!", "Mel, I ...", "..., Mel.")
        nick = rf"(?:{re.escape(other)}|{re.escape(other[:3])}\w{{0,3}})"
        s = re.sub(rf"^{nick}[,!]\s*", "", s)
        s = re.sub(rf",\s*{nick}\s*([.!?]?)$", r"\1", s)
        s = re.sub(rf"^{nick}\s*[.!]?$", "", s)
    if s and _IMPLIED_SUBJECT.match(s):
        s = "I " + s[0].lower() + s[1:]
    for pat, rep in _COLLOQUIAL:
        s = pat.sub(rep, s).strip()
    return s


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
    (re.compile(r"\byourself\b"), "themselves"),
]


def rewrite(sentence: str, name: str, other: str | None, group: str = "others") -> str:
    text = third_person(sentence)
    if not text:
        return ""
    o = other or "the other person"
    for pat, rep in _REPL:
        text = pat.sub(rep.replace("{N}", name).replace("{O}", o).replace("{G}", group), text)
    if name not in text and name != "the user":
        # no subject survived ("Researching adoption agencies ..."): attribute the statement
        text = f"According to {name}, " + text[0].lower() + text[1:]
    return text[0].upper() + text[1:]


_AFFECT = re.compile(
    r"\b(?:feel|feels|felt|feeling|happy|glad|excited|thrilled|grateful|thankful|proud|sad|upset|stressed|"
    r"nervous|anxious|blessed|lucky|love it|loved it|amazing|awesome|great|wonderful|fun|special|means a lot|"
    r"inspiring|inspired|rewarding|fulfilling|beautiful|incredible|fantastic|cool|sweet)\b",
    re.I,
)


def is_feeling(sentence: str) -> bool:
    """A feeling rather than a fact: an affect word and fewer than 3 other content words."""
    if not _AFFECT.search(sentence):
        return False
    toks = [t for t in words(_AFFECT.sub(" ", sentence)) if t not in STOPWORDS and t not in _EVALUATIVE
            and t not in _FIRST and t not in _SECOND and t not in _GROUP and len(t) > 2]
    return len(toks) < 3


def features(c: Candidate) -> dict[str, float]:
    s = c.sentence
    toks = words(s)
    tset = set(toks)
    content = [t for t in toks if t not in STOPWORDS and t not in _EVALUATIVE and t not in _FIRST
               and t not in _SECOND and t not in _GROUP and len(t) > 2]
    rec = c.rec
    f: dict[str, float] = {
        "bias": 1.0,
        "first": float(bool(tset & _FIRST)),
        "group": float(bool(tset & _GROUP)),
        "second": float(bool(tset & _SECOND)),
        "second_only": float(bool(tset & _SECOND) and not (tset & (_FIRST | _GROUP))),
        "question": float(s.rstrip().endswith("?")),
        "chat_reply": float(bool(_CHAT_REPLY.match(s))),
        "n_words": min(len(toks), 40) / 40,
        "n_content": min(len(content), 15) / 15,
        "few_content": float(len(content) < 3),
        "proper": min(len(_PROPER_MID.findall(" " + s)), 3) / 3,
        "number": float(bool(_NUMBER.search(s))),
        "lexicon": min(len(tset & _LEX_ALL), 3) / 3,
        "past": float(bool(_PAST_VERB.search(s))),
        "episode": float(bool(_EPISODE.search(s))),
        "habit": float(bool(_HABIT.search(s))),
        "plan": float(bool(PLAN_CUES.search(s))),
        "express": float(bool(EXPRESS_CUES.search(s))),
        "evaluative": sum(t in _EVALUATIVE for t in toks) / max(1, len(toks)),
        "dangling": float(bool(_DANGLING_START.match(s))) * (1.0 - float(c.joined)),
        "pron3": min(len(_PRONOUNS_3.findall(s)), 3) / 3,
        "first_sentence": float(c.index == 0),
        "turn_sentences": min(c.n_sentences, 6) / 6,
        "personal": float(bool(rec is not None and rec.personal)),
        "confidence": float(rec.confidence) if rec is not None else 0.0,
        "joined": float(c.joined),
        "feeling": float(is_feeling(s)),
    }
    for i in INTENTS:
        f[f"intent_{i}"] = float(rec is not None and rec.intent == i)
    for a in ASPECTS:
        f[f"aspect_{a}"] = float(rec is not None and rec.aspect == a)
    return f


def side_candidates(text: str, speaker: str, other: str | None, dia_id: str, side: int,
                    *, join_dangling: bool = True, group: str = "others", phrasing: str = "name") -> list[Candidate]:
    """Every sentence of one side as a candidate (no filtering here: the gate decides).

    A sentence that opens on a dangling pronoun ("It was so powerful.") and states nothing in the first
    person is joined to the sentence before it (one candidate, not two). ``phrasing="user"`` writes
    "the user" / "the assistant" instead of the names (for the ablation).
    """
    body = _PHOTO.sub(" ", text or "")
    raw = [x for x in split_sentences(" ".join(body.split())) if x.strip()]
    cleaned = [clean_sentence(x, other) for x in raw]
    units: list[tuple[int, str, bool]] = []  # (index, source text, joined)
    for i, s in enumerate(cleaned):
        if not s or len(words(s)) == 0:
            continue
        if (join_dangling and units and _DANGLING_START.match(s) and not (set(words(s)) & (_FIRST | _GROUP))
                and not units[-1][1].rstrip().endswith("?") and units[-1][0] == i - 1):
            j, prev, _ = units[-1]
            units[-1] = (i, prev.rstrip(" .!") + "; " + s[0].lower() + s[1:], True)
            continue
        units.append((i, s, False))
    out: list[Candidate] = []
    n = len(cleaned)
    for i, src, joined in units:
        if phrasing == "name":
            fact = rewrite(src, speaker, other, group)
        else:
            fact = rewrite(src, "the user", "the assistant")
            fact = fact.replace("The user and others", "The user and others")
        if not fact:
            continue
        rec = analyze_sentence(src)
        c = Candidate(fact=fact, sentence=src, speaker=speaker, other=other, dia_id=dia_id, side=side, index=i,
                      n_sentences=n, joined=joined, rec=rec)
        c.feats = features(c)
        out.append(c)
    return out


def page_candidates(user_input: str, agent_response: str, dia_ids: list[str], user_name: str | None,
                    *, sides: str = "user", join_dangling: bool = True, phrasing: str = "name",
                    agent_name: str | None = None) -> list[Candidate]:
    """Candidates of a page. sides='user': only the side(s) the user speaks; 'both': every named side."""
    u_name, u_text = split_speaker(user_input)
    a_name, a_text = split_speaker(agent_response)
    out: list[Candidate] = []
    # "you" on the user side is the agent side's speaker: its prefix, else metadata agent_name
    parts = [(u_name, u_text, a_name or agent_name, 0), (a_name, a_text, u_name or user_name, 1)]
    for k, (name, text, other, side) in enumerate(parts):
        if not text:
            continue
        if name is None:
            if side == 1:
                continue  # an unnamed agent side is the assistant: no user facts there
            name = user_name or "The user"
        if sides == "user" and user_name is not None and name != user_name:
            continue
        dia = dia_ids[k] if len(dia_ids) == 2 else (dia_ids[0] if dia_ids else "")
        out.extend(side_candidates(text, name, other, dia, side, join_dangling=join_dangling, phrasing=phrasing))
    return out
