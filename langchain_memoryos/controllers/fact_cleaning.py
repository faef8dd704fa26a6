"""The cleaning of a side's sentence before it is read as a fact (:mod:`.facts`, step 2).

Interjections, discourse preambles ("Oh and I almost forgot, …"), a reaction before the statement,
vocatives (the other speaker's name or nickname), a correction's replaced value (", not Oslo"), an
evaluative or commenting tail, a "keep that in mind" tail and a request to the listener (", so no wine pairings
please") are dropped; a dropped subject is restored
("Just got back …" → "I just got back …") and colloquial forms are written out ("gonna" → "going to").

Example:
    >>> _clean("Oh wow, Mel! Just got back from Paris, so that's a relief.", "Mel")
    'I just got back from Paris.'
"""

from __future__ import annotations

import re

from langchain_memoryos.controllers.lexicon import words
from langchain_memoryos.controllers.rewrite import third_person
from langchain_memoryos.controllers.slots import NOT_A_NAME_LEAD, slot_of
from langchain_memoryos.index.lexical import STOPWORDS

_PHOTO = re.compile(r"\s*\[shares (?:a photo|an image)[^\]]*\]\s*", re.I)
_LEAD_NOISE = re.compile(
    r"^(?:(?:hey|hi|hello|thanks|thank you|thanks a lot|thx|wow|woah|whoa|oh|ooh|yeah|yep|yes|yup|aw+|omg|ugh|"
    r"argh|meh|phew|whew|yikes|oof|dude|"
    r"congrats|congratulations|haha+|lol|so|well|ok|okay|sure|right|totally|great|cool|nice|awesome|ah|hmm+|"
    r"definitely|absolutely|exactly|indeed|true|good|sounds good|no way|gosh|dang|man|dude|hey there|"
    r"unfortunately|sadly|luckily|thankfully|fortunately|honestly|basically|never mind|nevermind|no worries|"
    r"correction|update|wait|scratch that|to be clear|actually|in fact|sorry|oops|whoops|my bad|my mistake|"
    r"my apologies|apologies|hold on|sorry about that|no wait|oh no|change of plans?|plot twist|new plan)"
    r"\b[\s,!.:;—-]*)+",
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
    The old value is dropped only when the new statement fills a property slot (the slot says what changed);
    otherwise it is kept ("running the Boston marathon instead of Chicago"), so that the relation judge can
    read which fact the statement replaces.
    """
    m = _REPLACED_TAIL.search(s)
    if not m or len(words(s[: m.start()])) < 2:
        return s
    old = m.group(1).strip()
    stem = s[: m.start()].rstrip(" ,") + (m.group(2) or ".")
    if (correcting or re.search(r"\d", old) or re.match(r"(?:on |in |at )?[A-Z]", old)) and slot_of(third_person(stem)):
        return stem
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
    # "New address: 3 Canal Street", "New number is …": the speaker's own
    (
        re.compile(
            r"^(?:[Nn]ew|[Uu]pdated)\s+(?=(?:home\s+)?(?:address|phone number|phone|number|mobile(?: number)?|email"
            r"(?: address)?|job|office)\s*(?::|is\b))"
        ),
        "My new ",
    ),
    (re.compile(r",\s*you know\b,?|\byou know,\s*|,?\s*\byou know\s*(?=[.!?]?$)", re.I), ""),
    (re.compile(r"\s*-\s*$"), ""),
)
_NAME_HERE = re.compile(r"^([A-Z][a-z]+) here\s*[.!]*$")
_NOT_A_NAME_HERE = re.compile(rf"^(?:{NOT_A_NAME_LEAD})$")


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
    r"so\s+(?:we|I|he|she|they)\b[^,.!?]*\b(?:those|that|them|it|these|this)|"
    r"(?:yay|woohoo|finally|ugh|argh|oof|ouch|yikes|meh|sigh|phew|whew|lol|haha+|omg|wow)+|"
    # a feeling said beside the fact (", and honestly I'm so nervous but also kind of excited"): no part of it
    r"(?:(?:and|but|so|though)\s+)?(?:(?:honestly|tbh|admittedly|to be honest|really|also|now)[\s,]+)?"
    r"(?:I'm|I am|I was|I feel|I felt|I'm feeling|I was feeling|we're|we are|we were|we feel)\s+"
    r"(?:(?:so|really|very|a bit|a little|a little bit|kind of|sort of|super|pretty|quite|totally|both|also|"
    r"incredibly|extremely|absolutely|honestly|just|still)\s+)*(?:nervous|excited|thrilled|stoked|pumped|happy|"
    r"glad|relieved|proud|grateful|scared|terrified|anxious|worried|stressed|sad|upset|gutted|devastated|"
    r"heartbroken|overwhelmed|exhausted|tired|over the moon|nervous|bummed|annoyed|frustrated)\b[^.!?]*|"
    r"(?:so|super|really|very|kinda|kind of|pretty)\s+(?:excited|happy|thrilled|stoked|pumped|relieved|proud|nervous|"
    r"grateful|glad|annoying|frustrating|embarrassing|stressful|exciting|weird|random|typical|lame|unfair|fun|cool|"
    r"sad|awesome|amazing|great|nice|scary|cute|funny|annoyed|frustrated|embarrassed|bummed|gutted)\b[^.!?]*|"
    r"(?:which|and)\s+I'm\s+(?:so\s+|really\s+)?(?:excited|happy|thrilled|stoked|glad|nervous)\s+about\b[^.!?]*|"
    r"(?:I\s+)?hope (?:that's|that is|it's|this is) (?:ok|okay|fine|alright|cool)\b[^.!?]*|(?:just\s+)?fyi)"
    r"\s*[.!?]*\s*$",
    re.IGNORECASE,
)
#: A tag question closing a statement (", you know?", ", right?"): the statement is no question.
_TAG_QUESTION = re.compile(r",\s*(?:you know|ya know|y'know|you see|right|yeah|lol|haha+)\s*\?+\s*$", re.I)
#: A request to keep what was just said, at the end (", so please keep that in mind", "— remember that!").
_KEEP_TAIL = re.compile(
    r"[,;—–-]?\s*(?:(?:so|and|just)\s+)?(?:please\s+)?(?:keep (?:that|this|it) in mind|remember (?:that|this|it)|"
    r"note (?:that|this|it)(?: down)?|(?:don't|do not) forget(?: (?:that|this|it))?|make a note of (?:that|this|it))"
    r"\s*(?:please\s*)?[.!]*$",
    re.IGNORECASE,
)

#: A request to the listener that closes a statement (", so no wine pairings please", ", so please don't suggest
#: seafood", ", so leave it out, thanks"): what the speaker asks for follows from the fact and is no part of it.
_REQUEST_TAIL = re.compile(
    r"(?:[,;]\s*|\s[—–-]\s*|\s+(?=so\s))(?:(?:so|which means|that means)\s+)?"
    r"(?P<ask>(?:please|pls|kindly|feel free to)\b[^.!?]*|"
    r"(?:don't|do not|never|no need to)\s+(?:ever\s+)?(?:suggest|recommend|book|schedule|send|give|show|offer|plan|"
    r"pick|include|add|put|order|propose|remind|bring|serve|invite|make|mention|expect|pair|plan)\b[^.!?]*|"
    r"(?:skip|avoid|leave (?:out|(?:it|them|that|those) out)|hold the|spare me|count me out|go easy on)\b[^.!?]*|"
    r"(?:no|nothing|none of)\b[^.!?]*?\b(?:please|pls|thanks|thank you)\b[\s,]*|"
    r"(?<=so )no\s+(?![^.!?]*\b(?:for me|I|I'm|my|me|more|longer|idea|wonder|way)\b)[^.!?]*)\s*[.!]*$",
    re.IGNORECASE,
)
#: Words of a request that say what is asked, not about what: a request of only these restates its statement.
_ASK_WORDS = frozenset(
    """ever again anymore any anything stuff things please thanks avoid don't suggest recommend book schedule
    send give show offer plan pick include add put order propose remind bring serve invite make mention expect
    pair""".split()
)
_ASK_POLITE = re.compile(r"(?i:^(?:please|pls|kindly)\s+|[\s,]*\b(?:please|pls|thanks|thank you)\b[\s,]*$)")
_ASK_REFERS = re.compile(
    r"(?i:\b(?:it|them)\b|\b(?:that|this|those|these)(?=\s*$|\s+(?:in|on|off|out|for|from|to|away|down)\b))"
)


def request_tail(sentence: str) -> str:
    """The request to the listener that closes a statement, as an instruction ("" when there is none).

    "no X" asks to avoid X; a request that only points back at the statement ("leave it out") is none:
    the statement says it.

    Example:
        >>> request_tail("I'm not a morning person, so don't book me anything before 10 am.")
        "don't book me anything before 10 am"
        >>> request_tail("I don't drink, so no wine pairings please."), request_tail("I hate dill, so leave it out.")
        ('avoid wine pairings', '')
        >>> request_tail("I'm allergic to kiwi, so no kiwi ever.")  # it restates the statement
        ''

    """
    s = " ".join(sentence.replace("’", "'").split())
    m = _REQUEST_TAIL.search(s)
    if m is None or len(words(s[: m.start()])) < 2 or _KEEP_TAIL.search(s):
        return ""  # none, or "…, please don't forget": a request to keep the statement (the statement is the fact)
    ask = _ASK_POLITE.sub("", _ASK_POLITE.sub("", m.group("ask").strip(" .!"))).strip(" ,")
    ask = re.sub(r"(?i)^feel free to\s+", "", ask)  # "feel free to suggest cheese": suggest cheese
    if _ASK_REFERS.search(ask) or len(words(ask)) < 2:
        return ""
    asked = {w for w in words(ask) if w not in STOPWORDS and (len(w) > 2 or w.isdigit())} - _ASK_WORDS
    if asked <= set(words(s[: m.start()])):
        return ""  # "I'm allergic to kiwi, so no kiwi ever": the request says nothing the statement does not
    ask = re.sub(r"(?i)^nothing\s+", "avoid anything ", ask)  # "nothing too spicy": avoid anything too spicy
    return re.sub(r"(?i)^(?:no|none of)\s+", "avoid ", ask)  # "no wine pairings": avoid wine pairings


def _clean(sentence: str, other: str | None) -> str:
    """Interjections, vocatives (the other speaker's name or nickname), fillers removed; a dropped subject restored."""
    s = " ".join(sentence.replace("’", "'").split())
    s = _TAG_QUESTION.sub(".", s)  # "I started a new job, you know?": a statement, not a question
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
    asking = _REQUEST_TAIL.search(s)
    if asking and len(words(s[: asking.start()])) >= 2:  # "I don't drink alcohol, so no wine pairings please"
        s = s[: asking.start()].rstrip(" ,;") + "."
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
