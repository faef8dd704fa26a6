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

from langchain_memoryos.controllers.dates import has_relative_time, relative_time, resolve_relative_time
from langchain_memoryos.controllers.lexicon import CALLED_NAME, PARTNERS, words
from langchain_memoryos.controllers.rewrite import informal_apostrophes, split_sentences, third_person
from langchain_memoryos.controllers.rules import (
    _CHAT_REPLY,
    ASPECT_LEXICON,
    BY_OTHERS,
    GROUP_PERSON,
    SentenceFacts,
    analyze_sentence,
    memory_request,
)
from langchain_memoryos.controllers.slots import CAR_MAKES, NOT_A_NAME_LEAD, as_the_user, slot_of
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

_PHOTO = re.compile(r"\s*\[shares (?:a photo|an image)[^\]]*\]\s*", re.I)
_LEAD_NOISE = re.compile(
    r"^(?:(?:hey|hi|hello|thanks|thank you|thanks a lot|thx|wow|woah|whoa|oh|ooh|yeah|yep|yes|yup|aw+|omg|ugh|"
    r"argh|meh|phew|whew|yikes|oof|dude|"
    r"congrats|congratulations|haha+|lol|so|well|ok|okay|sure|right|totally|great|cool|nice|awesome|ah|hmm+|"
    r"definitely|absolutely|exactly|indeed|true|good|sounds good|no way|gosh|dang|man|dude|hey there|"
    r"unfortunately|sadly|luckily|thankfully|fortunately|honestly|basically|never mind|nevermind|no worries|"
    r"correction|update|wait|scratch that|to be clear|actually|in fact|sorry|oops|whoops|my bad|my mistake|"
    r"my apologies|apologies|hold on|sorry about that|no wait|oh no)\b[\s,!.:;—-]*)+",
    re.I,
)
#: A discourse preamble before the statement ("Oh and I almost forgot,", "Did I tell you that", "I meant"):
#: it frames the fact and is dropped from it.
_PREAMBLE = re.compile(
    r"^(?:(?:and|also|plus|anyway|anyways|by the way|btw|guess what|fun fact|side note|on another note|"
    r"speaking of which|one more thing|next up|you won't believe it|you'll never guess what|long story short|"
    r"believe it or not|not gonna lie|to be honest|tbh|(?:small|quick|one|a|just a|minor) (?:correction|update|fix)|"
    r"(?:just a |quick |a quick )?heads up|quick update|small update|(?:a |just a )?quick note|that reminds me|"
    r"before I forget|I (?:almost|nearly) forgot|I forgot to (?:mention|tell you|say)(?: this)?|"
    r"I (?:should|must|have to|need to|wanted to|want to|meant to|forgot to) (?:mention|tell you|say|"
    r"let you know)(?: this)?(?=\s+that\b|\s*[,:—-]|\s+(?:I|I'm|I've|my|we|our)\b)|"
    r"did I (?:ever )?(?:tell you|mention)|not sure if I (?:told you|mentioned)(?: it| this)?"
    r"(?: but)?|I don't know if I (?:told you|mentioned)(?: it| this)?(?: but)?|what I meant (?:was|is)|"
    r"I meant(?: to say)?|I mean|I got that wrong|I got it wrong|I was wrong|I misspoke|I mixed (?:that|it) up|"
    r"let me correct (?:that|myself)|to correct myself|I said (?:that|it) wrong)\b(?:\s+that\b)?[\s,!.:;—-]*)+",
    re.I,
)
#: A preamble that tells the listener something to keep ("Just a heads up, …", "I forgot to mention that …"):
#: the statement after it is a fact the speaker chose to share, as after "Remember that …".
_TOLD = re.compile(
    r"^(?:(?:oh|and|also|so|ok|okay|btw|by the way)[\s,]+)*(?:(?:just a |quick |a quick )?heads up|"
    r"I (?:almost|nearly) forgot|before I forget|I forgot to (?:mention|tell you)|"
    r"I (?:should|must|have to|need to|wanted to|want to|meant to) (?:mention|tell you|let you know)|"
    r"did I (?:ever )?(?:tell you|mention)|not sure if I (?:told you|mentioned)|"
    r"I don't know if I (?:told you|mentioned))\b",
    re.I,
)
#: A preamble that asks ("Did I tell you …?", "Guess what, …!"): the statement after it is no question.
_ASKING_PREAMBLE = re.compile(r"^(?:did I (?:ever )?(?:tell you|mention)|guess what)\b", re.I)
#: A reaction before the statement ("That sounds amazing, …", "Sounds fun!"): not part of it.
_LEAD_REACTION = re.compile(
    r"^(?:(?:that|this|it)(?:'s| is| was| sounds| looks| seems)|sounds|looks)\s+"
    r"(?:(?:so|really|very|pretty|super|just|such an?|an?)\s+)*(?:amazing|great|awesome|cool|nice|wonderful|"
    r"fantastic|lovely|fun|exciting|interesting|sweet|good|beautiful|incredible|brilliant|perfect|terrible|awful|"
    r"sad|tough|crazy|wild|hilarious|funny|impressive|neat|rough|scary)(?:\s+(?:news|idea|question|point|to hear))?"
    r"\s*[,!;—-]+\s*(?=\S)(?!(?:but|and|so|though|although|yet)\b)",
    re.I,
)
#: A correction's cue at the start ("Actually, …", "Sorry, I meant …").
_CORRECTION_CUE = re.compile(
    r"^(?:(?:oh|ah|um+|uh+|hmm+|well|ok|okay|no)[\s,!.]+)*(?:actually|correction|sorry|wait|oops|my bad|"
    r"my mistake|to be clear|I meant|I mean|I got (?:that|it) wrong|I was wrong|I misspoke|let me correct|"
    r"to correct myself|scratch that)\b",
    re.I,
)
#: The value a correction replaces (", not Oslo", "rather than 33"): the old value is no part of the fact.
_REPLACED_TAIL = re.compile(
    r"(?:,|\s)\s*(?:and\s+)?(?:not|rather than|instead of)\s+([^,.;!?]{1,30}?)\s*([.!?]?)$", re.I
)


def _drop_replaced(s: str, correcting: bool) -> str:
    """A correction's ", not <old value>" dropped after a correction cue, or when the old value is a number or name.

    "I'm 34, not 33" and "I live in Bergen, not Oslo" keep the new value; "I like tea, not coffee" is kept whole.
    """
    m = _REPLACED_TAIL.search(s)
    if not m or len(words(s[: m.start()])) < 2:
        return s
    old = m.group(1).strip()
    if correcting or re.search(r"\d", old) or re.match(r"(?:on |in |at )?[A-Z]", old):
        return s[: m.start()].rstrip(" ,") + (m.group(2) or ".")
    return s


_IMPLIED_SUBJECT = re.compile(
    r"^(?:just|finally|recently|also|still|actually)?\s*(?:got|went|started|finished|joined|made|took|had|bought|"
    r"visited|moved|signed|tried|saw|met|adopted|found|won|lost|learned|picked|spent|booked|ran|attended|"
    r"volunteered|painted|wrote|decided|baked|cooked|built|gonna|wanna|gotta)\b(?!\s+(?:is|are|was|were)\b)",
    re.I,
)
#: A state said without its subject ("Not vegan anymore", "No longer in the choir"): "I'm" is implied.
_IMPLIED_STATE = re.compile(
    r"^(?:not\b(?=[^,.;!?]*\b(?:anymore|any more)\b)|no longer\b)\s+(?:an?\s+|the\s+)?([a-z'-]+)", re.I
)
_PLAIN_VERBS = frozenset("eat drink live work smoke play have go do use own take like need drive run".split())
_COLLOQUIAL = (
    (re.compile(r"\bgonna\b", re.I), "going to"),
    (re.compile(r"\bwanna\b", re.I), "want to"),
    (re.compile(r"\bgotta\b", re.I), "have to"),
    (re.compile(r"\bI going to\b"), "I am going to"),
    (re.compile(r"\b([Nn]ame)'s\b"), r"\1 is"),  # "My name's Daniel"
    (re.compile(r"\b([a-z]+)'s (called|named)\b"), r"\1 is \2"),  # "my cat's called Mochi"
    # "My birthday's next Friday", "The party's on the 4th": "'s" before a time is "is"
    (re.compile(r"\b([a-z]+)'s (?=(?:next|last|this|on|in|at|tomorrow|today|tonight|yesterday)\b)"), r"\1 is "),
    (re.compile(r"^[Tt]he name is\b"), "My name is"),  # "The name's Bond"
    (re.compile(r"\bI been\b"), "I have been"),
    (re.compile(r",\s*you know\b,?|\byou know,\s*|,?\s*\byou know\s*(?=[.!?]?$)", re.I), ""),
    (re.compile(r"\s*-\s*$"), ""),
)
#: Capitalised words that open a sentence and name no person (days, months, car makes, nationalities).
_NOT_PERSON = re.compile(
    r"^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|"
    rf"August|September|October|November|December|Today|Tonight|Tomorrow|Yesterday|Christmas|Easter|{CAR_MAKES}|"
    r"God|Work|School|Class|Dinner|Lunch|Breakfast|Everything|Nothing|Mom|Mum|Dad|Grandma|Grandpa)$"
)
_NAME_HERE = re.compile(r"^([A-Z][a-z]+) here\s*[.!]*$")
_NOT_A_NAME_HERE = re.compile(rf"^(?:{NOT_A_NAME_LEAD})$")
_DANGLING_START = re.compile(
    r"^(?:it|it's|its|this|that|that's|these|those|they|they're|them|he|she|his|her|there|which)\b", re.I
)
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


#: An evaluative tail after a fact (", so that's a relief", ", which was so much fun"): dropped from the fact.
_EVALUATIVE_TAIL = re.compile(
    r",?\s*(?:(?:so|and|but|which|lol|haha)\s+)?(?:that's|that is|that was|it's|it is|it was|which is|which was|"
    r"it's been|it has been|which has been|that's been|that has been)\s+"
    r"(?:(?:a|an|such a|so|really|very|pretty|super|quite|kind of|a bit of)\s+)*"
    r"(?:relief|great|nice|fun|amazing|awesome|cool|exciting|good|wonderful|lovely|huge|big deal|crazy|wild|relaxing|"
    r"calming|therapeutic|rewarding|fulfilling|challenging|exhausting|interesting|brilliant|surreal|emotional|"
    r"life-changing|a blast|an adventure|a journey|a game changer|a lifesaver|"
    r"insane|fantastic|incredible|special|stressful|scary|sad|tough|hard|weird|funny|much fun|lot of fun)\b"
    r"[^.!?;]*(?=[.!?]*$)|,?\s*\b(?:sadly|unfortunately|luckily|thankfully|honestly|lol|haha+)\s*(?=[.!?]*$)",
    re.IGNORECASE,
)
#: A closing remark after a fact (", in case it matters for …", ", still sore", ", can't believe it", ", so we
#: skip those"): why it was said, how the speaker feels about it, or what follows from it; dropped from the fact.
_COMMENT_TAIL = re.compile(
    r"(?:,|\s[—–-])\s*(?:(?:just|only)\s+)?(?:in case\b[^.!?]*|if (?:that|it|this) (?:matters|helps|makes (?:a|any) "
    r"difference|is relevant|changes anything)\b[^.!?]*|if you (?:can believe it|must know|need to know|"
    r"(?:were|are|'re) wondering|care)\b[^.!?]*|still\s+(?![^.!?]*(?:\d|(?-i:\s[A-Z])))(?:\S+\s*){1,5}?|"
    r"(?:I\s+)?(?:still\s+)?(?:can't|cannot|can not)\s+(?:quite\s+|really\s+)?believe\s+(?:it|that|this)\b[^.!?]*|"
    r"who knew|go figure|wish me luck|fingers crossed|lucky me|of all things|for what it's worth|"
    r"no big deal|believe it or not|"
    r"so\s+(?:we|I|he|she|they)\b[^,.!?]*\b(?:those|that|them|it|these|this)|(?:yay|woohoo|finally|ugh)+|"
    r"(?:so|super|really|very)\s+(?:excited|happy|thrilled|stoked|pumped|relieved|proud|nervous|grateful|glad)\b[^.!?]*|"
    r"(?:which|and)\s+I'm\s+(?:so\s+|really\s+)?(?:excited|happy|thrilled|stoked|glad|nervous)\s+about\b[^.!?]*|"
    r"(?:I\s+)?hope (?:that's|that is|it's|this is) (?:ok|okay|fine|alright|cool)\b[^.!?]*|(?:just\s+)?fyi)"
    r"\s*[.!?]*\s*$",
    re.IGNORECASE,
)
#: A request to keep what was just said, at the end (", so please keep that in mind", "— remember that!").
_KEEP_TAIL = re.compile(
    r"[,;—–-]?\s*(?:(?:so|and|just)\s+)?(?:please\s+)?(?:keep (?:that|this|it) in mind|remember (?:that|this|it)|"
    r"note (?:that|this|it)(?: down)?|(?:don't|do not) forget(?: (?:that|this|it))?|make a note of (?:that|this|it))"
    r"\s*(?:please\s*)?[.!]*$",
    re.IGNORECASE,
)
#: "Call me Sam" / "You can call me Sam": the user's name, as well as how the assistant addresses them.
_CALL_ME = re.compile(r"(?i:\bcalls? me)\s+" + CALLED_NAME)
#: What a "call me" sentence says before it ("My name is Daniel, but please call me Dan"): a fact of its own.
_BEFORE_CALL = re.compile(
    r"[\s,;]*(?:\b(?:but|and|so)\b[\s,]*)?(?:\b(?:please|pls|just|you can|you may|feel free to)\b[\s,]*)*$", re.I
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
_REL_ADJ = r"(?:(?:best|old|older|younger|little|big|baby|new|dear|twin|late|oldest|youngest|closest|eldest)\s+)*"
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
#: The speaker asks that what they say is not kept ("Don't save this, but …", "Off the record, …"): no fact.
_PRIVATE = re.compile(
    r"^(?:(?:please|and|but|ok|okay|so|oh)[\s,]+)*(?:(?:please\s+)?(?:don't|do not|dont|no need to|never)\s+"
    r"(?:save|store|remember|record|note|write down|keep|log)\s+(?:this|that|it)\b|(?:this is\s+|strictly\s+|just\s+)?"
    r"off the record\b|(?:just\s+|this is\s+)?between (?:you and me|us)\b)",
    re.IGNORECASE,
)
#: Asking the assistant to keep a statement, beyond :func:`~.rules.memory_request`'s forms ("Make sure you
#: remember …", "Note to self: …", "From now on, remember …"): the statement is the fact.
_KEEP_THIS = re.compile(
    r"^(?:(?:please|pls|and|also|oh|ok|okay|so)[\s,]+)*(?:(?:from now on|going forward|in the future)[\s,]+)?"
    r"(?:make sure (?:you|to) (?:remember|know|note)|note to self|remember for (?:next time|later|the future)|"
    r"for next time|just remember|try to remember|remember|I need you to (?:remember|know)|you need to know|"
    r"you should remember|please keep this in mind|keep this in mind)(?:\s+that\b)?[\s,:;—-]*",
    re.IGNORECASE,
)


def kept_statement(sentence: str) -> str:
    """The statement a "keep this" request asks to keep ("Make sure you remember my wife's birthday is …").

    Example:
        >>> kept_statement("From now on, remember I'm vegetarian."), kept_statement("I'm vegetarian.")
        ("I'm vegetarian.", '')
    """
    text = " ".join(sentence.replace("’", "'").split())
    m = _KEEP_THIS.match(text)
    rest = text[m.end() :] if m else ""
    if not m or len(words(rest)) < 2 or rest.rstrip().endswith("?"):
        return ""
    return rest[0].upper() + rest[1:]


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
    if _THAT_IS_MINE.match(sentence) and not (_PROPER_MID.search(sentence) or _NUMBER.search(sentence)):
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
    chatter). ``c`` content words (≤ 15), ``p`` mid-sentence names (≤ 3), ``n`` a number, ``l``
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
        + 0.1 * float(bool(_NUMBER.search(sentence)))
        + 0.2 * min(len(tokens & _LEXICON), 3) / 3
    )
    pronouns = min(len(_PRONOUNS_3.findall(sentence)), 3) / 3
    score = g * (0.5 + 0.5 * min(1.0, content)) * (1.0 - 0.3 * pronouns)
    return round(score * (0.5 if dangling else 1.0), 6)


def _clean(sentence: str, other: str | None) -> str:
    """Interjections, vocatives (the other speaker's name or nickname), fillers removed; a dropped subject restored."""
    s = " ".join(sentence.replace("’", "'").split())
    correcting = bool(_CORRECTION_CUE.match(s))
    prev = None
    while prev != s:
        prev = s
        s = _LEAD_NOISE.sub("", s).strip()
        asking = _ASKING_PREAMBLE.match(s)
        s = _LEAD_REACTION.sub("", _PREAMBLE.sub("", s)).strip()
        if asking and s.endswith("?"):
            s = s[:-1].rstrip() + "."  # "Did I tell you I got a puppy?": a statement
        if other:
            # "Mel, I …" is a vocative; "Mel got a puppy" names its subject
            s = re.sub(rf"^{re.escape(other)}\b\s*(?:[,!.:;—-]+\s*|$|(?=(?:you|you're|u)\b))", "", s).strip()
    s = _drop_replaced(s, correcting)
    if other:
        nick = rf"(?:{re.escape(other)}|{re.escape(other[:3])}\w{{0,3}})"
        s = re.sub(rf"^{nick}[,!]\s*", "", s)
        s = re.sub(rf",\s*{nick}\s*([.!?]?)$", r"\1", s)
        s = re.sub(rf"^{nick}\s*[.!]?$", "", s)
    if s and _IMPLIED_SUBJECT.match(s):
        s = "I " + s[0].lower() + s[1:]
    elif s and _IMPLIED_STATE.match(s):  # "Not vegan anymore, …", "No longer at Acme": "I'm not vegan anymore"
        verb = _IMPLIED_STATE.match(s).group(1)  # type: ignore[union-attr]
        s = ("I " if verb.lower() in _PLAIN_VERBS else "I'm ") + s[0].lower() + s[1:]
    keep = _KEEP_TAIL.search(s)
    if keep and len(words(s[: keep.start()])) >= 2:  # "…, so please keep that in mind": the statement alone
        s = s[: keep.start()].rstrip(" ,;") + "."
    tail = _EVALUATIVE_TAIL.search(s)
    if tail and len(words(s[: tail.start()])) >= 3:
        s = s[: tail.start()].rstrip(" ,;") + (s[-1] if s[-1:] in ".!" else ".")
    comment = _COMMENT_TAIL.search(s)
    if comment and len(words(s[: comment.start()])) >= 2:
        s = s[: comment.start()].rstrip(" ,;") + "."
    for pattern, replacement in _COLLOQUIAL:
        s = pattern.sub(replacement, s).strip()
    here = _NAME_HERE.match(s)
    if here and here.group(1).lower() not in STOPWORDS and not _NOT_A_NAME_HERE.match(here.group(1)):
        s = f"My name is {here.group(1)}."  # "Raj here!": a speaker who introduces themselves ("Same here" does not)
    return s


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


#: "the <thing> is …" said to be kept or as a correction: the speaker's own thing ("the dentist appointment is …").
_THE_THING = re.compile(
    r"^[Tt]he\s+(?=(?:[\w-]+\s+){0,5}?(?:is|are|was|were|starts|begins|ends|leaves|opens|closes|expires|"
    r"runs)\b)"
)
#: "it's a Honda Accord, not a Civic": a correction that names a car (the only "it" a page alone resolves).
_IT_IS_CAR = re.compile(
    rf"^(?:it's|it is|that's|that is|it was)\s+(?:actually\s+)?(?:an?\s+|the\s+)?(?=(?-i:{CAR_MAKES})\b)", re.I
)


#: A note without a verb ("gate code 4471", "locker: 212"): a thing and its value (a number or a name).
_NOTE = re.compile(r"^(?:the\s+|my\s+)?((?:[A-Za-z-]+\s+){0,3}[A-Za-z-]+)\s*[:=—–-]?\s+(\S*\d\S*|[A-Z][\w-]+)[.!]?$")


def own_statement(statement: str, asked: bool = False) -> str:
    """A statement the speaker asked to keep, or corrected, about a thing of theirs, said as theirs.

    A note asked to be kept may have no verb ("Remember: gate code 4471").

    Example:
        >>> own_statement("the dentist appointment is on the 21st."), own_statement("it's a Toyota Corolla.")
        ('My dentist appointment is on the 21st.', 'My car is a Toyota Corolla.')
        >>> own_statement("Gate code 4471.", asked=True)
        'My gate code is 4471.'
    """
    if set(words(statement)) & (_FIRST | GROUP_PERSON):
        return statement
    note = _NOTE.match(statement) if asked else None
    if note and not set(words(note.group(1))) & _VERB_WORDS:
        return f"My {note.group(1).lower()} is {note.group(2).rstrip('.!,')}."
    car = _IT_IS_CAR.match(statement)
    if car:
        article = re.match(r"(?i)^(?:it's|it is|that's|that is|it was)\s+(?:actually\s+)?(an?\s+)?", statement)
        return "My car is " + ((article.group(1) or "") if article else "") + statement[car.end() :]
    return _THE_THING.sub("My ", statement, count=1)


def _request(raw: str, cleaned: str) -> tuple[str, str]:
    """:func:`~.rules.memory_request` of a sentence as said, else as cleaned ("Oh, and remember …")."""
    found = memory_request(" ".join(raw.split()))
    return found if found[0] else memory_request(cleaned)


def _units(text: str, other: str | None) -> list[tuple[int, str, bool, bool]]:
    """(index, cleaned sentence, dangling, asked to be remembered) of a side's sentences.

    A dangling follower is joined to the sentence before it.
    """
    body = informal_apostrophes(_PHOTO.sub(" ", text or ""))  # "i dont eat meat": "I don't eat meat"
    units: list[tuple[int, str, bool, bool]] = []
    private = False
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
        if asked or _CORRECTION_CUE.match(" ".join(raw.split())):
            s = own_statement(s, asked)  # "Remember: the gate code is 4471", "Sorry: the appointment is on the 21st"
        dangling = bool(_DANGLING_START.match(s)) and not set(words(s)) & (_FIRST | GROUP_PERSON)
        if dangling and units and units[-1][0] == i - 1 and not units[-1][1].rstrip().endswith("?"):
            j, prev, _, was_asked = units[-1]
            units[-1] = (i, prev.rstrip(" .!") + "; " + s[0].lower() + s[1:], False, was_asked)
            continue
        called = _CALL_ME.search(s)
        if called:  # "Call me Sam": how the assistant addresses them (a trait) and the name they go by (a fact)
            before = _BEFORE_CALL.sub("", s[: called.start()])
            if len(words(before)) >= 2 and not BY_OTHERS.search(before + " call me"):
                units.append((i, before.rstrip(" ,;") + ".", False, asked))  # "My name is Daniel, but …"
            units.append((i, f"I go by {called.group(1)}.", False, True))
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
    lost sold finished signed booked""".split()
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
    if not listener and (verb not in _PERSON_EVENTS or verb in _GENERIC_VERBS):
        return "", ""
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


def side_requests(text: str, other: str | None = None) -> list[str]:
    """What one side's sentences ask the memory to forget, each as said: the one reading of a forget request.

    The controller marks these requests (:func:`page_requests`) and never
    makes a fact of them; the write path carries them out
    (:func:`~langchain_memoryos.amu.forgetting.forget_request` reads a turn
    with this function). "Forget it" and "Don't forget to …" are no request.

    Args:
        text: one side of a page, without its ``"Name: "`` prefix.
        other: the other speaker's name (a vocative of it is not part of the request).

    Returns:
        The object of each forget request, in order ("that I'm in debt.").

    Example:
        >>> side_requests("Hi! Please don't store my address. Can you forget that I mentioned my salary?")
        ['my address.', 'that I mentioned my salary?']
        >>> side_requests("Forget it, never mind. Don't forget to call me.")
        []
    """
    out: list[str] = []
    for raw in split_sentences(" ".join(informal_apostrophes(_PHOTO.sub(" ", text or "")).split())):
        request, about = _request(raw, _clean(raw, other))
        if request == "forget":
            out.append(about)
    return out


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


#: Words that make an answer a clause rather than a noun phrase ("Yes, my brother and I went").
_VERB_WORDS = frozenset(
    "is are was were am be been has have had do does did went got made took go goes going can will would".split()
)


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
