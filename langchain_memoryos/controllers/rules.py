"""Text rules of the heuristic controller: lexicons, intents, aspects, confidence, entities.

These are deterministic, English-centred rules. They are the offline default's
stand-in for the language model of the papers, so they aim at precision: a
sentence that no rule understands yields no record rather than a wrong one.
The rewriting of sentences (third person, agent traits) is in
:mod:`~langchain_memoryos.controllers.rewrite`, property slots in
:mod:`~langchain_memoryos.controllers.slots`, shared word lists in
:mod:`~langchain_memoryos.controllers.lexicon`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from langchain_memoryos.controllers.dates import has_relative_time
from langchain_memoryos.controllers.lexicon import PARTNERS, PERIODS, words
from langchain_memoryos.controllers.rewrite import (
    _INTERJECTION,
    FIRST_PERSON,
    agent_summary,
    gist,
    informal_apostrophes,
    split_sentences,
    third_person,
)
from langchain_memoryos.controllers.slots import canonical_summary, slot_of

__all__ = [
    "CONFIDENCE_RUBRIC",
    "SentenceFacts",
    "analyze_sentence",
    "change_cue",
    "memory_request",
    "gist",
    "slot_of",
    "split_sentences",
    "third_person",
]

GROUP_PERSON = frozenset({"we", "our", "us", "we're", "we've", "ours"})

ASPECT_LEXICON: dict[str, frozenset[str]] = {
    "health": frozenset(
        """allergic allergy allergies coeliac celiac disease condition intolerant intolerance
        vegan vegetarian pescatarian gluten lactose diet dieting doctor
        sick illness ill injury injured pain medication medicine therapy therapist diabetes diabetic
        asthma insomnia sleep surgery pregnant anxiety depression depressed hospital health healthy
        fitness workout gym cholesterol blood pressure migraine migraines celiac keto sober
        smoking smoke drinking alcohol knee back disability""".split()
    ),
    "social_relationship": frozenset(
        """friend friends bestie mom mother dad father
        sister brother son daughter kids kid children child family cousin aunt uncle grandma
        grandmother grandpa grandfather colleague colleagues coworker coworkers boss neighbor
        neighbour married divorced dating engaged roommate flatmate housemate dog cat puppy kitten pet
        parents baby
        nephew niece mentor team""".split()
    )
    | PARTNERS,
    "preference": frozenset(
        """love loves like likes enjoy enjoys prefer prefers favorite favourite hate hates dislike
        dislikes fan adore adores can't stand into obsessed passion passionate""".split()
    ),
    "activity": frozenset(
        """hiking hike running run ran marathon painting paint reading read playing play played
        cooking cook baking bake travel traveling travelling trip visit visited camping swimming
        swim yoga guitar piano violin drums class classes course project volunteer volunteering
        game games soccer football basketball tennis golf concert hobby learn learning study
        studying practice practicing workshop garden gardening photography write writing blog
        dance dancing sing singing climbing cycling bike biking ski skiing surf surfing fishing
        knitting pottery chess started joined training train""".split()
    ),
    "personal_profile": frozenset(
        """name named years old born live lives living moved move moving relocated from work works
        working job engineer teacher student nurse developer designer doctor lawyer manager
        graduate graduated degree university college nationality hometown city apartment house
        birthday age occupation profession retired gender pronouns career company employer
        transgender citizen grew raised""".split()
    ),
}
ASPECT_PRIORITY = ("health", "social_relationship", "personal_profile", "preference", "activity")

REQUEST_START = re.compile(
    r"^(?:please\s+)?(?:can you|could you|would you|will you|book|find|recommend|suggest|tell me|give me|"
    r"show me|help me|remind me|search|look up|order|schedule|send|write|make|plan|set|call|get me|"
    r"(?:what|where|when|how|who|which|why)(?!\s+(?:I|I'm|I've|I'd|I was|my|we|we're|our)\b[^?]*$)|do you|"
    r"are you|is there|should i)\b",
    re.IGNORECASE,
)
AGENT_DIRECTIVE = re.compile(
    r"\b(?:from now on|in the future|always|never(?!\s+mind\b)|please don't|please do not|don't ever|i want you to|"
    r"i'd like you to|i would like you to|you should|call me|stop|(?:i'd|i would) rather you|"
    r"i (?:don't|do not) want you to)\b",
    re.IGNORECASE,
)
#: Someone else calls the speaker a name ("Everyone calls me Bobby", "My friends call me Tash"): no instruction.
BY_OTHERS = re.compile(
    r"\b(?:everyone|everybody|people|folks|friends|family|they|he|she|most people|(?:all )?(?:my|our) \w+(?: \w+)?)"
    r"\s+(?:usually\s+|always\s+|just\s+|all\s+|still\s+|often\s+)?calls?\s+me\b",
    re.IGNORECASE,
)
PLAN_CUES = re.compile(
    r"\b(?:i(?:'m| am) going to|i(?:'m| am) gonna|i will|i'll|i plan|i(?:'m| am) planning|planning to|"
    rf"i intend|i hope to|i want to|i'd like to|i would like to|next (?:{PERIODS})|"
    r"tomorrow|soon|this weekend)\b",
    re.IGNORECASE,
)
REFLECT_CUES = re.compile(
    r"\b(?:i think|i realized|i realised|i've learned|i learned|i have learned|looking back|"
    r"i've been thinking|i wonder|i believe|i've come to|taught me|made me realize)\b",
    re.IGNORECASE,
)
EXPRESS_CUES = re.compile(
    r"\b(?:i (?:really |truly |absolutely )?(?:love|hate|adore|enjoy)|i feel|i felt|"
    r"i(?:'m| am) (?:so |really |very )?(?:happy|sad|excited|thrilled|"
    r"worried|nervous|anxious|proud|upset|angry|stressed|tired|grateful|glad)|i enjoy|i adore|"
    r"i can't stand|i dislike)\b",
    re.IGNORECASE,
)
HEDGES = re.compile(
    r"\b(?:maybe|might|perhaps|probably|i guess|i suppose|not sure|kind of|sort of|possibly|"
    r"i think|i believe|seems?|idk|someday|some day|at some point|we'll see|haven't decided|not decided|"
    r"who knows|thinking about|considering|i wonder)\b",
    re.IGNORECASE,
)
TRANSIENT = re.compile(
    r"\b(?:today|tonight|right now|rn|atm|this morning|this afternoon|this evening|at the moment|for now|"
    r"just now|currently feeling|at this moment|this week|on this shift|this shift|on a train|"
    r"on the train|on the bus|stuck in|waiting for|out of my mind|what a week)\b",
    re.IGNORECASE,
)
AMBIGUOUS_OBJECT = re.compile(r"\b(?:it|that|this|those|these|there|them|he|she|they|him|her)\b[.!?]?$", re.I)
CHANGE_CUES = re.compile(
    r"\b(?:now|anymore|any more|no longer|moved|switched|changed|instead|these days|used to|"
    r"not anymore|recently|just|finally|new|quit|stopped|started|specifically|only|actually|mostly|"
    r"in particular|more precisely|to be (?:more )?(?:specific|precise)|i meant|correction)\b",
    re.IGNORECASE,
)
POSITIVE = frozenset(
    """love loves loved like likes enjoy enjoys enjoyed happy excited thrilled great glad proud
    favorite favourite adore wonderful amazing fun grateful awesome fantastic beautiful""".split()
)
NEGATIVE = frozenset(
    """hate hates hated dislike dislikes sad worried angry upset stressed tired anxious annoyed
    terrible awful nervous scared afraid frustrated lonely bored sick hurt pain difficult
    hard rough bad""".split()
)
_NEGATION = frozenset({"not", "don't", "doesn't", "didn't", "never", "no", "can't", "isn't", "wasn't"})

#: Confidence rubric (AMU §3.2: explicitness, stability, ambiguity), multiplied:
#: a hedged statement keeps 0.6, a transient one 0.4, an ambiguous one 0.7.
CONFIDENCE_RUBRIC: dict[str, float] = {"hedged": 0.6, "transient": 0.4, "ambiguous": 0.7}


def change_cue(text: str) -> bool:
    """Whether a statement signals a changed state ("now", "no longer", "moved" …).

    Example:
        >>> change_cue("The user no longer eats meat.")
        True
    """
    return bool(CHANGE_CUES.search(text))


@dataclass
class SentenceFacts:
    """What the rules read off one sentence.

    Example:
        >>> analyze_sentence("I'm vegan.").aspect
        'health'
    """

    sentence: str
    personal: bool
    aspect: str
    intent: str
    summary: str
    entities: list[str]
    sentiment: str
    confidence: float
    agent_directed: bool


def _aspect(tokens: list[str], slot: tuple[str, str] | None) -> str:
    if slot is not None:
        key = slot[0]
        if "." in key or key in ("relationship_status", "pet"):
            return "social_relationship"  # a fact about someone in the user's life
        if key in ("diet", "allergy"):
            return "health"
        if key == "relationship_status":
            return "social_relationship"
        if key.startswith(("preference:", "favorite_")):
            return "preference"
        return "personal_profile"
    token_set = set(tokens)
    for aspect in ASPECT_PRIORITY:
        if token_set & ASPECT_LEXICON[aspect]:
            return aspect
    return "other"


def _sentiment(tokens: list[str]) -> str:
    score = 0
    for i, t in enumerate(tokens):
        polarity = 1 if t in POSITIVE else -1 if t in NEGATIVE else 0
        if polarity and any(x in _NEGATION for x in tokens[max(0, i - 3) : i]):
            polarity = -polarity
        score += polarity
    return "positive" if score > 0 else "negative" if score < 0 else "neutral"


_PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b((?:[A-Z][a-z]+|[A-Z]{2,})(?:\s+(?:[A-Z][a-z]+|[A-Z]{2,}))*)")
_COMMON = frozenset(
    """about after again because before being could every really should there these thing things
    think those today tomorrow yesterday would which while where their other going always never
    something anything everything someone little great please""".split()
)
_ENTITY_STOP = frozenset(
    {
        "I",
        "I'm",
        "I've",
        "I'd",
        "I'll",
        "The",
        "User",
        "Assistant",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    }
)


_IMPLICIT_I = re.compile(
    r"^(?:moved|quit|started|got|finally got|just got|just moved|just started|switched|joined|adopted|left|"
    r"went|began|stopped|love|hate|live|work)\s+(?:to|a|an|my|the|at|in|as|from|keto|smoking|drinking|[A-Z])",
)
_IMPLICIT_IM = re.compile(r"^(?:living|working|based|studying)\s+(?:in|at|as)\b")
_LEAD_VOCATIVE = re.compile(r"^(?:(?:wow|oh|hey|yeah|thanks|thank you|aw+|omg)[\s,!]*)*[A-Z][a-z]+[,!]\s+")
_LEAD_NAME = re.compile(r"^([A-Z][a-z]+)(?=\s+and\s+(?:I|my|me)\b|'s\b|,\s+(?:my|our)\b|\s+here\b)")


def _entities(sentence: str, slot: tuple[str, str] | None, tokens: list[str]) -> list[str]:
    found: list[str] = []
    lead = _LEAD_NAME.match(sentence)
    if lead:
        found.append(lead.group(1))
    for m in _PROPER.finditer(sentence):
        ent = m.group(1)
        if ent not in _ENTITY_STOP and ent not in found:
            found.append(ent)
    if (
        slot is not None
        and not slot[0].startswith("preference:")
        and slot[1]
        and slot[1] not in (e.lower() for e in found)
    ):
        found.append(slot[1])
    elif slot is not None and slot[0].startswith("preference:"):
        obj = slot[0].split(":", 1)[1]
        if obj and obj not in (e.lower() for e in found):
            found.append(obj)
    if not found:
        lexical = [t for t in tokens if len(t) >= 3 and any(t in lex for lex in ASPECT_LEXICON.values())]
        content = [t for t in tokens if len(t) > 4 and t not in _COMMON and t not in lexical and "'" not in t]
        found.extend(dict.fromkeys((lexical + content)[:3]))
    if not found:  # "My exam is tomorrow": the longest plain word anchors it
        plain = [t for t in tokens if len(t) >= 3 and t not in _COMMON and "'" not in t and t not in _PLAIN_STOP]
        found.extend(sorted(plain, key=len, reverse=True)[:1])
    return found[:6]


_PLAIN_STOP = frozenset(
    """the and but you your are was were has have had for not with this that from they them their our ours
    his her she him its what who whom how why when will would can could should may might must also just
    very much many some any all too""".split()
)


_TAGS = re.compile(
    r"(?:,?\s*\b(?:btw|by the way|lol|lmao|haha+|tbh|tbf|just so you know|just saying|did i mention|"
    r"in case you forgot|in case it comes up|fight me|if that matters[^,.!?]*|remember|you know|for context|"
    r"for the record|just a reminder|as i said)\b[?!.,]*)+",
    re.IGNORECASE,
)
_HABIT = re.compile(
    r"\b(?:every (?:day|week|weekend|morning|evening|night|month|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|on (?:weekends|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|"
    r"\d+x a week|(?:once|twice|\w+ times) a (?:week|month)|weekly|daily|since i was|for years|since \d{4}|"
    r"since (?:january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"always|usually|never|normally|typically)\b",
    re.IGNORECASE,
)
_TRANSIENT_ING = re.compile(
    r"\b(?:i'm|i am)\s+(?:just\s+|currently\s+|still\s+)?(?:sitting|waiting|standing|lying|driving|walking|"
    r"heading|commuting|rambling|typing|procrastinating|chilling|relaxing|hanging out|packing|stuck|"
    r"running late|on my way)\b",
    re.IGNORECASE,
)
_EPISODE = re.compile(
    r"\b(?:yesterday|last (?:night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|summer|winter|spring|fall)|(?:a few|two|three|\d+) (?:days|weeks|months|years) ago|the other day|"
    r"next (?:week|weekend|month|year|summer)|recently|this past)\b",
    re.IGNORECASE,
)
_IRREGULAR_PAST = (
    r"went|made|took|got|saw|met|began|bought|found|won|wrote|ran|gave|had|did|built|read|drew|sold|broke|lost|"
    r"left|drove|flew|threw|quit|spent|paid|hurt|fell|sent|sang|swam|ate|drank|wore|chose|woke|held|heard|kept|"
    r"slept|taught|caught|brought|came|became|grew|rode|shot|stole|told|turned|passed"
)
_PAST_VERB = re.compile(
    r"\b(?:i|we)\s+(?:just\s+|finally\s+|also\s+|recently\s+)?(?:\w+ed|" + _IRREGULAR_PAST + r"|joined|started|"
    r"tried|painted|visited|learned|adopted|finished|signed|attended|participated|organized|hosted|launched|"
    r"released|published)\b",
    re.IGNORECASE,
)
#: Someone in the speaker's life did something ("My mom visited us this week"): an event, not a passing state.
_OTHERS_PAST = re.compile(
    r"^(?:my|our)\s+(?:[a-z'-]+\s+){1,3}?(?:just\s+|finally\s+|also\s+|recently\s+)?(?:\w+ed|"
    + _IRREGULAR_PAST
    + r")\b",
    re.IGNORECASE,
)
_CHAT_REPLY = re.compile(
    r"^(?:i (?:really |just |so )?(?:love|adore|appreciate|miss|thank) (?:you|u|ya)\b(?!r)|you're the best|"
    r"i agree|i'm sorry|i am sorry|i'm sure|i can't wait|i cant wait|i'm glad|i hope|i bet|i know what you mean|"
    r"i understand|let me know|i appreciate|i'm happy for you|i'm so happy for you|i'm proud of you|"
    r"i'm excited for you|i love that|i love it|i'd love to see|i totally agree|i feel you|i see|i can't believe|"
    r"i cannot believe|i'm not sure|i am not sure|i think so|i don't think so|i hope so|i guess so|i know,? right|"
    r"don't (?:even )?get me started)\b|"
    r"^(?:i can't remember|i don't remember|i don't mind|i don't care|i don't know|i have no idea|i forgot)\b"
    r"(?:\s+(?:either way|about (?:it|that)|that|it|this|what to say|what to do|yet|really|anymore|honestly))?"
    r"[\s,]*(?:lol|haha|tbh)?[\s.!?]*$|"
    r"^(?:i love this|i like it|i like that|i like this)\b(?!\s+(?:when|because|how|to)\b)|"
    r"^(?:i\s+)?(?:gotta|got to|have to|need to|must)\s+(?:run|go|dash|head out|head off)\b[^.!?]*[.!?]*$|"
    # "I've been good, busy with work": how the speaker is, in answer to "How have you been?"
    r"^(?:i've|i have|i'm|i am)\s+(?:been\s+)?(?:doing\s+)?(?:really\s+|pretty\s+|so\s+|very\s+)?(?:good|great|fine|"
    r"okay|ok|alright|all right|well|better|not bad|so-so|hanging in there)\b(?!\s+(?:at|with|in|as|for|to|about)\b)"
    r"(?![^.!?]*\b(?:at|in|as)\s+[A-Z])"
    r"[^.!?]*[.!?]*$",
    re.IGNORECASE,
)


_POLITE = r"(?:(?:please|pls|and|also|oh|ok|okay|so|btw|hey|actually|one more thing)[\s,]+)*"
_ASK = r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|i want you to\s+|i need you to\s+|i'd like you to\s+)?"
#: "Please remember that …", "Remember: …", "Note that …", "Just so you know, …": the statement after it is the fact.
_REMEMBER = re.compile(
    rf"^{_POLITE}{_ASK}(?:remember|note|make a note|take a note|take note|note down|write down|keep in mind|"
    r"bear in mind|don't forget|do not forget|never forget|just so you know|for the record|fyi|"
    r"for your information|for future reference|for context|you should know|i want you to know|"
    r"(?:just\s+)?(?:a\s+)?(?:quick\s+|friendly\s+)?reminder|"
    r"i'd like you to know|save|store)"
    r"(?:\s+(?:this|that|of this|the fact|for me|for later|for the future|in the future|in future))*"
    r"(?:\s*[:,;—–-]+\s*|\s+that\s+|\s+(?=(?:I|I'm|I've|I'd|my|My|we|We|our|Our|me)\b))",
    re.IGNORECASE,
)
#: "Forget that I …", "Don't remember my address", "Delete what you know about …": a request, never a fact.
_FORGET = re.compile(
    rf"^{_POLITE}{_ASK}(?:forget|unlearn|"
    r"(?:don't|do not|dont|never|not|stop|no need to|i (?:don't|do not) want you to|i'd rather you (?:didn't|not)|"
    r"i would rather you (?:didn't|not))\s+(?:remember|remembering|store|storing|save|saving|keep|"
    r"keeping|record|recording|note|noting|write down|memori[sz]e|memori[sz]ing)|"
    r"(?:delete|erase|remove|wipe|clear|drop)(?=[^.!?]*\b(?:my|me|i|i'm|i've|what you know|what i said|"
    r"memory|memories|that)\b))"
    r"(?!\s+(?:it|about it|that|this)\s*(?:[,.!?;]|$))(?!\s+(?:to|the time)\b)\b[\s,:]*",
    re.IGNORECASE,
)


def memory_request(sentence: str) -> tuple[str, str]:
    """A request about the memory itself: ``("forget", what)``, ``("remember", the statement)`` or ``("", sentence)``.

    A forget request is never a fact (carrying it out is the memory's ``forget``); a remember
    request's statement is the fact, without the request ("Please remember that I'm vegan" → "I'm
    vegan"). "Forget it" and "Don't forget that …" are neither a forget request.

    Example:
        >>> memory_request("Please remember that I'm allergic to peanuts.")
        ('remember', "I'm allergic to peanuts.")
        >>> memory_request("Remember: my flight is on Friday.")
        ('remember', 'My flight is on Friday.')
        >>> memory_request("Forget that I told you about my divorce.")
        ('forget', 'that I told you about my divorce.')
        >>> memory_request("Forget it, never mind."), memory_request("Remember when we met?")
        (('', 'Forget it, never mind.'), ('', 'Remember when we met?'))
    """
    text = informal_apostrophes(" ".join((sentence or "").replace("’", "'").split()))
    forget = _FORGET.match(text)
    if forget and text[forget.end() :].strip(" .!?"):
        return "forget", text[forget.end() :]
    remember = _REMEMBER.match(text)
    if remember:
        rest = text[remember.end() :].strip()
        if rest.endswith("?") and re.search(r"(?i:\b(?:can|could|would|will) you\b)", remember.group(0)):
            rest = rest.rstrip("?").rstrip() + "."  # "Can you remember that my gym closes at 9?"
        if len(words(rest)) >= 2:
            return "remember", rest[0].upper() + rest[1:]
    return "", sentence


#: A statement of what the speaker is, has or takes ("I'm a night owl", "I don't have a car", "I take my tea black").
_STATE = re.compile(
    r"^(?:I'm|I am|I've always been|I have|I've got|I don't have|I do not have|I have no|I own|I don't own|"
    r"I take|I can't|I cannot|I can|I've never|I have never|I never|we're|we are|we have|we've got|we don't have|"
    r"we do not have|we have no|we own|we don't own|we can't|we cannot|we've never|we never)\b",
    re.IGNORECASE,
)
_POSSESSIVE_START = re.compile(r"^(?:my|our)\s+\w+", re.IGNORECASE)
#: The speaker's own thing anywhere in a dated sentence ("Tomorrow is my last day at the bakery").
_POSSESSIVE_ANY = re.compile(r"\b(?:my|our)\s+\w+", re.IGNORECASE)
#: A date or time written out: a month name, a year, a clock time.
_DATE = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"(?:19|20)\d\d)\b|\b\d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d\d\b"
)
#: A state of the moment: a sentence with it is passing even when its verb is in the past ("I was tired today").
_PASSING_STATE = re.compile(
    r"\b(?:right now|rn|atm|at the moment|for now|just now|currently feeling|at this moment|stuck in|waiting for|"
    r"out of my mind|what a week|tired|exhausted|sleepy|hungry|bored|sick|busy)\b",
    re.IGNORECASE,
)


#: A time of today said first ("This morning my wife ran …"): the event after it is dated, not passing.
_LEAD_DAY = re.compile(
    r"^(?:this (?:morning|afternoon|evening)|today|tonight|earlier today|just now|yesterday|last night)[\s,]+", re.I
)
#: A state said as the current one, at the end ("I drive an electric car now", "… these days").
_CURRENT_STATE = re.compile(r"\b(?:now|these days|nowadays)\s*[.!]*$", re.IGNORECASE)
#: Leaving a named place or employer ("I left Amazon last month").
_LEFT_NAMED = re.compile(r"\b(?:left|quit|leaving|am leaving|'m leaving)\s+(?:the\s+)?[A-Z][a-z]")


def analyze_sentence(sentence: str) -> SentenceFacts:
    """Read the AMU fields off one sentence of the user.

    Args:
        sentence: one sentence.

    Returns:
        The sentence's fields; ``personal`` is false when it states nothing
        about the user.

    Example:
        >>> f = analyze_sentence("Book a vegan place for Friday.")
        >>> f.intent, f.personal
        ('request', False)
    """
    facts = _analyzed(sentence)  # a page's analysis reads a sentence several times: it is read once
    return replace(facts, entities=list(facts.entities))  # the caller's own copy (callers may change it)


@lru_cache(maxsize=4096)
def _analyzed(sentence: str) -> SentenceFacts:
    """:func:`analyze_sentence`, remembered by sentence (a pure function of it); callers get copies."""
    clean, transient_ing = _cleaned(sentence)
    tokens = words(clean)
    token_set = set(tokens)
    first_person = bool(token_set & FIRST_PERSON)
    group = bool(token_set & GROUP_PERSON)
    is_question = clean.endswith("?")
    directive = AGENT_DIRECTIVE.search(BY_OTHERS.sub(" ", clean))  # "My friends call me Tash" asks nothing
    agent_directed = directive is not None and (
        "you" in token_set or "me" in token_set or directive.start() == 0 or clean.lower().startswith("please")
    )
    without_interjection = _INTERJECTION.sub("", clean)
    intent = _intent(clean, without_interjection, token_set, first_person or group, is_question)
    third = bool(re.match(r"^(?:the user|user)\b", clean, re.IGNORECASE)) and not is_question
    if third:
        # already a third-person fact ("The user is vegan."): keep it as it is
        first_person = True
        intent = "inform" if intent in ("other", "request") else intent
    summary = _summary(clean, without_interjection, third, agent_directed, first_person or group)
    personal, intent = _personal(clean, first_person, group, is_question, intent, agent_directed)
    slot = slot_of(summary) if summary else None  # read once: aspect and entities both use it
    aspect = _read_aspect(clean, tokens, token_set, slot, summary, agent_directed, personal, intent)
    return SentenceFacts(
        sentence=clean,
        personal=personal,
        aspect=aspect,
        intent=intent,
        summary=summary,
        entities=_entities(clean, slot, tokens) if summary else [],
        sentiment=_sentiment(tokens),
        confidence=_confidence(sentence, clean, intent, summary, transient_ing),
        agent_directed=agent_directed,
    )


def _cleaned(sentence: str) -> tuple[str, bool]:
    """The sentence as read (apostrophes, an implied "I", tags dropped) and whether it says a passing "-ing"."""
    clean = informal_apostrophes(sentence.replace("’", "'").strip())  # "i dont eat meat"
    bare = _INTERJECTION.sub("", clean)
    if _IMPLICIT_I.match(bare):
        clean = "I " + bare  # "moved to Ljubljana last month!" – chat drops the subject
    elif _IMPLICIT_IM.match(bare):
        clean = "I'm " + bare
    transient_ing = bool(_TRANSIENT_ING.search(clean))
    stripped = _TAGS.sub("", clean).strip(" ,")
    if stripped and len(stripped) < len(clean):
        clean = stripped if stripped[-1] in ".!?" else stripped + "."
    return clean, transient_ing


def _intent(clean: str, without_interjection: str, token_set: set[str], speaker: bool, is_question: bool) -> str:
    """The sentence's intent: a request, a plan, a reflection, an expression, information or other."""
    if REQUEST_START.match(without_interjection) or (is_question and "you" in token_set):
        intent = "request"
    elif is_question:
        intent = "other"
    elif PLAN_CUES.search(clean):
        intent = "plan"
    elif REFLECT_CUES.search(clean):
        intent = "reflect"
    elif EXPRESS_CUES.search(clean):
        intent = "express"
    elif speaker:
        intent = "inform"
    else:
        intent = "other"
    return intent


def _summary(clean: str, without_interjection: str, third: bool, agent_directed: bool, speaker: bool) -> str:
    """The third-person statement of the sentence (a trait for the assistant, canonical for a slot), or ""."""
    if third:
        summary = clean[0].upper() + clean[1:].rstrip(" !.") + "."
    elif agent_directed:
        summary = agent_summary(clean)
    elif speaker:
        summary = third_person(clean)
    else:
        summary = ""
    if summary and not agent_directed and not REQUEST_START.match(without_interjection):
        summary = canonical_summary(summary)
    return summary


def _personal(
    clean: str, first_person: bool, group: bool, is_question: bool, intent: str, agent_directed: bool
) -> tuple[bool, str]:
    """``(personal, intent)``: whether the sentence says something about the speaker; an instruction is a request."""
    personal = (first_person or (group and not is_question)) and not (is_question and intent != "request")
    if _CHAT_REPLY.match(_INTERJECTION.sub("", _LEAD_VOCATIVE.sub("", clean)).strip()):
        personal = False  # "I'm sure she'll love it": a reply, not a fact about the speaker
    if intent == "request" and not agent_directed:
        # a request is personal only when it also states something about the user
        personal = first_person and bool(
            re.search(r"\bi(?:'m| am| have|'ve| live| work| love| like| hate| prefer)\b", clean, re.I)
        )
    if agent_directed:
        personal = True
        intent = "request"
    return personal, intent


def _read_aspect(
    clean: str,
    tokens: list[str],
    token_set: set[str],
    slot: tuple[str, str] | None,
    summary: str,
    agent_directed: bool,
    personal: bool,
    intent: str,
) -> str:
    """The sentence's aspect: its words' and slot's, else what a first-person statement is about."""
    aspect = _aspect(tokens, slot) if summary else "other"
    if agent_directed and aspect == "other":
        aspect = "preference"
    if aspect in ("other", "activity") and summary and _LEFT_NAMED.search(clean):
        aspect = "personal_profile"  # "I left Amazon", "We left Boston": a job or a home left
    if aspect == "other" and personal and intent in ("inform", "plan", "reflect", "express"):
        # a first-person statement about a concrete thing: treat as an activity
        subject_i = bool({"i", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've", "we'll"} & token_set)
        episodic = bool(
            _PAST_VERB.search(clean)
            or _EPISODE.search(clean)
            or has_relative_time(clean)
            or _DATE.search(clean)
            or _CURRENT_STATE.search(clean)  # "I drive an electric car now": the state as it is now
        )
        if subject_i and (_PROPER.search(clean) or _HABIT.search(clean) or episodic):
            aspect = "preference" if token_set & {"want", "wants", "like", "prefer", "need"} else "activity"
        elif _STATE.match(clean) or (episodic and _POSSESSIVE_ANY.search(clean)):
            # what the speaker is or has ("I'm left-handed", "I don't have a car", "My exam is tomorrow")
            aspect = "personal_profile"
        elif intent == "inform" and len([t for t in tokens if len(t) > 3 and t not in _COMMON]) >= 3:
            if subject_i:
                aspect = "activity"  # what the speaker does ("I grow tomatoes and basil on my balcony")
            elif _POSSESSIVE_START.match(clean):
                aspect = "personal_profile"  # the speaker's life ("My mother-in-law visits every Christmas")
    return aspect


def _confidence(sentence: str, clean: str, intent: str, summary: str, transient_ing: bool) -> float:
    """The reading's confidence: :data:`CONFIDENCE_RUBRIC` applied for hedges, a passing state, an unclear object."""
    confidence = 1.0
    if HEDGES.search(clean):
        confidence *= CONFIDENCE_RUBRIC["hedged"]
    if intent == "plan" and HEDGES.search(clean):
        confidence *= CONFIDENCE_RUBRIC["hedged"]  # a doubtful plan is twice uncertain
    hedges = {m.group(0).lower() for m in HEDGES.finditer(clean)}
    confidence *= CONFIDENCE_RUBRIC["hedged"] ** max(0, min(3, len(hedges)) - 1)
    dated_event = (
        bool(_PAST_VERB.search(clean) or _OTHERS_PAST.match(_LEAD_DAY.sub("", clean)))
        and not transient_ing
        and not _PASSING_STATE.search(clean)
    )
    if (TRANSIENT.search(sentence) or transient_ing) and not _HABIT.search(clean) and not dated_event:
        confidence *= CONFIDENCE_RUBRIC["transient"]
    if summary and AMBIGUOUS_OBJECT.search(summary.rstrip(".")):
        confidence *= CONFIDENCE_RUBRIC["ambiguous"]
    return round(confidence, 4)


_QUERY_CUES: dict[str, re.Pattern[str]] = {
    "personal_profile": re.compile(
        r"\b(?:where (?:do|does|did) \w+ (?:live|work|grow up|come from)|what (?:do|does) \w+ do for a living|"
        r"how old|birthday|name|job|career|work|live|lives|city|hometown|from)\b",
        re.IGNORECASE,
    ),
    "preference": re.compile(r"\b(?:favou?rite|like|likes|love|loves|prefer|prefers|enjoy|enjoys|hate|hates)\b", re.I),
    "activity": re.compile(r"\b(?:hobby|hobbies|for fun|free time|weekend|sport|sports|play|plays)\b", re.I),
}


def query_aspects(query: str) -> frozenset[str]:
    """The AMU aspects a question is about, read from its words (no model call).

    Used by retrieval as a structured pre-filter before vector search; an
    empty set means "no idea", and retrieval searches every fact.

    Args:
        query: the question or message.

    Returns:
        The aspects whose lexicon or question cues the query hits.

    Example:
        >>> sorted(query_aspects("Where do I live?"))
        ['personal_profile']
        >>> sorted(query_aspects("Is she allergic to anything?"))
        ['health']
        >>> query_aspects("What did we talk about?")
        frozenset()
    """
    tokens = set(words(query))
    found = {aspect for aspect in ASPECT_PRIORITY if tokens & ASPECT_LEXICON[aspect] - _GENERIC_QUERY_WORDS}
    found |= {aspect for aspect, cue in _QUERY_CUES.items() if cue.search(query)}
    return frozenset(found)


_GENERIC_QUERY_WORDS = frozenset({"from", "read", "play", "run", "like", "into", "team", "move", "love", "class"})
