"""Facts of a page as it is added, offline: self-contained third-person statements with names resolved.

The heuristic controller's ``analyze_page`` turns each side of a dialogue page
into at most one typed record (the design measured in docs/research.md, "Long-term facts"):

1. **Who speaks.** A ``"Name: text"`` prefix names the side (and is stripped);
   else ``metadata["user_name"]`` / ``metadata["agent_name"]`` (or a
   ``"persona_name"`` a caller gives); else "the user". An unnamed agent side is the
   assistant: it yields no facts. When ``metadata["user_name"]`` is given only
   that person's sides yield facts; otherwise every named side does, each
   under its own name, so a fact about the other person is never stored as
   "the user".
2. **Sentences**, cleaned of interjections, vocatives (the other speaker's
   name or nickname), photo tags, "you know" and an evaluative tail (", so
   that's a relief"); a dropped subject is restored ("Just got back …" → "I
   just got back …"); a sentence that opens on a dangling pronoun and follows
   one of the same side is joined to it.
3. **Requests about the memory**: "Please remember that …", "Remember: …",
   "Note that …" keep only the statement; "Call me Sam" is the name the
   speaker goes by; "Forget …" / "Don't remember …" is never a fact, it is a
   request (:func:`page_requests`).
4. **Rewrite**: third person, "the user" → the speaker's name, "you" → the
   other speaker's name; when no subject survives, "According to Name, …";
   relative time resolved against the page's timestamp ("yesterday" → "on 7
   May 2023", :mod:`~langchain_memoryos.controllers.dates`).
5. **Chatter never becomes a fact**: a question, a feeling (an affect word and
   fewer than 3 other content words), a chat reply ("I'm sure …"), a
   sentence with fewer than 3 content words and no property slot, a date, an
   aspect word or a name (or a self-description: "I'm diabetic"), or one in
   the second person only.
6. **Score** (the record's confidence, read by the write-gate): the rule
   reading's confidence when it passes the gate's fields, times a content
   factor (content words, mid-sentence names, numbers, aspect words), less
   for third-person pronouns, halved for a dangling opening. No fitted
   constant.
7. **One record per side**: its best (≤ 3) admitted sentences in turn order,
   confidence = the best score, the subject's name in ``subject``; a sentence
   that fills a property slot (location, employer …) is a record of its own, so
   that a change of that slot updates it alone, and so is a sentence about a
   named person ("My sister Ana lives in Rome": its ``subject`` is Ana).

The steps have modules of their own, their public names re-exported here: the cleaning (step 2)
:mod:`.fact_cleaning`, the requests and kept statements (step 3) :mod:`.fact_requests`, the chatter
test and the score (steps 5 and 6) :mod:`.fact_typing`.

Example:
    >>> import datetime as dt
    >>> from langchain_memoryos.schema import DialoguePage
    >>> page = DialoguePage(id="p", user_input="Caroline: Hey Mel! I'm allergic to peanuts, sadly.",
    ...                     agent_response="Melanie: Oh no! I started pottery classes last week.",
    ...                     timestamp=dt.datetime(2023, 6, 9, 15, tzinfo=dt.UTC))
    >>> [(r.subject, r.summary) for r in page_fact_records(page)]  # doctest: +NORMALIZE_WHITESPACE
    [('Caroline', 'Caroline is allergic to peanuts.'),
     ('Melanie', 'Melanie started pottery classes in the week before 9 June 2023.')]
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_memoryos.controllers.dates import resolve_relative_time
from langchain_memoryos.controllers.fact_cleaning import (
    _CORRECTION_CUE,
    _KEEP_TAIL,
    _LEAD_NOISE,
    _NOT_A_NAME_HERE,
    _PHOTO,
    _clean,
    _drop_replaced,
)
from langchain_memoryos.controllers.fact_requests import (
    _PRIVATE,
    _TOLD,
    _VERB_WORDS,
    _request,
    kept_statement,
    own_statement,
    side_requests,
)
from langchain_memoryos.controllers.fact_typing import _FIRST, fact_score, is_chatter, named_subject
from langchain_memoryos.controllers.lexicon import CALLED_NAME, asked_name, words
from langchain_memoryos.controllers.rewrite import informal_apostrophes, split_sentences, third_person
from langchain_memoryos.controllers.rules import BY_OTHERS, GROUP_PERSON, SentenceFacts, analyze_sentence
from langchain_memoryos.controllers.slots import CAR_MAKES, as_the_user, slot_of
from langchain_memoryos.index.lexical import STOPWORDS
from langchain_memoryos.kernel.controller import MemoryRequest
from langchain_memoryos.schema import DialoguePage, MemoryRecord
from langchain_memoryos.schema.pages import split_speaker
from langchain_memoryos.schema.timestamps import _EPOCH

__all__ = [
    "FactSentence",
    "fact_score",
    "is_chatter",
    "kept_statement",
    "named_subject",
    "own_statement",
    "page_fact_records",
    "page_requests",
    "page_speakers",
    "answer_in_full",
    "side_facts",
    "side_requests",
    "split_speaker",
    "to_third_person",
]


#: Sentences kept per speaker side (the study: 3 beat 2 by about a point of coverage).
SENTENCES_PER_SIDE = 3
#: The write-gate threshold the side's sentences are selected against (``MemoryOSConfig.gate_threshold``).
SELECT_THRESHOLD = 0.5
#: Capitalised words that open a sentence and name no person (days, months, car makes, nationalities).
_NOT_PERSON = re.compile(
    r"^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|"
    rf"August|September|October|November|December|Today|Tonight|Tomorrow|Yesterday|Christmas|Easter|{CAR_MAKES}|"
    r"God|Work|School|Class|Dinner|Lunch|Breakfast|Everything|Nothing|Mom|Mum|Dad|Grandma|Grandpa)$"
)
#: A side that opens with where only ("Near Utrecht.", "Just outside Leeds."): the speaker's whereabouts, read as
#: "I'm near Utrecht" (and kept only when that sentence would be).
_PLACE_ONLY = re.compile(
    r"^(?i:(?:(?:just|right|somewhere|quite)\s+)?(?:near|outside(?: of)?|close to|around|in|not far from|"
    r"on the outskirts of)\s+(?:the\s+)?)([A-Z][\w'-]+(?:\s+(?:de\s+|of\s+)?[A-Z][\w'-]+){0,2})\s*[.!]*$"
)
_DANGLING_START = re.compile(
    r"^(?:it|it's|its|this|that|that's|these|those|they|they're|them|he|she|his|her|there|which)\b", re.I
)
_EMBEDDED_FACT = re.compile(
    r"\b(?:I'm|I am|I've|I have|I live|I work|I don't eat|I do not eat|I can't eat|my \w+ (?:is|are|has))"
    r"\b[^,.;!?]*",
    re.IGNORECASE,
)
_USER_FORMS = (
    (re.compile(r"\b[Tt]he user's\b"), "{N}'s"),
    (re.compile(r"\b[Tt]he user and others\b"), "{N} and others"),
    (re.compile(r"\b[Tt]he user\b"), "{N}"),
    (re.compile(r"\bthe assistant's\b", re.I), "{O}'s"),
    (re.compile(r"\bthe assistant\b", re.I), "{O}"),
    (re.compile(r"\bthemself\b"), "themselves"),
    (re.compile(r"\byourself\b"), "themselves"),
)
#: What a "call me" sentence says before it ("My name is Daniel, but please call me Dan"): a fact of its own.
#: The sentence after a refused name that gives the one asked for ("It's Katherine.", "Just Sam.").
_NAME_INSTEAD = re.compile(
    r"^(?i:(?:it's|it is|just|I'm|I am|I go by|call me|use)\s+)?"
    + CALLED_NAME
    + r"(?i:,?\s+(?:is fine|please|now|instead|works|is better))?\s*[.!]*$"
)
_BEFORE_CALL = re.compile(
    r"[\s,;]*(?:\b(?:but|and|so)\b[\s,]*)?(?:\b(?:please|pls|just|you can|you may|feel free to)\b[\s,]*)*$", re.I
)


def to_third_person(sentence: str, name: str, other: str | None = None, facts: SentenceFacts | None = None) -> str:
    """A first-person sentence as a statement about ``name`` ("you" is ``other``, else "the other person").

    ``name`` "the user" keeps the generic form. When no subject survives the rewrite the statement is
    attributed ("According to Ana, …").

    Example:
        >>> to_third_person("I told you about my sister's wedding.", "Ana", "Ben")
        "Ana told Ben about Ana's sister's wedding."
        >>> to_third_person("I'm vegan.", "the user")
        'The user is vegan.'
    """
    facts = facts or analyze_sentence(sentence)
    text = facts.summary if facts.summary and not facts.agent_directed else third_person(sentence)
    if not text:
        return ""
    o = other or "the other person"
    for pattern, replacement in _USER_FORMS:
        text = pattern.sub(replacement.replace("{N}", name).replace("{O}", o), text)
    if name != "the user" and name not in text:
        text = f"According to {name}, " + text[0].lower() + text[1:]
    return text[0].upper() + text[1:]


@dataclass
class FactSentence:
    """One candidate fact of a side: the statement, its source sentence, its rule reading and score.

    Example:
        >>> [f.fact for f in side_facts("I adopted a dog. He is a beagle.", "Ana", None)]
        ['Ana adopted a dog; he is a beagle.']
    """

    fact: str
    sentence: str
    index: int
    facts: SentenceFacts
    score: float
    subject: str = ""  # a named person the sentence is about ("Mel got a puppy"), as the fact names them


def _units(text: str, other: str | None) -> list[tuple[int, str, bool, bool]]:
    """(index, cleaned sentence, dangling, asked to be remembered) of a side's sentences.

    A dangling follower is joined to the sentence before it.
    """
    body = informal_apostrophes(_PHOTO.sub(" ", text or ""))  # "i dont eat meat": "I don't eat meat"
    units: list[tuple[int, str, bool, bool]] = []
    private, refused_at = False, -2
    for i, raw in enumerate(split_sentences(" ".join(body.split()))):
        opted_out = _PRIVATE.match(_LEAD_NOISE.sub("", " ".join(raw.split())))
        if opted_out or private:
            # "Don't save this, but I'm job hunting": the speaker asked that it is not kept (the clause after too)
            private = opted_out is not None and len(words(raw)) <= len(words(opted_out.group(0))) + 1
            continue
        s = _clean(raw, other)
        request, rest = _request(raw, s)
        if request == "forget":
            continue  # a request about the memory, never a fact (see page_requests)
        if not request and kept_statement(s):
            request, rest = "remember", kept_statement(s)  # "Make sure you remember …", "Note to self: …"
        asked = (
            request == "remember"
            or bool(_TOLD.match(_LEAD_NOISE.sub("", " ".join(raw.split()))))
            or bool(_KEEP_TAIL.search(" ".join(raw.split())))
        )
        if asked:
            s = _clean(rest, other)  # "Please remember that I'm vegan": the statement is the fact
        if not s or not words(s):
            continue
        place = _PLACE_ONLY.match(s) if not units and i == 0 else None
        if place and not _NOT_PERSON.match(place.group(1).split()[0]):
            s = "I'm " + s[0].lower() + s[1:]  # "Near Utrecht.": an answer that only names where the speaker is
        if asked or _CORRECTION_CUE.match(" ".join(raw.split())):
            # "Remember: the gate code is 4471", "Sorry: the appointment is on the 21st, not the 14th": the speaker's
            # own thing, its replaced value dropped once a slot reads it
            s = _drop_replaced(own_statement(s, asked), True)
        dangling = bool(_DANGLING_START.match(s)) and not set(words(s)) & (_FIRST | GROUP_PERSON)
        if dangling and units and units[-1][0] == i - 1 and not units[-1][1].rstrip().endswith("?"):
            j, prev, _, was_asked = units[-1]
            units[-1] = (i, prev.rstrip(" .!") + "; " + s[0].lower() + s[1:], False, was_asked)
            continue
        instead = _NAME_INSTEAD.match(s) if refused_at == i - 1 else None
        if instead:  # "Please stop calling me Katie. It's Katherine.": the name asked for
            units.append((i, f"I go by {instead.group(1)}.", False, True))
            continue
        called = asked_name(s)
        refused_at = i if called and not called.name else refused_at
        if called:  # "Call me Sam": how the assistant addresses them (a trait) and the name they go by (a fact)
            before = _BEFORE_CALL.sub("", s[: called.start])
            if len(words(before)) >= 2 and not BY_OTHERS.search(before + " call me"):
                units.append((i, before.rstrip(" ,;") + ".", False, asked))  # "My name is Daniel, but …"
            if called.name:  # "Don't call me Robert, call me Bob": Bob; a refused name alone is the trait's only
                units.append((i, f"I go by {called.name}.", False, True))
            continue
        if analyze_sentence(s).intent == "request":
            # a request may state a fact ("book a vegan place, I'm vegan"): the stated facts are the units
            units.extend((i, clause.strip() + ".", False, False) for clause in _EMBEDDED_FACT.findall(s))
            continue
        units.append((i, s, dangling, asked))
    return units


def side_facts(text: str, speaker: str, other: str | None) -> list[FactSentence]:
    """Every sentence of one side as a scored candidate fact about ``speaker`` (the gate decides).

    Example:
        >>> [(f.fact, f.score > 0) for f in side_facts("Wow! I work at a bakery. It is so fun!", "Ana", "Ben")]
        [('Ana works at a bakery; it is fun.', True)]
        >>> [f.score for f in side_facts("I'm sure you'll love it.", "Ana", "Ben")]  # a chat reply
        [0.0]
    """
    out: list[FactSentence] = []
    for i, sentence, dangling, asked in _units(text, other):
        about, said = _said_of(sentence, speaker, other)
        if about:  # "Mel got a new puppy!": a fact about Mel (read as Mel would say it)
            sentence = said
        facts = analyze_sentence(sentence)
        if facts.agent_directed:
            continue  # an instruction to the assistant is an agent trait (see records_from_text)
        fact = to_third_person(sentence, about or speaker, other, facts)
        if fact:
            score = fact_score(sentence, facts, dangling=dangling, asked=asked)
            out.append(FactSentence(fact, sentence, i, facts, score, about))
    return out


#: A sentence about a named person ("Mel got a new puppy", "Tom moved to Lyon"): the name and the verb after it.
_NAMED_OPENING = re.compile(
    r"^([A-Z][a-z]+)\s+(?:(just|finally|recently|also|now|still)\s+)?(is|was|has|had|'s|[a-z]+)\b(?!')(?!\s+(?:is|are|was)\b)"
)
#: What a person does or goes through: a named person other than the listener is a subject with one of these.
_PERSON_EVENTS = frozenset(
    """got adopted moved moves lives works started starts quit graduated graduates turned turns retired married
    marries broke bought won joined left became gave passed visited studies teaches plays runs is was has had
    lost sold finished signed booked switched transferred""".split()
)
#: What a company or a service puts out ("started a new show", "launched a new app"): its maker is no person.
_RELEASE = re.compile(
    r"^\s+(?:an?|the|its|their|another|some)\s+(?:new\s+|latest\s+|first\s+)?(?:[\w-]+\s+)?(?:show|series|season|"
    r"episode|app|feature|update|version|model|product|phone|movie|film|podcast|subscription|menu|store|stores|"
    r"branch|logo|price|prices|policy|ad|campaign|service|line|collection)s?\b",
    re.IGNORECASE,
)
_GENERIC_VERBS = frozenset({"is", "was", "has", "had", "'s", "runs", "plays", "lost", "sold", "finished"})
_AS_SAID = {"is": "am", "'s": "'m", "has": "have", "does": "do", "was": "was", "goes": "go"}


def _said_of(sentence: str, speaker: str, other: str | None) -> tuple[str, str]:
    """``(name, the sentence as that person would say it)`` of a sentence about a named person, else ``("", "")``.

    The listener is named by their name or its start ("Mel" for Melanie) and may do anything; anyone else
    named must go through a person's event (:data:`_PERSON_EVENTS`: moved, got, started …).

    Example:
        >>> _said_of("Mel got a new puppy!", "Caroline", "Melanie"), _said_of("Tom is a nurse.", "Ana", "Tom")
        (('Melanie', 'I got a new puppy!'), ('Tom', 'I am a nurse.'))
        >>> _said_of("Paris is lovely.", "Ana", None), _said_of("Jo moved to Lyon.", "Ana", None)
        (('', ''), ('Jo', 'I moved to Lyon.'))
    """
    m = _NAMED_OPENING.match(sentence)
    if m is None or set(words(sentence)) & (_FIRST | GROUP_PERSON):
        return "", ""
    name, adverb, verb = m.group(1), m.group(2), m.group(3)
    if name.lower() in STOPWORDS or _NOT_A_NAME_HERE.match(name) or _NOT_PERSON.match(name) or name == speaker:
        return "", ""
    listener = bool(other) and (name == other or (len(name) >= 3 and str(other).lower().startswith(name.lower())))
    if not listener and (verb not in _PERSON_EVENTS or verb in _GENERIC_VERBS or _RELEASE.match(sentence[m.end() :])):
        return "", ""  # "Netflix started a new show": a company's news, no one's fact
    who = str(other) if listener else name
    said = _AS_SAID.get(verb) or (
        verb[:-3] + "y"
        if verb.endswith("ies")
        else verb[:-2]
        if verb.endswith(("shes", "ches", "xes", "sses"))
        else verb[:-1]
        if verb.endswith("s") and not verb.endswith("ss")
        else verb
    )
    rest = sentence[m.end() :]
    return who, "I " + (adverb + " " if adverb else "") + said + rest


def page_speakers(page: DialoguePage) -> list[tuple[str, str, str | None]]:
    """``(speaker, text, other speaker)`` of each side of a page that may hold facts (see the module rules).

    Example:
        >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted.")
        >>> page_speakers(page)
        [('the user', "I'm vegan.", None)]
        >>> page = DialoguePage(id="p", user_input="Jo: hi", agent_response="Al: yo", metadata={"user_name": "Al"})
        >>> page_speakers(page)
        [('Al', 'yo', 'Jo')]
    """
    meta: Mapping[str, Any] = page.metadata or {}
    user_name = str(meta["user_name"]) if meta.get("user_name") else None
    agent_name = str(meta["agent_name"]) if meta.get("agent_name") else None
    persona_name = str(meta["persona_name"]) if meta.get("persona_name") else None
    u_name, u_text = split_speaker(page.user_input)
    a_name, a_text = split_speaker(page.agent_response)
    sides: list[tuple[str, str, str | None]] = []
    user_side = u_name or user_name or persona_name or "the user"
    if u_text:
        sides.append((user_side, u_text, a_name or agent_name))
    if a_text and a_name:
        sides.append((a_name, a_text, user_side if user_side != "the user" else None))
    if user_name is not None:
        sides = [side for side in sides if side[0] == user_name]
    return sides


def page_requests(page: DialoguePage) -> list[MemoryRequest]:
    """The page's requests about the memory itself ("Forget that I …"), from every side that may hold facts.

    Example:
        >>> page = DialoguePage(id="p", user_input="Forget what I said about my ex. I live in Oslo.",
        ...                     agent_response="Ok.")
        >>> page_requests(page)
        [MemoryRequest(request='forget', about='what I said about my ex.', subject='')]
    """
    return [
        MemoryRequest("forget", about, "" if speaker == "the user" else speaker)
        for speaker, text, other in page_speakers(page)
        for about in side_requests(text, other)
    ]


#: A yes/no question about the listener ("Do you have any pets?", "Did you ever play chess?").
_YES_NO = re.compile(
    r"^(?:(?:so|and|hey|oh|also|btw)[\s,]+)*(do|did) you\s+(?:still\s+|ever\s+|also\s+|even\s+|currently\s+)?"
    r"(have|own|play|speak|like|love|know|watch|read|cook|drive|run|paint|draw|sing|dance|collect|do|keep|grow|"
    r"use|take|practice|eat|drink|get|go to|work at|work for|live in|listen to)\s+([^?]{2,60})\?$",
    re.IGNORECASE,
)
#: A short answer to it: "Yes, a dog named Biscuit.", "Yes, I do.", "No, I don't."
_YES_NP = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|of course|i do|definitely)\b[,!.]?\s*(?:i do\b[,!.]?\s*)?"
    r"((?:a|an|the|one|two|three|four|five|six|\d+|some|my|lots of|a lot of)\b[^.!?]*)([.!?]|$)",
    re.IGNORECASE,
)
_YES = re.compile(r"^(?:yes|yeah|yep|yup|sure|of course|definitely)?[,!.]?\s*(?:I do|I did)\s*[.!]", re.IGNORECASE)
_NO = re.compile(r"^(?:no|nope|nah)[,!.]?\s*(?:I don't|I do not|I didn't|I did not)\s*[.!]", re.IGNORECASE)


#: A question about someone or something of the listener's ("How's your mom?", "How is the new puppy?").
_HOW_IS = re.compile(
    r"\b(?:how's|how is|how was|how are|how were|what about|and)\s+(?:your|the)\s+((?:[a-z-]+\s+){0,2}?)([a-z-]+)"
    r"(?=\s*\?|\s+(?:coming|going|doing|getting|holding|treating|working|been|now|these days|lately|today|so far)\b)"
    r"[^?]*\?\s*$",
    re.IGNORECASE,
)
_PRONOUN_START = re.compile(
    r"^(?:he|she|it|they)(?:'s|'re|\s+is|\s+are|\s+was|\s+were|\s+has|\s+have|\s+had|(?=\s+[a-z]+s?\b))",
    re.IGNORECASE,
)


def _named_by_question(question: str, answer: str) -> str:
    """An answer that opens on "he/she/it" about what the question asked of ("How's your mom?" "She's better.")."""
    asked = _HOW_IS.search(question)
    opening = _PRONOUN_START.match(answer)
    if not asked or not opening:
        return answer
    noun = f"my {(asked.group(1) or '').lower()}{asked.group(2).lower()}"
    verb = opening.group(0)[opening.group(0).lower().find(" ") + 1 :] if " " in opening.group(0) else ""
    if opening.group(0).endswith(("'s", "'re")):
        verb = "is" if opening.group(0).endswith("'s") else "are"
    if verb in ("is", "are") and re.match(r"\s+been\b", answer[opening.end() :]):
        verb = "has" if verb == "is" else "have"  # "It's been going well"
    if verb.lower() in ("is", "was", "has", "had") and opening.group(0).lower().startswith("they"):
        verb = {"is": "are", "was": "were", "has": "have", "had": "had"}[verb.lower()]
    rest = answer[opening.end() :]
    return f"{noun[0].upper()}{noun[1:]}{' ' + verb if verb else ''}{rest}"


def answer_in_full(question_side: str, answer: str) -> str:
    """An elliptical answer to the other side's yes/no question, in full ("Yes, a dog." → "I have a dog.").

    Example:
        >>> answer_in_full("Do you have any pets?", "Yes, a dog named Biscuit. He's 3.")
        "I have a dog named Biscuit. He's 3."
        >>> answer_in_full("Did you ever play chess?", "No, I didn't. Too slow for me.")
        "I didn't play chess. Too slow for me."
        >>> answer_in_full("How are you?", "Yes, a lot.")
        'Yes, a lot.'
    """
    sentences = split_sentences(" ".join(_PHOTO.sub(" ", question_side or "").split()))
    question = _YES_NO.match(sentences[-1]) if sentences else None
    if question is None and sentences and answer:
        return _named_by_question(sentences[-1], " ".join(answer.split()))
    if question is None or not answer:
        return answer
    did, verb, obj = question.group(1).lower() == "did", question.group(2), question.group(3).strip()
    body = " ".join(answer.split())
    noun_phrase = _YES_NP.match(body)
    if noun_phrase and not set(words(noun_phrase.group(1))) & (_FIRST | GROUP_PERSON | _VERB_WORDS):
        stated = f"I {verb} {noun_phrase.group(1).strip()}."
        return stated + body[noun_phrase.end() :]
    plain = re.sub(r"(?i)^(?:any|some)\s+", "", obj)
    yes = _YES.match(body)
    if yes:
        return (f"I did {verb} {plain}." if did else f"I {verb} {plain}.") + body[yes.end() :]
    no = _NO.match(body)
    if no:
        return (f"I didn't {verb} {obj}." if did else f"I don't {verb} {obj}.") + body[no.end() :]
    return answer


def page_fact_records(
    page: DialoguePage, *, per_side: int = SENTENCES_PER_SIDE, threshold: float = SELECT_THRESHOLD
) -> list[MemoryRecord]:
    """The page's fact records: per speaker side, its ≤ ``per_side`` best admitted sentences joined.

    A sentence that fills a property slot, or that is about a named person ("My sister Ana lives in
    Rome": the subject is Ana), is a record of its own (see the module rules). Relative time is
    resolved against the page's timestamp ("yesterday" → "on 7 May 2023").

    A side with no admitted sentence but a personal statement yields that statement with its low
    score, so the write-gate logs it ``filtered``; a side of chatter only yields nothing.

    Example:
        >>> page = DialoguePage(id="p", user_input="I'm allergic to peanuts. Anyway, how are you?",
        ...                     agent_response="Good, thanks!", metadata={"user_name": "Sam"})
        >>> [(r.subject, r.summary, r.aspect, r.confidence > 0.5) for r in page_fact_records(page)]
        [('Sam', 'Sam is allergic to peanuts.', 'health', True)]
        >>> import datetime as dt
        >>> page = DialoguePage(id="p", user_input="My sister Ana ran a marathon yesterday.", agent_response="Wow!",
        ...                     timestamp=dt.datetime(2023, 5, 8, 10, tzinfo=dt.UTC))
        >>> [(r.subject, r.summary) for r in page_fact_records(page)]
        [('Ana', "The user's sister Ana ran a marathon on 7 May 2023.")]
    """
    when = page.timestamp if page.timestamp != _EPOCH else None
    records: list[MemoryRecord] = []
    asked = ""
    for speaker, text, other in page_speakers(page):
        said, asked = answer_in_full(asked, text), text  # "Do you have pets?" "Yes, a dog." → "I have a dog."
        candidates = side_facts(said, speaker, other)
        admitted = sorted((c for c in candidates if c.score >= threshold), key=lambda c: -c.score)[:per_side]
        if not admitted:
            personal = [c for c in candidates if c.facts.personal and c.facts.summary]
            if personal:
                records.append(_record([max(personal, key=lambda c: c.score)], speaker, when))
            continue
        chosen = sorted(admitted, key=lambda c: c.index)
        # a sentence that fills a property slot (location, employer, diet …) or is about a named person is a
        # record of its own, so that a later change of that slot (or of that person's) replaces it alone; the
        # other sentences are joined into one record
        alone = [
            c
            for c in chosen
            if (c.facts.summary and slot_of(c.facts.summary)) or named_subject(c.sentence) or c.subject
        ]
        rest = [c for c in chosen if c not in alone]
        records.extend(_record([c], speaker, when) for c in alone)
        if rest:
            records.append(_record(rest, speaker, when))
    return records


def _record(chosen: list[FactSentence], speaker: str, when: _dt.datetime | None = None) -> MemoryRecord:
    """One record from a side's chosen sentences (in turn order), relative time resolved against ``when``."""
    first = chosen[0]
    entities = list(dict.fromkeys(e for c in chosen for e in c.facts.entities))
    aspect = next((c.facts.aspect for c in chosen if c.facts.aspect != "other"), first.facts.aspect)
    intent = next((c.facts.intent for c in chosen if c.facts.intent not in ("other", "request")), first.facts.intent)
    named = (named_subject(first.sentence) or first.subject) if len(chosen) == 1 else ""
    # a named person's slot is their own ("My sister Ana lives in Rome": Ana's location, which "Ana moved" updates)
    slot = slot_of(as_the_user(first.fact, named) if named else first.facts.summary) if first.facts.summary else None
    summary = " ".join(c.fact for c in chosen)
    if when is not None:
        summary = resolve_relative_time(summary, when)
    return MemoryRecord(
        kind="user",
        aspect=aspect,  # type: ignore[arg-type]
        intent=intent,  # type: ignore[arg-type]
        personal=any(c.facts.personal for c in chosen),
        entities=entities[:6],
        summary=summary,
        sentiment=first.facts.sentiment,  # type: ignore[arg-type]
        confidence=max(c.score for c in chosen),
        slot=slot[0] if slot else "",
        subject=named or ("" if speaker == "the user" else speaker),
    )
