"""The heuristic controller's rewriting of the user's words: sentences, clauses, gists, third person, agent traits.

Deterministic, English-centred rules (see :mod:`~langchain_memoryos.controllers.rules`).
"""

from __future__ import annotations

import re

from langchain_memoryos.controllers.lexicon import asked_name, words

__all__ = ["FIRST_PERSON", "agent_summary", "gist", "informal_apostrophes", "split_sentences", "third_person"]

#: A sentence ends at . ! ? ; (not after a title: "Dr. Patel", "Mr. Hall") or a newline.
_SENT_SPLIT = re.compile(
    r"(?<=[.!?;])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bMx\.)(?<!\bSt\.)(?<!\bProf\.)\s+|\n+"
)
_CLAUSE_SPLIT = re.compile(r"\s*,?\s+\b(?:and|but)\s+(?=(?:I|I'm|I've|my|My|we|we're|we've|our)\b)")

FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself", "im", "ive"})

_FILLERS = re.compile(
    r"\b(?:really|so|super|totally|absolutely|honestly|actually|literally|basically|very|pretty)\s+",
    re.IGNORECASE,
)
_INTERJECTION = re.compile(
    r"^(?:(?:oh|ooh|wow|haha+|hah|ha|lol|yeah|yep|yes|no|well|hey|hi|hello|ok|okay|so|um+|uh+|ah+|aw+|omg|"
    r"hmm+|hm+|heh|anyway|anyways|btw|big news|heads up|update|fyi|career news|news)\b[\s,!.:—-]*)+",
    re.IGNORECASE,
)

_IRREGULAR_3RD = {
    "have": "has",
    "do": "does",
    "go": "goes",
    "am": "is",
    "was": "was",
    "'m": "is",
    "be": "is",
    "don't": "doesn't",
    "haven't": "hasn't",
    "can": "can",
    "could": "could",
    "will": "will",
    "would": "would",
    "should": "should",
    "might": "might",
    "must": "must",
    "may": "may",
    "did": "did",
    "didn't": "didn't",
    "won't": "won't",
    "can't": "can't",
    "couldn't": "couldn't",
    "wouldn't": "wouldn't",
    "shouldn't": "shouldn't",
    "had": "had",
    "wasn't": "wasn't",
    "used": "used",
    "got": "got",
    "went": "went",
    "made": "made",
    "took": "took",
    "saw": "saw",
    "met": "met",
    "felt": "felt",
    "grew": "grew",
    "began": "began",
    "bought": "bought",
    "found": "found",
    "left": "left",
    "lost": "lost",
    "ran": "ran",
    "came": "came",
    "gave": "gave",
    "told": "told",
    "thought": "thought",
    "knew": "knew",
    "kept": "kept",
    "spent": "spent",
    "won": "won",
    "wrote": "wrote",
    "read": "reads",
    "became": "became",
    "taught": "taught",
}
_ADVERBS = frozenset(
    """really also never always still recently finally usually often sometimes just actually
    truly definitely mostly even already currently now honestly totally absolutely no longer
    not""".split()
)


_CLAUSE_VERB = frozenset(
    """i i'm i've i'd i'll we we're we've he she they it is are was were am have has had do does did can will""".split()
)


def _compound_subject(left: str, joint: str) -> bool:
    """Whether "<left> and I …" has "<a noun phrase> and I" as its subject ("my family and I went …")."""
    segment = re.split(r"[,;:—–-]\s*", left)[-1]
    tokens = words(segment)
    starts = [i for i, t in enumerate(tokens) if t in ("my", "our", "the", "his", "her", "their")]
    return (
        bool(re.match(r"\s*,?\s*and\s+I\b(?!'|’)", joint))
        and bool(starts)
        and len(tokens) - starts[-1] <= 4
        and not set(tokens) & _CLAUSE_VERB
    )


def _split_clauses(sentence: str) -> list[str]:
    """Split off first-person clauses, but keep "Marco and I …" (a short left part) whole."""
    parts: list[str] = []
    start = 0
    for m in _CLAUSE_SPLIT.finditer(sentence):
        left = sentence[start : m.start()]
        if _compound_subject(left, sentence[m.start() :]):
            continue  # "My wife and I went to Rome": one clause with two subjects
        if len(left.split()) >= 3 or set(words(left)) & FIRST_PERSON:
            parts.append(sentence[start : m.start()])
            start = m.end()
    parts.append(sentence[start:])
    return parts


#: Contractions typed without their apostrophe ("i dont", "cant", "ive"): the form the rules read.
_BARE_CONTRACTION = re.compile(
    r"\b(?:(do|does|did|ca|could|would|should|is|are|was|were|have|has|had|wo|ai)nt|(i)(m|ve|ll)|"
    r"(she|he|that|what|there)(s)|(they|you)(re))\b|\b(i)\b(?!\.)",
    re.IGNORECASE,
)


def _contraction(m: re.Match[str]) -> str:
    if m.group(8):  # a lone "i"
        return "I"
    if m.group(4):  # "shes", "thats", "whats"
        return m.group(4) + "'s"
    if m.group(6):  # "theyre", "youre"
        return m.group(6) + "'re"
    if m.group(2):  # "im", "ive", "ill"
        if m.group(0) == "ill" or m.group(0) == "Ill":
            return m.group(0)  # "ill" is a word of its own
        return "I'" + m.group(3).lower()
    stem = m.group(1)
    return stem + ("n't" if m.group(0)[-2:].islower() else "N'T")


_NAMES_IS = re.compile(r"\b([Mm]y) names(?=\s+[A-Z])")  # "my names Oliver": "my name's Oliver"


def informal_apostrophes(text: str) -> str:
    """Contractions typed without an apostrophe, and a lone lower-case "i", in their written form.

    Example:
        >>> informal_apostrophes("i dont drink coffee and im not sorry, ive tried")
        "I don't drink coffee and I'm not sorry, I've tried"
        >>> informal_apostrophes("We cant go, it wont start. I feel ill. my names Oliver")
        "We can't go, it won't start. I feel ill. my name's Oliver"
    """
    return _NAMES_IS.sub(r"\1 name's", _BARE_CONTRACTION.sub(_contraction, text or ""))


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (punctuation, newlines) and first-person clauses.

    "My name is Ana and I live in Lisbon" holds two facts: a clause that starts
    with "and I" / "but my" … is split off so that each record holds one fact.

    Args:
        text: any text.

    Returns:
        Non-empty, stripped sentences.

    Example:
        >>> split_sentences("Book a table. I'm vegan!")
        ['Book a table.', "I'm vegan!"]
        >>> split_sentences("My name is Ana and I live in Lisbon.")
        ['My name is Ana', 'I live in Lisbon.']
    """
    out: list[str] = []
    for sentence in _SENT_SPLIT.split(text or ""):
        for clause in _split_clauses(sentence or ""):
            if clause and clause.strip():
                out.append(clause.strip())
    return out


def gist(text: str, limit: int = 90) -> str:
    """A short extractive gist: the first sentence, trimmed.

    Example:
        >>> gist("I moved to Denver. It is cold.")
        'I moved to Denver.'
    """
    sentences = split_sentences(" ".join((text or "").split()))
    cleaned = [c for c in (_INTERJECTION.sub("", s).strip(" ,") for s in sentences) if len(c) > 2]
    first = cleaned[0] if cleaned else (sentences[0] if sentences else "")
    if len(first) > limit:
        cut = first[:limit].rsplit(" ", 1)[0]
        return cut + "…"
    return first


_PAST_FORMS = frozenset(
    """quit broke put cut set let hit hurt split sold sent built drove flew ate drank swam wore chose fell forgot
    held heard paid said sat slept stood understood caught brought fought sought lent meant led fed shut spread
    cost burst rode sang rang shook stole struck threw woke""".split()
)


#: Present-tense verbs that end in "ed" ("I need a break": "the user needs").
_ED_PRESENT = frozenset("need feed bleed breed speed proceed succeed exceed shed wed embed".split())


def _third_person_verb(word: str) -> str:
    low = word.lower()
    if low in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[low]
    if low in _PAST_FORMS:
        return word
    if (low.endswith("ed") and low not in _ED_PRESENT) or not low.isalpha():
        return word
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if len(low) > 2 and low.endswith("y") and low[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


_PRONOUN_MAP = {
    "i'm": "the user is",
    "im": "the user is",
    "i've": "the user has",
    "ive": "the user has",
    "i'd": "the user would",
    "i'll": "the user will",
    "my": "the user's",
    "me": "the user",
    "mine": "the user's",
    "myself": "themself",
    "we": "the user and others",
    "we're": "the user and others are",
    "we've": "the user and others have",
    "our": "their",
    "ours": "theirs",
    "us": "the user and others",
    "you": "the assistant",
    "your": "the assistant's",
    "yours": "the assistant's",
}


def third_person(sentence: str) -> str:
    """Rewrite a first-person sentence as an affect-neutral third-person statement.

    Drops interjections and intensifiers, turns "I/my/me" into "the user",
    conjugates the verb that follows "I", and ends with a period.

    Args:
        sentence: a first-person sentence.

    Returns:
        The rewritten statement ("" for an empty input).

    Example:
        >>> third_person("Wow, I really love hiking with my dog!")
        "The user loves hiking with the user's dog."
    """
    text = " ".join((sentence or "").replace("’", "'").split())
    text = _INTERJECTION.sub("", text)
    text = _FILLERS.sub("", text)
    text = text.rstrip(" !?.,;:")
    if not text:
        return ""
    tokens = text.split(" ")
    # "Our neighbour plays the trumpet" (opening on "our", no "we" in it): the user's neighbour, not "their"
    group = {"we", "we're", "we've", "we'll", "we'd", "us"} & set(words(text))
    group = group or set(re.findall(r"(?i)\band (?:I|me)\b", text))  # "My wife and I … our anniversary"
    ours = "the user's" if not group else ""  # "Last week our neighbour Priya had twins": no "we" to be "their"
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        core = tok.strip(',;:"()')
        low = core.lower()
        trail = tok[len(tok.rstrip(',;:"()')) :] if tok != tok.rstrip(',;:"()') else ""
        if low in ("i", "i am"):
            out.append("the user" + trail)
            # conjugate the next verb, skipping adverbs
            j = i + 1
            plural = i > 0 and tokens[i - 1].lower() == "and"
            while j < len(tokens) and (
                tokens[j].lower().strip(",") in _ADVERBS or tokens[j].lower().endswith("ly") and len(tokens[j]) > 4
            ):
                out.append(tokens[j])
                j += 1
            if j < len(tokens):
                nxt = tokens[j]
                if plural:
                    out.append(nxt)
                elif nxt.lower() == "am":
                    out.append("is")
                else:
                    stripped = nxt.rstrip(",;:")
                    out.append(_third_person_verb(stripped) + nxt[len(stripped) :])
                i = j + 1
                continue
            i += 1
            continue
        if low == "our" and ours:
            out.append(ours + trail)
        elif low in _PRONOUN_MAP:
            out.append(_PRONOUN_MAP[low] + trail)
        else:
            out.append(tok)
        i += 1
    result = " ".join(out).strip()
    result = re.sub(r"\bthe user is (\w+ing)\b", r"the user is \1", result)
    result = result[0].upper() + result[1:]
    return result + "."


_DIRECTIVE_LEAD = re.compile(
    r"^(?:(?:from now on|in the future|going forward|please|and|also|so)\b[\s,]*)+", re.IGNORECASE
)
_WANT_LEAD = re.compile(r"^(?:i want you to|i'd like you to|i would like you to|you should)\s+", re.I)


#: A statement before the instruction ("I'm vegetarian — please don't …", "I'm a night owl, so never …"): a fact of
#: its own, no part of the instruction.
_STATED_BEFORE = re.compile(
    r"^(?:i|i'm|i am|i've|i have|my|we|we're|we are)\b[^,;—–]*?(?:[,;]|\s[—–-])\s*(?:(?:so|and)\s+)?"
    r"(?=(?:please|pls|don't|do not|never|no need to)\b)",
    re.IGNORECASE,
)
_NOT_WANTED_LEAD = re.compile(
    r"^(?:(?:i'd|i would) rather you (?:didn't|did not|not|wouldn't|would not)|i (?:don't|do not) want you to)\s+", re.I
)
_AGENT_INTERJECTION = re.compile(
    r"^(?:(?:oh|ooh|wow|haha+|ha|lol|well|hey|hi|hello|ok|okay|so|um+|uh+|ah+|hmm+|hm+|anyway)\b[\s,!.]*)+",
    re.IGNORECASE,
)


def agent_summary(sentence: str) -> str:
    """Rewrite a directive to the assistant as an agent trait.

    Example:
        >>> agent_summary("From now on, please call me Sam.")
        'The assistant should call the user Sam.'
        >>> agent_summary("Please don't call me Robert, call me Bob."), agent_summary("Never call me Liz!")
        ('The assistant should call the user Bob, not Robert.', 'The assistant should not call the user Liz.')
    """
    text = _AGENT_INTERJECTION.sub("", " ".join(sentence.replace("’", "'").split()))
    text = _STATED_BEFORE.sub("", text)  # "I'm vegetarian — please don't send me meat recipes": the request
    text = _DIRECTIVE_LEAD.sub("", text)
    text = _WANT_LEAD.sub("", text).rstrip(" !?.,;:")
    text = _NOT_WANTED_LEAD.sub("not ", text)  # "I'd rather you didn't use emojis": not use emojis
    called = asked_name(text)
    if called and called.name:  # "Call me Liz, everyone does": only the name ("Don't call me Rob, call me Bob": Bob)
        refused = f", not {called.refused}" if called.refused else ""
        return f"The assistant should call the user {called.name}{refused}."
    if called:  # "Don't call me Rob", "I'd rather you didn't call me Liz": the name refused, never as the one used
        return f"The assistant should not call the user {called.refused}."
    if re.match(r"^no\s+\w", text, re.IGNORECASE):
        text = "use " + text  # "no emojis" → "use no emojis"
    text = re.sub(r"(?i)^(?:don't|do not|dont)\s+", "not ", text)  # "don't tell anyone" → "not tell anyone"
    if not text:
        return ""
    body = third_person(text).rstrip(".")
    body = body[0].lower() + body[1:]
    return f"The assistant should {body}."
