"""Property slots of third-person facts: whose property, which one, what value.

The AMU relation-judge asks whether a new record speaks about *the same
property* as an old one (update) or another one (separate). The offline
controller answers with slots: "The user lives in Denver" fills ``location``
with ``denver``; "The user's sister lives in Paris" fills ``sister.location``
— a different slot, so the two facts can coexist. Slot facts are also
rewritten to one canonical, self-contained statement of the current state
("I moved to Denver" → "The user lives in Denver."), keeping its time ("I moved to Denver
last month" → "The user lives in Denver, having moved there last month.", which the page's
date then resolves); a negated state ("is not working at Amazon anymore") or one with a time
or duration that is not a move ("married for 20 years") is kept as said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from langchain_memoryos.controllers.dates import relative_time
from langchain_memoryos.controllers.lexicon import CALLED_NAME, PARTNERS, PERIODS, words

__all__ = ["SlotFact", "agent_slot", "as_the_user", "canonical_summary", "find_slot", "slot_of"]

_CAP = r"(?:[A-Z][\w&'’-]*)"
#: a proper-noun phrase: capitalised words, with "of"/"de"/"the" inside ("Bank of America")
_PROPER = rf"({_CAP}(?:\s+(?:(?:of|de|la|du|the|and|&)\s+)?{_CAP})*)"

_SOCIAL = PARTNERS | frozenset(
    """friend bestie mom mother dad father
    sister brother son daughter kid kids child children cousin aunt uncle grandma grandmother grandpa
    grandfather colleague coworker boss neighbor neighbour roommate parents niece nephew stepmom stepdad
    stepson stepdaughter flatmate housemate dog cat puppy kitten pet parrot rabbit hamster horse ex ex-wife
    ex-husband ex-boyfriend ex-girlfriend ex-partner landlord landlady classmate teammate bandmate godmother
    godfather stepbrother stepsister grandparents twin mother-in-law father-in-law sister-in-law
    brother-in-law mum mummy mommy mama daddy papa granny gran nan nana grandad granddad granddaughter grandson
    grandkids grandchildren stepmum godson goddaughter buddy bff mentor teacher coach tutor therapist doctor
    dentist nanny babysitter manager supervisor""".split()
)
_OCCUPATIONS = (
    r"engineer|developer|teacher|nurse|doctor|physician|surgeon|designer|lawyer|attorney|manager|student|"
    r"accountant|chef|cook|writer|author|artist|painter|scientist|analyst|consultant|programmer|architect|"
    r"pharmacist|therapist|dentist|firefighter|electrician|plumber|mechanic|photographer|musician|journalist|"
    r"professor|researcher|barista|waiter|waitress|cashier|paramedic|pilot|veterinarian|vet|counselor|"
    r"counsellor|librarian|carpenter|farmer|salesperson|recruiter|intern|freelancer|entrepreneur|founder|"
    r"officer|soldier|paralegal|secretary|assistant|technician|editor|translator|tutor|coach|trainer|"
    r"economist|statistician|biologist|chemist|physicist|psychologist|social worker|realtor|banker|"
    r"data scientist|product manager|software engineer|web developer|graphic designer|dancer|singer|actor|"
    r"actress|driver|baker|butcher|janitor|clerk|student|pastor|priest|retiree|homemaker"
)
#: Car makes: "drives a grey Honda Civic", "bought a Tesla", "my car is a Subaru Outback" fill the ``car`` slot.
CAR_MAKES = (
    r"Toyota|Honda|Ford|Chevrolet|Chevy|Nissan|Hyundai|Kia|Volkswagen|VW|Subaru|Mazda|BMW|Audi|Mercedes(?:-Benz)?|"
    r"Tesla|Volvo|Jeep|Dodge|GMC|Lexus|Porsche|Fiat|Peugeot|Renault|Skoda|Škoda|Citroen|Citroën|Opel|Vauxhall|Mini|"
    r"Jaguar|Land Rover|Range Rover|Mitsubishi|Suzuki|Buick|Cadillac|Acura|Infiniti|Lincoln|Chrysler|Rivian|Polestar|"
    r"Saab|Alfa Romeo|Dacia|Seat|Cupra|BYD|Lada|Ferrari|Lamborghini|Maserati"
)
_CAR = rf"((?-i:{CAR_MAKES})(?:\s+(?-i:[A-Z][\w-]*|\d[\w-]*)){{0,2}})"
_DIETS = r"vegan|vegetarian|pescatarian|keto|gluten-free|plant-based|lactose-free|dairy-free|halal|kosher"
_FOODS = r"meat|red meat|fish|seafood|dairy|pork|beef|chicken|gluten|sugar|eggs|animal products|alcohol"
_STATUS = r"married|single|engaged|divorced|widowed|separated"
_EATING = r"is eating|eats|started eating|is back to eating"
_WHO = r"the user|the user's \w+|[A-Z][a-z]+"
_JOB = r"job|position|role"
_I = re.IGNORECASE
#: Capitalised sentence openers that are not names ("And here's a pic", "Same here"): a regular-expression alternation.
NOT_A_NAME_LEAD = (
    r"And|But|So|Oh|Well|Look|Right|Over|Out|In|Up|Hey|Okay|Ok|Yes|Yeah|Now|Then|Just|Also|Here|There|Same|Me|Us|"
    r"Everyone|Everybody|Nobody|Someone|Somebody|Anyone|Sorry|Still|Not|Only|All|Both|Life|Work|Home|Nothing|"
    r"Something|Everything|Ditto|Hello|Hi|Thanks|Cheers|Love|Back|Almost|Nearly"
)
_NOT_A_NAME = (
    r"American|Canadian|Mexican|British|English|Irish|Scottish|Welsh|French|German|Italian|Spanish|Portuguese|"
    r"Dutch|Belgian|Swiss|Austrian|Swedish|Norwegian|Danish|Finnish|Polish|Russian|Ukrainian|Greek|Turkish|"
    r"Chinese|Japanese|Korean|Indian|Pakistani|Australian|Brazilian|Argentinian|Nigerian|Kenyan|Egyptian|"
    r"Israeli|Iranian|Vietnamese|Thai|Filipino|Christian|Catholic|Jewish|Muslim|Hindu|Buddhist|Atheist|"
    r"Vegan|Vegetarian|Single|Married|Engaged|Divorced|Retired|Back|Here|Fine|Good|Okay|Ok|Sorry|Done|Ready"
)


@dataclass(frozen=True)
class SlotFact:
    """A slot read off a third-person statement.

    Attributes:
        subject: ``"user"`` or the person/pet it is about (``"sister"``).
        slot: the property (``location``, ``employer``, ``preference:coffee`` …).
        value: the normalised value (lower case; ``+``/``-`` for preferences).
        display: the value as written, for a canonical statement.

    Example:
        >>> find_slot("The user's sister lives in Paris.").key
        'sister.location'
    """

    subject: str
    slot: str
    value: str
    display: str

    @property
    def key(self) -> str:
        """The slot key: ``slot`` for the user, ``subject.slot`` for anyone else.

        Example:
            >>> SlotFact("user", "location", "oslo", "Oslo").key, SlotFact("Ana", "location", "rome", "Rome").key
            ('location', 'Ana.location')
        """
        return self.slot if self.subject == "user" else f"{self.subject}.{self.slot}"


# (slot, pattern, value) — value None: group 1 of the pattern; otherwise a constant.
_PATTERNS: tuple[tuple[str, re.Pattern[str], str | None], ...] = (
    (
        "relationship_status",
        re.compile(
            r"(?i:\b(?:called it quits|parted ways|split|ended things with|is no longer (?:with|dating)|dumped))"
        ),
        "single",
    ),
    (
        "relationship_status",
        re.compile(
            r"(?i:\b(?:are|is|were|got|just got)\s+(?:now\s+)?(?:separating|separated|divorcing|getting divorced))"
        ),
        "separated",
    ),
    (
        "birthday",
        re.compile(
            r"(?i:\bbirthday is\s+(?:on\s+)?(?:the\s+)?)"
            r"((?:[A-Z][a-z]+\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+of\s+[A-Z][a-z]+)?)"
        ),
        None,
    ),
    ("age", re.compile(r"^(?i:the user is\s+)(\d{1,2})\.?$"), None),
    ("age", re.compile(r"^\s*(?i:is\s+(?:now\s+)?)(\d{1,2})(?i:\s+now)?\.?$"), None),  # "… daughter is 8."
    # "Ana here!" introduces a name; "And here's a pic" does not
    (
        "name",
        re.compile(
            r"^(?!(?:" + _NOT_A_NAME + r"|" + NOT_A_NAME_LEAD + r")\b)([A-Z][a-z]+)"
            r"(?i:\s+here\b)(?!['’]s|\s+(?:is|are|was|were|comes|goes)\b)"
        ),
        None,
    ),
    # "The user drives a grey Honda Civic", "… bought a Tesla", "The user's car is a Subaru": a new car updates it
    (
        "car",
        re.compile(
            r"(?i:\b(?:drives|is driving|has|owns|bought|got|just got|leases|is leasing|traded in [\w ]+? for|"
            r"car is|new car is)\s+(?:an?\s+|the\s+|two\s+)?(?:(?:new|used|old|grey|gray|black|white|silver|red|blue|"
            r"green|yellow|little|second-hand|secondhand|electric|hybrid|\d{4})\s+){0,2})" + _CAR
        ),
        None,
    ),
    # "The user sold the user's car", "… no longer has a car": no car (a new one is read above)
    (
        "car",
        re.compile(
            r"(?i:\b(?:sold|got rid of|no longer has|doesn't have|does not have|gave up|scrapped|totaled|totalled)\s+"
            r"(?:the user's\s+|a\s+|the\s+)?(?:car|vehicle))\b"
        ),
        "none",
    ),
    # "The user lives alone", "… lives with two roommates": who the user lives with
    (
        "household",
        re.compile(r"(?i:\b(?:lives|is living|live)\s+(?:all\s+)?(alone|on (?:their|the user's) own))"),
        None,
    ),
    (
        "household",
        re.compile(r"(?i:\b(?:lives|is living|live)\s+with\s+)((?:the user's\s+|a\s+|an\s+|\w+\s+)?[a-z-]+)"),
        None,
    ),
    ("allergy", re.compile(r"(?i:\ballerg\w*\b[^.]*?\bonly\s+)([a-z][a-z ]*?)(?=,|\.|$| are| is)"), None),
    (
        "allergy",
        re.compile(
            r"(?i:\b(?:is|was|got|became)\s+(?:severely\s+|mildly\s+|very\s+)?allergic to\s+)"
            r"([a-z][a-z -]*?)(?=,|\.|$| so| and| but| which)"
        ),
        None,
    ),
    ("employer", re.compile(rf"(?i:\bis\s+an?\s+[\w -]+?\s+at\s+)(?:the\s+)?{_PROPER}"), None),
    ("occupation", re.compile(r"(?i:\bteach(?:es)?\s+\w+)"), "teacher"),
    ("location", re.compile(rf"(?i:\bis\s+(?:now\s+)?(?:based\s+)?in\s+)(?:the\s+)?{_PROPER}(?i:\s+now)\b"), None),
    ("location", re.compile(rf"(?i:\bis\s+(?:now\s+)?based\s+(?:in|out of)\s+)(?:the\s+)?{_PROPER}"), None),
    ("employer", re.compile(rf"(?i:\bis\s+(?:now\s+)?at\s+)(?:the\s+)?{_PROPER}(?i:\s+now)\b"), None),
    (
        "diet",
        re.compile(rf"(?i:\b(?:{_EATING})\s+(?:fish|seafood)\s+(?:again|now|these days))"),
        "pescatarian",
    ),
    ("diet", re.compile(rf"(?i:\b(?:{_EATING})\s+meat\s+again)"), "omnivore"),
    # "I eat meat now", "I've started eating chicken again": no longer vegan or vegetarian
    (
        "diet",
        re.compile(rf"(?i:^(?:{_WHO})\s+(?:now\s+)?(?:eats|is eating)\s+(?:meat|red meat)(?:\s+now)?\s*\.?$)"),
        "omnivore",
    ),
    (
        "diet",
        re.compile(
            r"(?i:\b(?:started|starts|has started|is back to|went back to|is eating|eats)\s+(?:eating\s+)?"
            r"(?:meat|chicken|beef|pork|lamb|steak|bacon|turkey)(?:\s+again|\s+now)+)"
        ),
        "omnivore",
    ),
    (
        "diet",
        re.compile(r"(?i:\b(?:started|starts|has started|is back to|went back to)\s+eating\s+(?:fish|seafood))"),
        "pescatarian",
    ),
    ("diet", re.compile(rf"(?i:\beats\s+(?:fully\s+|strictly\s+|mostly\s+|only\s+)?)({_DIETS})\b"), None),
    ("relationship_status", re.compile(r"(?i:\b(?:broke|broken|split|splits|breaks)\s+up\b)"), "single"),
    (
        "relationship_status",
        re.compile(r"(?i:\b(?:called|call|calls|broke|broken)\s+off\s+(?:the|their|our)\s+(?:engagement|wedding))"),
        "single",
    ),
    # "The user's son is in fourth grade": the school year, which the next one updates
    ("grade", re.compile(r"(?i:\bis\s+(?:now\s+)?in\s+(?:the\s+)?)(\w+)(?i:\s+grade\b)"), None),
    ("grade", re.compile(r"(?i:\bis\s+(?:now\s+)?in\s+)((?i:year|grade)\s+\d{1,2})\b"), None),
    ("relationship_status", re.compile(r"(?i:\b(?:ended things with|is no longer (?:with|dating)|dumped))"), "single"),
    # "The user is not with Marcus anymore", "… aren't together any more": the relationship ended
    (
        "relationship_status",
        re.compile(
            r"(?i:\b(?:is not|isn't|are not|aren't)\s+(?:with|dating|seeing|together)\b[^.;]*?\b(?:anymore|any more))"
        ),
        "single",
    ),
    (
        "relationship_status",
        re.compile(rf"(?i:\b(?:got|just got|recently got|has been)\s+({_STATUS}))"),
        None,
    ),
    (
        "relationship_status",
        re.compile(rf"(?i:\bis\s+(?:now\s+|newly\s+|happily\s+|recently\s+|still\s+)*({_STATUS})\b)"),
        None,
    ),
    (
        "relationship_status",
        re.compile(
            r"(?i:\b(?:is dating|is seeing someone|is in a relationship|has a (?:new )?(?:girlfriend|boyfriend)))"
        ),
        "in a relationship",
    ),
    (
        "name",
        re.compile(r"^(?i:the user is\s+)(?!(?:" + _NOT_A_NAME + r")\b)([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\.?$"),
        None,
    ),
    (
        "name",
        re.compile(r"(?i:(?:^the user's name is|^the user's \w+ is named|\bis called|\bis named)\s+)" + CALLED_NAME),
        None,
    ),
    # "I go by Rafa", "Call me Liz": the name they go by, beside the name they have
    ("nickname", re.compile(r"(?i:\b(?:goes by|prefers to be called|wants to be called)\s+)" + CALLED_NAME), None),
    ("age", re.compile(r"(?i:\bis\s+)(\d{1,3})(?i:\s+(?:years?\s+old|yo)\b)"), None),
    ("age", re.compile(r"(?i:\b(?:just turned|turned|is turning)\s+)(\d{1,3})\b"), None),
    (
        "location",
        re.compile(
            rf"(?i:\b(?:lives|(?<!to )live|is living|living|resides|moved|moves|has moved|relocated|"
            rf"is moving|is relocating|is based|settled|just moved|recently moved)"
            rf"\s+(?:back\s+)?(?:in|to|down to|up to|over to)\s+)"
            rf"(?:the\s+)?{_PROPER}"
        ),
        None,
    ),
    (
        "hometown",
        re.compile(
            rf"(?i:\b(?:is from|comes from|grew up in|was born in|was raised in|is originally from)\s+)"
            rf"(?:the\s+)?{_PROPER}"
        ),
        None,
    ),
    # "left Google and joined Spotify", "quit Acme to start at Initech": the new employer
    (
        "employer",
        re.compile(
            rf"(?i:\b(?:left|quit|leaves|quits)\s+){_CAP}(?:\s+{_CAP})*(?i:\s+(?:and|to)\s+(?:the user\s+)?"
            rf"(?:joined|joins|join|started at|starts at|start at|started working at|start working at|"
            rf"works at|work at|is now at|went to work at|go to work at)\s+)(?:the\s+)?{_PROPER}"
        ),
        None,
    ),
    (
        "employer",
        re.compile(
            rf"(?i:\b(?:quit|quits|left|leaves|lost)\s+(?:the user's\s+|a\s+|the\s+)?(?:{_JOB})\s+"
            rf"(?:at|with)\s+){_PROPER}"
        ),
        "none",
    ),
    (
        "employer",
        re.compile(
            rf"(?i:\b(?:resigned from|was laid off from|got laid off from|got fired from|was fired from|"
            rf"quit|quits)\s+){_PROPER}"
        ),
        "none",
    ),
    (
        "employer",
        re.compile(rf"(?i:\b(?:quit|quits|left|lost|resigned from)\s+(?:the user's|a|the)\s+(?:{_JOB})\b)"),
        "none",
    ),
    ("employer", re.compile(r"(?i:\bis (?:now )?(?:unemployed|between jobs|out of work|retired)\b)"), "none"),
    (
        "employer",
        re.compile(
            rf"(?i:\b(?:works|is working|working|has been working|started working|is employed|interns|"
            rf"is interning|job|position|role|internship|started|starts)\s+"
            rf"(?:as an? [a-z -]+?\s+)?(?:at|for|by)\s+)(?:the\s+)?{_PROPER}"
        ),
        None,
    ),
    ("employer", re.compile(rf"(?i:\b(?:got hired by|was hired by|hired by)\s+)(?:the\s+)?{_PROPER}"), None),
    (
        "work_location",
        re.compile(
            rf"(?i:\b(?:works|is working|working|job|position|role)\s+(?:as an? [a-z -]+?\s+)?in\s+)"
            rf"(?:the\s+)?{_PROPER}"
        ),
        None,
    ),
    (
        "occupation",
        re.compile(
            r"(?i:\b(?:works as|is employed as|is working as|job is|trained as|became|is now|is)\s+"
            rf"(?:an?\s+)?)((?:(?!the\b|a\b|an\b)[a-z-]+\s+){{0,2}}?(?i:{_OCCUPATIONS}))\b"
        ),
        None,
    ),
    (
        "diet",
        re.compile(
            rf"(?i:\b(?:is|went|turned|became|has gone|is going|switched to|is now)\s+"
            rf"(?:now\s+|a\s+|an\s+|strictly\s+|fully\s+|being\s+|completely\s+)*({_DIETS}))\b"
        ),
        None,
    ),
    (
        "diet",
        re.compile(
            rf"(?i:\b(?:doesn't|does not|no longer|stopped|quit|gave up|cut out)\s+(?:eat(?:s|ing)?\s+)?"
            rf"({_FOODS}))\b"
        ),
        "no {0}",
    ),
    (
        "pet",
        re.compile(
            r"(?i:\b(?:no longer has|doesn't have|does not have|has no|lost|gave away|rehomed)\s+"
            r"(?:an?\s+|the user's\s+)?((?:dog|cat|puppy|kitten|parrot|rabbit|hamster|horse|turtle|guinea pig)s?)\b)"
        ),
        "no {0}",
    ),
    (
        "pet",
        re.compile(
            r"(?i:\b(?:has|got|adopted|just got|rescued)\s+(?:an?|two|three|a new)\s+"
            r"((?:dog|cat|puppy|kitten|parrot|rabbit|hamster|"
            r"horse|turtle|guinea pig)s?)\b)"
        ),
        None,
    ),
)
_FAVORITE = re.compile(r"\bfavou?rite\s+([a-z]+(?:\s+[a-z]+)?)\s+(?:is|are|was)\s+([^,.;!?]+)", _I)
_PREFERENCE = re.compile(
    r"\b(does not like|doesn't like|no longer likes|no longer enjoys|doesn't enjoy|does not enjoy|hates|"
    r"doesn't drink|does not drink|no longer drinks|stopped drinking|quit drinking|gave up|"
    r"dislikes|can't stand|is not a fan of|isn't a fan of|likes|loves|enjoys|prefers|adores|is into|"
    r"is a (?:big |huge )?fan of|is obsessed with|has switched to|switched to|is switching to|now drinks|"
    r"now eats|drinks|eats)\s+([^,.;!?]+)",
    _I,
)
#: "The user has switched from coffee to tea": the old habit ends (a place is a move: see the location slot).
_SWITCHED = re.compile(r"\b(?:switched|changed|swapped|gone over) from ([a-z][\w' -]*?) to [a-z]", _I)
_NOT_MY_THING = re.compile(r"^([\w' -]+?)(?:'s| is| are)\s+(?:not|never)\s+the user's (?:thing|cup of tea|jam)", _I)
_NEGATIVE_PREF = (
    "does not",
    "doesn't",
    "no longer",
    "hates",
    "dislikes",
    "can't stand",
    "is not",
    "isn't",
    "stopped",
    "quit",
    "gave up",
)
_SUBJECT = re.compile(r"^(?:the user's|their|the user and others')\s+((?:[a-z-]+\s+){0,2}?)([a-z]+)\b", _I)
_STOP_HEAD = frozenset({"the", "a", "an", "to", "my", "his", "her", "their", "some", "of", "and", "with", "in"})
_HEAD_END = frozenset(
    """with at in on for when because but and now so the user's every more than over instead anymore these
    there here lately recently too very a lot days most all any again sometimes often daily weekly""".split()
)
_OTHERS_VERB = re.compile(
    r"(?i:\buser's\s+(?:[a-z-]+\s+){0,2}?(?:" + "|".join(sorted(_SOCIAL, key=len, reverse=True)) + r")\b)"
)


def _head(obj: str) -> str:
    toks = words(obj)
    while toks and toks[0] in _STOP_HEAD:
        toks = toks[1:]
    head: list[str] = []
    for t in toks:
        if t in _HEAD_END or t in _STOP_HEAD:
            break
        head.append(t)
        if len(head) == 2:
            break
    return " ".join(head)


def _pref_key(obj: str) -> str:
    """The object of a preference by its first word, singular ("horror movies" → "horror")."""
    first = obj.split()[0] if obj.split() else obj
    return first[:-1] if len(first) > 3 and first.endswith("s") and not first.endswith("ss") else first


def _norm(value: str) -> str:
    v = value.strip().lower()
    v = re.sub(rf"\b(?:now|last (?:{PERIODS})|recently|this year|anymore|any more|after all|either)\b", "", v)
    v = re.sub(r"^(?:the|a|an)\s+", "", v.strip())
    return " ".join(v.split())


def _subject(summary: str) -> tuple[str, str]:
    """``(subject, rest)``: who the statement is about and the text after the subject."""
    m = _SUBJECT.match(summary)
    if m and (m.group(2).lower() in _SOCIAL or _PERSON_VERB.match(summary[m.end() :])):
        # "The user's mum lives in Cork": the mum's home, not the user's (a thing does not live or work)
        return m.group(2).lower(), summary[m.end() :]
    return "user", summary


#: What only a person (or a pet) does: the one it is said of is the slot's subject.
_PERSON_VERB = re.compile(
    r"(?i:\s*,?\s*(?:[A-Z][a-z]+,?\s+)?(?:lives|lived|works|worked|is from|comes from|moved|grew up|was born|studies|"
    r"is studying|is married|got married|is engaged|got engaged|is divorced|got divorced|turned|is retired)\b)"
)


def find_slot(summary: str) -> SlotFact | None:
    """The slot a third-person statement fills, with whose property it is.

    Slots: name, age, location, hometown, employer (``none`` after quitting),
    occupation, diet, relationship_status, pet, ``favorite_<thing>`` and
    ``preference:<object>`` (value ``+`` or ``-``). A statement about someone
    in the user's life ("The user's brother works at Siemens") fills that
    person's slot (``brother.employer``).

    Args:
        summary: a third-person statement.

    Returns:
        The slot, or ``None`` when no rule reads one.

    Example:
        >>> find_slot("The user moved to Denver last month for a new job.").value
        'denver'
        >>> find_slot("The user's girlfriend and the user broke up.").key
        'relationship_status'
    """
    return _found_slot(summary)  # a statement's slot is read several times per page: once is enough


@lru_cache(maxsize=4096)
def _found_slot(summary: str) -> SlotFact | None:
    """:func:`find_slot`, remembered by statement (a pure function of it; a :class:`SlotFact` is immutable)."""
    text = " ".join(summary.replace("’", "'").split())
    named = _NAMED_THING.match(text)
    if named:  # "The user's landlord is called Victor": the landlord's name, not the user's
        return SlotFact(named.group(1).lower(), "name", named.group(2).lower(), named.group(2))
    subject, rest = _subject(text)
    joint = subject != "user" and bool(re.match(r"(?i:\s*and the user\b)", rest))
    if joint:  # "The user's girlfriend and the user broke up": about the user
        subject, rest = "user", text
    fav = _FAVORITE.search(rest)
    if fav:
        return SlotFact(subject, f"favorite_{fav.group(1).lower().strip()}", _norm(fav.group(2)), fav.group(2).strip())
    count = _COUNTED.search(rest)
    if count and not _negated(rest[: count.start()]):  # "The user has two kids": a count that a later one updates
        noun = _singular(count.group(2).lower())
        return SlotFact(subject, f"count:{noun}", str(_number(count.group(1))), count.group(1))
    found = _pattern_slot(subject, rest, text, joint)
    if found is None:
        # "The user is not a student anymore", "… doesn't live in Paris": the slot, negated
        positive = _affirmed(rest)
        if positive != rest:
            plain = _pattern_slot(subject, positive, positive, joint)
            if plain is not None and not plain.value.startswith(("not ", "no ")) and plain.value != "none":
                found = SlotFact(plain.subject, plain.slot, f"not {plain.value}", plain.display)
    if found is not None:
        return found
    nope = _NOT_MY_THING.search(rest)
    if nope and _head(nope.group(1)):
        return SlotFact(subject, f"preference:{_pref_key(_head(nope.group(1)))}", "-", _head(nope.group(1)))
    switched = _SWITCHED.search(rest)
    if switched and _head(switched.group(1)):  # "switched from coffee to tea": coffee no longer
        return SlotFact(subject, f"preference:{_pref_key(_head(switched.group(1)))}", "-", _head(switched.group(1)))
    pref = _PREFERENCE.search(rest)
    if pref:
        verb = pref.group(1).lower()
        obj = _head(pref.group(2))
        if obj:
            key = _pref_key(obj)
            return SlotFact(subject, f"preference:{key}", "-" if verb.startswith(_NEGATIVE_PREF) else "+", obj)
    attribute = _ATTRIBUTE.match(text) or _ATTRIBUTE_OF.match(text)
    if attribute and _specific(attribute.group(2)):
        noun = " ".join(words(attribute.group(1)))
        if noun.split()[-1] not in _SOCIAL and noun.split()[-1] not in _NOT_ATTRIBUTES:
            # "The user's flight is on Monday": the flight's day, which a correction updates
            return SlotFact("user", f"attribute:{noun}", _norm(attribute.group(2)), attribute.group(2).strip())
    return None


def _pattern_slot(subject: str, rest: str, text: str, joint: bool) -> SlotFact | None:
    """The first :data:`_PATTERNS` slot of ``rest``; a value negated in its own clause reads ``not …``."""
    for slot, pattern, constant in _PATTERNS:
        m = pattern.search(rest)
        if not m:
            continue
        if subject == "user" and not joint and _OTHERS_VERB.search(rest[: m.start()]):
            continue  # the verb belongs to someone else ("… the user's sister who lives in Paris")
        if (
            slot == "name"
            and subject == "user"
            and "called" in pattern.pattern
            and not text.lower().startswith("the user")
        ):
            continue  # "Their dog is called Rocky" names someone else
        captured = m.group(1) if m.groups() and m.group(1) else ""
        negated = _negated(rest[: m.start()])  # "The user no longer works at Deloitte"
        if constant is None:
            value = _norm(captured)
            return SlotFact(subject, slot, f"not {value}" if negated else value, captured.strip())
        if negated:
            continue  # "The user didn't quit the job": no state read
        value = constant.format(captured.lower()) if "{0}" in constant else constant
        return SlotFact(subject, slot, value, captured.strip() or value)
    return None


#: A negation in the clause that holds a slot's verb ("is not", "no longer", "doesn't", "never").
_NEGATION = re.compile(r"(?i:\b(?:not|no longer|never)\b|n't\b)")
#: Where a clause starts: a negation before it belongs to another clause.
_CLAUSE_START = re.compile(r"(?i:[,;]|\b(?:but|and|so|because|although|though|while|now)\b)")


def _negated(prefix: str) -> bool:
    """Whether the last clause of ``prefix`` (the text before a slot's verb) is negated."""
    parts = _CLAUSE_START.split(prefix)
    return bool(_NEGATION.search(parts[-1] if parts else prefix))


_NEGATED_VERB = re.compile(
    r"(?i:\b(?:(is|are|was|were)(?:n't|\s+not|\s+no longer)|(?:doesn't|does not|no longer|never)\s+([a-z]+))\b)"
)


def _affirmed(rest: str) -> str:
    """``rest`` with its first negated verb affirmed ("is not a student" → "is a student")."""

    def affirm(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1)
        verb = m.group(2)
        return verb if verb.endswith("s") and not verb.endswith("ss") else _third_person(verb)

    return _NEGATED_VERB.sub(affirm, rest, count=1)


def _third_person(verb: str) -> str:
    if verb in ("have", "do", "go"):
        return {"have": "has", "do": "does", "go": "goes"}[verb]
    if verb.endswith(("sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
#: "The user has two kids", "… owns 3 bikes": how many of a thing (a later count updates it).
_COUNTED = re.compile(
    r"(?i:\b(?:has|have|owns|has got)\s+(?:now\s+)?)(\d{1,3}|"
    + "|".join(_NUMBER_WORDS)
    + r")(?i:\s+(?:[a-z-]+\s+)?)([a-z]+)\b(?!\s+(?:ago|old|of)\b)"
)


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def _singular(noun: str) -> str:
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


#: "The user's landlord is called Victor", "The user's dog's name is Pepper": that one's name.
_NAMED_THING = re.compile(
    r"^(?i:the user's|their)\s+(?:[a-z-]+\s+){0,2}?([a-z-]+)(?:'s name is|\s+is (?:called|named))\s+"
    r"([A-Z][\w'-]+)"
)
#: "The user's flight is on Monday", "The user's locker code is 4471": an attribute with a value.
_ATTRIBUTE = re.compile(r"^(?i:the user's)\s+((?:[a-z-]+\s+){0,2}?[a-z-]+)\s+(?:is|are)\s+(?!not\b|no\b)(.+?)\.?$")
#: "The gate code for the user's building is 4471", "The name of the user's boat is Seabird": the same, said with "of".
_ATTRIBUTE_OF = re.compile(
    r"^(?i:the\s+((?:[a-z-]+\s+){0,2}?[a-z-]+\s+(?:for|of|to|at|on)\s+the user's\s+(?:[a-z-]+\s+)?[a-z-]+)\s+"
    r"(?:is|are)\s+(?!not\b|no\b)(.+?)\.?$)"
)
_NOT_ATTRIBUTES = frozenset(
    {"name", "favorite", "favourite", "job", "age", "birthday", "life", "thing", "plan", "goal"}
)


def _specific(value: str) -> bool:
    """Whether an attribute's value is one that can be replaced: a number, a date or a name, not a description."""
    return bool(re.search(r"\d|\b[A-Z][a-z]+", value.strip())) or bool(
        re.match(r"(?i:on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b)", value.strip())
    )


def as_the_user(summary: str, subject: str) -> str:
    """A fact about a named ``subject`` as the slot rules read it: the subject as "the user".

    Example:
        >>> as_the_user("The user's sister Ana lives in Rome.", "Ana")
        'The user lives in Rome.'
        >>> slot_of(as_the_user("Ana moved to Paris in April 2023.", "Ana"))
        ('location', 'paris')
    """
    if not subject:
        return summary
    name = re.escape(subject)
    # "The user's sister Ana lives in Rome" is about Ana: "Ana lives in Rome"
    text = re.sub(rf"(?i:\bthe user's|\b[A-Z][\w-]*'s)\s+(?:[a-z-]+,?\s+){{0,2}}?(?-i:{name})\b,?", subject, summary)
    text = re.sub(rf"^{name},\s+(?:the user's|[A-Z][\w-]*'s)\s+(?:[a-z-]+\s+){{0,2}}?[a-z-]+,\s+", subject + " ", text)
    text = re.sub(rf"\b{name}\b", "the user", text)
    return text[:1].upper() + text[1:]


def slot_of(summary: str) -> tuple[str, str] | None:
    """``(slot key, value)`` of a third-person statement, or ``None``.

    Example:
        >>> slot_of("The user lives in Denver.")
        ('location', 'denver')
        >>> slot_of("The user no longer likes coffee.")
        ('preference:coffee', '-')
        >>> slot_of("The user's brother works at Siemens.")
        ('brother.employer', 'siemens')
    """
    found = find_slot(summary)
    return None if found is None else (found.key, found.value)


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def canonical_summary(summary: str) -> str:
    """One self-contained statement of the current state of a profile slot.

    Events become states ("The user moved to Denver" → "The user lives in
    Denver."), so that an update replaces a statement of the same shape; a move's
    time is kept ("…, having moved there last month."). A negated state, a
    planned move, a time or duration on another slot, and statements without a
    profile slot come back unchanged.

    Args:
        summary: a third-person statement.

    Returns:
        The canonical statement, or ``summary`` itself.

    Example:
        >>> canonical_summary("The user used to live in Boston but now the user lives in Chicago.")
        'The user lives in Chicago.'
        >>> canonical_summary("The user quits the user's job at Deloitte.")
        'The user no longer works at Deloitte.'
        >>> canonical_summary("The user moved to Canada four years ago.")
        'The user lives in Canada, having moved there four years ago.'
        >>> canonical_summary("The user is not working at Amazon anymore.")
        'The user is not working at Amazon anymore.'
        >>> canonical_summary("The user loves hiking.")
        'The user loves hiking.'
        >>> canonical_summary("The user works as a nurse in Oslo.")
        'The user works as a nurse in Oslo.'
    """
    found = find_slot(summary)
    if found is None or found.value.startswith("not "):
        return summary  # a negated state ("is not a student anymore") is kept as said
    if _PLANNED.search(summary):
        return summary  # "is moving to Austin": not yet where the user lives
    when = relative_time(summary) or (_WRITTEN_TIME.search(summary) or [""])[0]
    moved = found.slot == "location" and _MOVED.search(summary) and when
    if not moved and (when or _TIMED.search(summary)):
        return summary  # "got divorced in 2021", "married for 20 years": the time kept as said
    if found.slot == "occupation" and re.search(r"(?i:\bteach)", summary):
        return summary  # "teaches yoga on weekends": what and when would be lost in "works as a teacher"
    if found.slot == "employer" and re.search(r"(?i:\bis an? [\w -]+? at\b)", summary):
        return summary  # "is an engineer at Google": the role would be lost
    if found.slot in ("employer", "work_location") and re.search(r"(?i:\bas an? [\w -]+? (?:at|for|by|in)\b)", summary):
        return summary  # "works as a nurse in Oslo": the occupation would be lost
    canonical = _canonical(found, summary)
    if moved:  # "moved to Canada four years ago": where the user lives, and since when
        canonical = f"{canonical.rstrip('.')}, having moved there {when}."
    current = re.split(r"(?i:\b(?:used to|previously|formerly|no longer)\b[^.]*?\bbut\b)", summary)[-1]
    kept = {m.group(0) for m in re.finditer(_PROPER, canonical)}
    dropped = [m.group(0) for m in re.finditer(_PROPER, current) if m.group(0) not in kept]  # "Jake and the user …"
    return summary if any(d not in _NOT_NAMES for d in dropped) else canonical


_NOT_NAMES = frozenset({"I", "The", "User"})
#: A time written out or a duration: a canonical statement would drop it.
_TIMED = re.compile(
    r"(?i:\b(?:for (?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|many|several|a few|"
    r"a couple of|over|almost|nearly|about) (?:\w+ )?(?:days?|weeks?|months?|years?|decades?)|(?:19|20)\d\d)\b)|"
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b"
)
#: A time written out after a preposition ("in 2018", "on 3 May", "back in March 2020").
_WRITTEN_TIME = re.compile(
    r"(?i:\b(?:back\s+)?(?:in|on|since|during)\s+(?:the\s+)?(?:(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?-i:January|February|"
    r"March|April|May|June|July|August|September|October|November|December)(?:\s+\d{4})?|(?:19|20)\d\d|"
    r"(?:spring|summer|fall|autumn|winter)(?:\s+(?:of\s+)?(?:19|20)\d\d)?)\b)"
)
#: A move ("moved to", "relocated to"): the location slot's event.
_MOVED = re.compile(r"(?i:\b(?:moved|relocated|moves|has moved|just moved|recently moved|settled)\b)")
#: A change still to come ("is moving to Austin"): not yet the current state.
_PLANNED = re.compile(
    r"(?i:\b(?:is|are) (?:moving|relocating|going to move|planning to move)|will (?:move|relocate)|plans? to move)\b"
)


def _canonical(found: SlotFact, summary: str) -> str:
    who = "The user" if found.subject == "user" else f"The user's {found.subject}"
    v = found.display
    templates = {
        "location": f"{who} lives in {v}.",
        "work_location": f"{who} works in {v}.",
        "hometown": f"{who} is from {v}.",
        "occupation": f"{who} works as {_article(v)} {found.value}.",
        "relationship_status": f"{who} is {found.value}.",
        "age": f"{who} is {found.value} years old.",
        "name": f"{who}'s name is {v}." if found.subject == "user" else f"{who} is named {v}.",
    }
    if found.slot == "employer":
        if found.value == "none":
            return f"{who} no longer works at {v}." if v != "none" else summary
        return f"{who} works at {v}."
    if found.slot == "diet":
        if found.value == "omnivore":
            return f"{who} eats meat."
        if found.value.startswith("no "):
            return f"{who} does not eat {found.value[3:]}."
        return f"{who} is {found.value}."
    if found.slot == "name" and found.subject == "user":
        return f"The user's name is {v}."
    return templates.get(found.slot, summary)


_AGENT_SLOTS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "length",
        re.compile(r"\b(?:short|shorter|brief|briefer|concise|succinct|terse|to the point|one-liners?)\b", _I),
        "short",
    ),
    (
        "length",
        re.compile(r"\b(?:detailed|long|longer|in-depth|in depth|thorough|more detail|elaborate|lengthy)\b", _I),
        "detailed",
    ),
    ("format", re.compile(r"\b(?:bullet points?|bullets|bulleted|lists?)\b", _I), "bullets"),
    ("format", re.compile(r"\b(?:paragraphs?|prose|full sentences)\b", _I), "prose"),
    ("format", re.compile(r"\btables?\b", _I), "tables"),
    ("tone", re.compile(r"\b(?:formal|professional|polite)\b", _I), "formal"),
    ("tone", re.compile(r"\b(?:casual|informal|friendly|relaxed|chill)\b", _I), "casual"),
    ("emoji", re.compile(r"\b(?:no|not use|never use|without|stop using|don't use)\b[^.]*\bemojis?\b", _I), "no"),
    ("emoji", re.compile(r"\bemojis?\b", _I), "yes"),
    ("units", re.compile(r"\b(?:metric|celsius|kilometers|kilometres|kg)\b", _I), "metric"),
    ("units", re.compile(r"\b(?:imperial|fahrenheit|miles|pounds)\b", _I), "imperial"),
)
_LANGUAGE = re.compile(
    r"\b(?:in|speak|use|to|into)\s+(English|Spanish|French|German|Italian|Portuguese|Dutch|Chinese|Japanese|Korean|"
    r"Arabic|Russian|Hindi|Polish|Swedish|Norwegian|Danish|Finnish|Greek|Turkish)\b",
    _I,
)
_ADDRESS = re.compile(r"\bcall (?:the user|me)\s+" + CALLED_NAME)


def agent_slot(summary: str) -> tuple[str, str] | None:
    """The trait slot an instruction to the assistant fills (``agent.length`` …).

    Slots: ``agent.length`` (short / detailed), ``agent.format`` (bullets,
    prose, tables), ``agent.tone``, ``agent.emoji``, ``agent.units``,
    ``agent.language`` and ``agent.address`` (how to call the user).

    Args:
        summary: the trait ("The assistant should keep answers short.").

    Returns:
        ``(slot key, value)`` or ``None``.

    Example:
        >>> agent_slot("The assistant should keep its answers brief.")
        ('agent.length', 'short')
        >>> agent_slot("The assistant should call the user Sam.")
        ('agent.address', 'sam')
    """
    m = _ADDRESS.search(summary)
    if m:
        return "agent.address", m.group(1).lower()
    m = _LANGUAGE.search(summary)
    if m:
        return "agent.language", m.group(1).lower()
    for slot, pattern, value in _AGENT_SLOTS:
        if pattern.search(summary):
            return f"agent.{slot}", value
    return None
