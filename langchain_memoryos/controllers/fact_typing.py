"""Whether a side's sentence is a fact, and how good a one (:mod:`.facts`, steps 5, 6).

Chatter never becomes a fact (:func:`is_chatter`: a question, a feeling, a chat reply, the second
person only, too few content words); a sentence that may is scored for the write-gate
(:func:`fact_score`); :func:`named_subject` reads the named person a first-person sentence is about.

Example:
    >>> is_chatter("That's so cool!"), fact_score("I'm allergic to peanuts.") > 0.5, named_subject("My son Eli is 4.")
    (True, True, 'Eli')
"""

from __future__ import annotations

import re

from langchain_memoryos.controllers.dates import has_relative_time, relative_time
from langchain_memoryos.controllers.lexicon import PARTNERS, words
from langchain_memoryos.controllers.rules import (
    _CHAT_REPLY,
    ASPECT_LEXICON,
    GROUP_PERSON,
    SentenceFacts,
    analyze_sentence,
)
from langchain_memoryos.controllers.slots import slot_of
from langchain_memoryos.index.lexical import STOPWORDS

__all__ = ["fact_score", "is_chatter", "named_subject"]


_SECOND = frozenset({"you", "your", "you're", "you've", "yours", "yourself", "u", "ur"})
_FIRST = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself", "im", "ive"})
_EVALUATIVE = frozenset(
    """great awesome amazing cool nice wonderful fantastic beautiful incredible lovely sweet fun
    glad happy excited proud grateful thankful thanks thank sorry sounds looks seem seems feel feels felt
    good bad sad tough hard wow love loved really so very much totally definitely absolutely super""".split()
)
_LEXICON = frozenset().union(*ASPECT_LEXICON.values())
_PROPER_MID = re.compile(r"(?<=\s)(?:[A-Z][a-z]+|[A-Z]{2,})")
_NUMBER = re.compile(r"\b\d+\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|first|second|third)\b", re.I)
_PRONOUNS_3 = re.compile(r"\b(?:it|this|that|these|those|they|them|their|he|she|him|her|his)\b", re.I)
_AFFECT = re.compile(
    r"\b(?:feel|feels|felt|feeling|happy|glad|excited|thrilled|grateful|thankful|proud|sad|upset|stressed|"
    r"nervous|anxious|blessed|lucky|love it|loved it|amazing|awesome|great|wonderful|fun|special|means a lot|"
    r"inspiring|inspired|rewarding|fulfilling|beautiful|incredible|fantastic|cool|sweet|tired|exhausted|bored|lonely|"
    r"frustrated|overwhelmed|annoyed|worried|scared|afraid|miserable|hilarious|relieved|heartbroken|devastated|"
    r"stoked|delighted|feeling down)\b",
    re.I,
)
_RELATIONS = PARTNERS | frozenset(
    """friend bestie buddy mom mum mother dad father sister brother son daughter cousin aunt uncle grandma
    grandmother grandpa grandfather granddaughter grandson niece nephew colleague coworker co-worker boss
    neighbor neighbour roommate flatmate housemate mentor teacher coach stepmom stepdad stepson stepdaughter
    dog cat puppy kitten ex ex-wife ex-husband ex-boyfriend ex-girlfriend ex-partner landlord landlady classmate
    teammate bandmate godmother godfather goddaughter godson stepbrother stepsister grandparents twin therapist
    doctor dentist tutor nanny babysitter mother-in-law father-in-law sister-in-law brother-in-law""".split()
)
_REL = "|".join(sorted(_RELATIONS, key=len, reverse=True))
_REL_ADJ = (
    r"(?:(?:best|old|older|younger|little|big|baby|new|dear|twin|late|oldest|youngest|closest|eldest|elder|other|"
    r"second|third|middle|favou?rite|only|half|step)\s+)*"
)
_NAME = r"((?:(?:Mr|Mrs|Ms|Dr|Prof)\.?\s+)?[A-Z][a-z]+(?:-[A-Z][a-z]+)?)"
#: "My sister Ana lives in Rome", "My mom, Helen, works …", "Helen, my mom, works …": the named person is the subject.
_NAMED_SUBJECT = (
    re.compile(rf"^(?:[Mm]y|[Oo]ur)\s+{_REL_ADJ}(?:{_REL})\s*,?\s+{_NAME}\b(?!['’]s)(?:\s*,)?\s+(?!and\b)[a-z]"),
    re.compile(rf"^{_NAME},\s+(?:my|our)\s+{_REL_ADJ}(?:{_REL}),\s+[a-z]"),
)


#: A time said before the subject ("On Monday, …", "In 2019 …", "Back in May …"; a relative time: see below).
_LEAD_WRITTEN_TIME = re.compile(
    r"^(?:(?i:(?:back\s+)?(?:on|in|at|during|since|over|by))\s+(?:the\s+)?(?:(?:\d{1,2}(?:st|nd|rd|th)?\s+)?[A-Z][a-z]+"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:\s+\d{4})?|\d{4})|(?i:recently|lately|the other day|earlier|finally|just))"
    r"\s*,?\s+",
)


def _without_lead_time(sentence: str) -> str:
    """A sentence without the time said before its subject ("Three days ago my son Eli …" → "my son Eli …")."""
    text = sentence.strip()
    lead = relative_time(text)
    if lead and text.lower().startswith(lead.lower()):
        text = text[len(lead) :].lstrip(" ,")
    else:
        text = _LEAD_WRITTEN_TIME.sub("", text)
    return text[:1].upper() + text[1:]


def named_subject(sentence: str) -> str:
    """The named person a first-person sentence is about ("" when it is about the speaker).

    A time said before the subject is no part of it ("Yesterday my son Eli …" is about Eli).

    Example:
        >>> named_subject("My sister Ana lives in Rome."), named_subject("My mom, Helen, works as a nurse.")
        ('Ana', 'Helen')
        >>> named_subject("I visited my sister Ana."), named_subject("My sister Ana's dog is sick.")
        ('', '')
        >>> named_subject("Three days ago my son Eli lost a tooth."), named_subject("On Monday, our aunt Jo moved.")
        ('Eli', 'Jo')
    """
    for pattern in _NAMED_SUBJECT:
        m = pattern.match(sentence.strip()) or pattern.match(_without_lead_time(sentence))
        if m:
            return m.group(1)
    return ""


def _content_words(text: str) -> list[str]:
    return [
        t
        for t in words(text)
        if t not in STOPWORDS
        and t not in _EVALUATIVE
        and t not in _FIRST
        and t not in _SECOND
        and t not in GROUP_PERSON
        and len(t) > 2
    ]


#: "I'm (not) a night owl", "I'm left-handed": a self-description (a feeling is caught before).
_SELF_DESCRIPTION = re.compile(
    r"^(?:I'm|I am|I've always been|I have always been|I don't have|I do not have|I have no|I have|I own|"
    r"I don't own|I can't|I cannot|I've never|I have never|I haven't|I have not|we're|we are|we don't have|"
    r"we do not have|we have no|"
    r"we have|we own|we don't own)\s+(?:not\s+|never\s+|always\s+)?"
    r"(?:((?:an?|no|any)\s+(?!(?:question|idea|clue|suggestion|doubt|feeling|minute|moment|second|sec|"
    r"point|problem|favou?r)s?\b)[\w -]+|[a-z]+-[a-z]+|(?:swim|drive|cook|ride|read|sing|dance|ski|skate|"
    r"speak \w+|eat \w+|drink \w+)|been to [\w ]+)|[a-z]+)\s*[.!]?$",
    re.IGNORECASE,
)


#: A negated habit ("I've never smoked", "I don't drink", "We never fly"): a fact even when short.
_NEGATED_HABIT = re.compile(
    r"^(?:I|we)(?:'ve|\s+have)?\s+(?:don't|do not|never|can't|cannot|no longer)\s+(?:ever\s+)?([a-z]+)\b",
    re.IGNORECASE,
)
#: What a negated verb says of a conversation, not of a habit ("I don't know", "I can't wait").
_NOT_HABITS = frozenset(
    """know care mind remember recall think believe understand wait say tell see get hear heard thought imagine
    agree mean want like need feel do go have be been see seen worry blame stop help expect even really""".split()
)


#: What the speaker is (a nationality, a faith, an orientation, a condition): "I'm Jewish", "I'm deaf".
_IDENTITY = frozenset(
    """american canadian mexican british english irish scottish welsh french german italian spanish portuguese
    dutch belgian swiss austrian swedish norwegian danish finnish polish russian ukrainian greek turkish chinese
    japanese korean indian pakistani australian brazilian argentinian nigerian kenyan egyptian israeli iranian
    vietnamese thai filipino christian catholic protestant jewish muslim hindu buddhist sikh mormon atheist agnostic
    religious spiritual gay lesbian bisexual bi straight queer trans transgender nonbinary non-binary asexual deaf
    blind colorblind colourblind autistic dyslexic epileptic disabled introvert introverted extrovert extroverted
    shy left-handed right-handed ambidextrous adopted pregnant retired unemployed single married divorced widowed
    engaged""".split()
)
#: A past event on something of the speaker's ("I sold my car", "We lost our dog"): a fact even when short.
_PAST_OWN = re.compile(
    r"^(?:I|we)\s+(?:just\s+|finally\s+|recently\s+|also\s+)?(?!(?:did|had|made|was|were|got|missed|loved|liked|"
    r"needed|wanted|used)\b)(?:[a-z]+ed|sold|broke|lost|bought|found|won|built|wrote|hurt|cut|shut|sold|gave|"
    r"left|drove|flew|threw|quit|spent|paid|fixed)\s+(?:my|our)\s+[a-z]",
    re.IGNORECASE,
)


#: A time written out: a clock time, a day and month, a year ("at 8 am", "on 3 July", "in 2021").
_WHEN = re.compile(
    r"\b\d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d\d\b|\b(?:19|20)\d\d\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December)\b|\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\s+\d{1,2}(?:st|nd|rd|th)?\b",
    re.IGNORECASE,
)


#: A sentence framed as a feeling ("I feel …", "It was so inspiring …") or a resolution ("I have to stay focused").
_FEELING_FRAME = re.compile(
    r"^(?:(?:I|we)\s+(?:feel|felt|am feeling|was feeling|were feeling)|(?:I'm|we're)\s+feeling|"
    r"(?:it|that|this)\s+(?:was|is|'s|has been|'s been)\s+(?:so\s+|really\s+|very\s+|pretty\s+|super\s+|such an?\s+)*"
    r"(?:inspiring|amazing|awesome|great|wonderful|fun|special|rewarding|fulfilling|beautiful|incredible|fantastic|"
    r"cool|sweet|stressful|tough|hard|exhausting|emotional|overwhelming|surreal|crazy|wild)|"
    r"(?:I|we)\s+(?:have to|need to|gotta|got to|must|should)\s+(?:stay|keep|be|remember|focus|try|believe))\b",
    re.IGNORECASE,
)


def _is_feeling(sentence: str) -> bool:
    """A feeling rather than a fact: an affect word and < 3 other content words, or a feeling's frame alone.

    A feeling's frame ("I feel so calm when I paint", "It was so inspiring") with no name, number or
    date in it is a feeling whatever else it says.
    """
    if _FEELING_FRAME.match(sentence) and not (
        _PROPER_MID.search(" " + sentence) or _NUMBER.search(sentence) or _WHEN.search(sentence)
    ):
        return True
    return bool(_AFFECT.search(sentence)) and len(_content_words(_AFFECT.sub(" ", sentence))) < 3


#: "That's my favourite song", "This is my jam": a reaction to something unnamed (a birthday or a day is dated).
_THAT_IS_MINE = re.compile(
    r"^(?:that|this|it)(?:'s| is| was)\s+(?:so\s+|totally\s+|literally\s+|definitely\s+)?(?:my|our)\s+"
    r"(?!(?:[\w-]+\s+){0,2}(?:birthday|anniversary|day|wedding)\b)(?:[\w-]+\s*){1,3}[.!]*$",
    re.IGNORECASE,
)


#: "That turned out way better than I expected", "It went really well": how something unnamed went.
_HOW_IT_WENT = re.compile(
    r"^(?:that|this|it|everything|things|all)\s+(?:turned out|went|worked out|came out|ended up|is going|was going)\s+"
    r"(?:(?:so|way|much|really|pretty|even|surprisingly|super|quite|very)\s+)*(?:better|worse|great|well|fine|good|badly|"
    r"perfect|perfectly|okay|ok|amazing|awful|terrible|smoothly)\b",
    re.IGNORECASE,
)


_SKILL = re.compile(
    r"^(?:I'm|I am|we're|we are)\s+(?:really\s+|pretty\s+|very\s+|quite\s+|not\s+|so\s+)*(?:good|great|bad|terrible|"
    r"awful|decent|hopeless|useless|amazing|rubbish)\s+at\s+[a-z]",
    re.IGNORECASE,
)


def is_chatter(sentence: str, facts: SentenceFacts | None = None, *, asked: bool = False) -> bool:
    """Whether a (first-person) sentence is small talk that never becomes a fact.

    A question, a feeling, a chat reply, the second person only, or fewer than 3
    content words without a property slot ("I'm vegan" has one) unless two of
    them include an aspect word or a name ("I work at a bakery"). A statement the speaker
    ``asked`` to be remembered ("Don't forget that I'm colorblind") needs only one content word.

    Example:
        >>> [is_chatter(s) for s in ("That's so cool!", "Did you go?", "I'm vegan.", "I adopted a dog named Rex.")]
        [True, True, False, False]
    """
    facts = facts or analyze_sentence(sentence)
    tokens = set(words(sentence))
    if sentence.rstrip().endswith("?") or _CHAT_REPLY.match(sentence) or _is_feeling(sentence):
        return True
    if (_THAT_IS_MINE.match(sentence) or _HOW_IT_WENT.match(sentence)) and not (
        _PROPER_MID.search(sentence) or _NUMBER.search(sentence)
    ):
        return True  # "That's my favourite song!": what "that" is, the page alone does not say
    if tokens & _SECOND and not tokens & (_FIRST | GROUP_PERSON):
        return True
    content = _content_words(sentence)
    if len(content) >= 3 or (facts.summary and slot_of(facts.summary)) or (asked and content):
        return False
    if _SKILL.match(sentence):
        return False  # "I'm good at chess", "I'm terrible at maths": what the speaker can do
    if content and tokens & _LEXICON and re.search(r"\b\d{1,3}\b", sentence):
        return False  # "My kids are 4 and 7": a relative's age, a count
    described = _SELF_DESCRIPTION.match(sentence)
    if described and (described.group(1) or (content and tokens & (_LEXICON | _IDENTITY))):
        return False  # "I'm not a morning person", "I'm diabetic", "I don't have a car": what the speaker is
    # two content words make a fact when one is an aspect word, a name or a date ("I work at a bakery")
    anchored = (
        tokens & _LEXICON
        or _PROPER_MID.search(" " + sentence)
        or has_relative_time(sentence)
        or _WHEN.search(sentence)
        or _PAST_OWN.match(sentence)
    )
    if re.match(r"(?i)^(?:I|we)\s+(?:just\s+|finally\s+|have\s+|'ve\s+)?(?:quit|stopped|gave up)\s+[a-z]", sentence):
        return False  # "I quit badminton": an end of what the speaker did
    habit = _NEGATED_HABIT.match(sentence)
    if habit and habit.group(1).lower() not in _NOT_HABITS:
        return False  # "I've never smoked", "I don't drink": what the speaker does not do
    return len(content) < 2 or not anchored


def fact_score(
    sentence: str, facts: SentenceFacts | None = None, *, dangling: bool = False, asked: bool = False
) -> float:
    """The write-gate score of one sentence as a fact (no fitted constant).

    ``g · (0.5 + 0.5·min(1, 0.5·c/15 + 0.2·p/3 + 0.1·n + 0.2·l/3)) · (1 − 0.3·r/3)``, halved when the
    sentence opens on a dangling pronoun; ``g`` is the rule reading's confidence when the gate's
    fields pass (personal, an aspect, an intent that is no request) and it is ≥ 0.5, else 0 (as for
    chatter). ``c`` content words (≤ 15), ``p`` mid-sentence names (≤ 3), ``n`` a number or a date (a
    relative time too: "this morning" is a date once resolved), ``l``
    aspect words (≤ 3), ``r`` third-person pronouns (≤ 3).

    Example:
        >>> round(fact_score("I adopted a rescue dog named Rex in March 2023."), 3)
        0.8
        >>> fact_score("Thanks, that sounds great!"), fact_score("I think I might try yoga someday.")
        (0.0, 0.0)
    """
    facts = facts or analyze_sentence(sentence)
    ok = facts.personal and facts.aspect != "other" and facts.intent not in ("other", "request") and facts.entities
    g = facts.confidence if ok else 0.0
    head = sentence.split("; ")[0]  # a joined dangling follower ("; it was fun") does not make a fact chatter
    if g < 0.5 or is_chatter(head, facts if head == sentence else None, asked=asked):
        return 0.0
    tokens = set(words(sentence))
    content = (
        0.5 * min(len(_content_words(sentence)), 15) / 15
        + 0.2 * min(len(_PROPER_MID.findall(" " + sentence)), 3) / 3
        + 0.1 * float(bool(_NUMBER.search(sentence) or _WHEN.search(sentence) or has_relative_time(sentence)))
        + 0.2 * min(len(tokens & _LEXICON), 3) / 3
    )
    pronouns = min(len(_PRONOUNS_3.findall(sentence)), 3) / 3
    score = g * (0.5 + 0.5 * min(1.0, content)) * (1.0 - 0.3 * pronouns)
    return round(score * (0.5 if dangling else 1.0), 6)
