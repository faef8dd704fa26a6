"""The slot table of :mod:`.slots`: each property slot with the pattern that reads it, and its word lists.

:data:`_PATTERNS` lists, in the order they are tried, ``(slot, pattern, constant)``: the slot a
third-person statement fills when the pattern matches it, its value the pattern's first group (or the
constant, ``{0}`` the group). :data:`CAR_MAKES` and :data:`NOT_A_NAME_LEAD` are read by the fact rules too.

Example:
    >>> [slot for slot, pattern, _ in _PATTERNS if pattern.search("lives in Denver")][:1]
    ['location']
"""

from __future__ import annotations

import re

from langchain_memoryos.controllers.lexicon import CALLED_NAME, NUMBER_WORDS, PARTNERS

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
_NUMBER = "(?i:" + "|".join(NUMBER_WORDS) + ")"  # a count written as a word ("seven")
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
    # "My daughter Lily is 6 and obsessed with dinosaurs": the age, said before more about her
    ("age", re.compile(r"^\s*(?i:(?:the user\s+)?is\s+)(\d{1,2})(?=\s*,?\s+(?i:and|but)\s+(?!a half\b|\d))"), None),
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
    # "The user has gone back to eating meat", "… is back on meat": no longer vegetarian
    (
        "diet",
        re.compile(
            r"(?i:\b(?:is back to|went back to|has gone back to|gone back to|is back on|went back on)\s+(?:eating\s+)?"
            r"(?:meat|red meat|chicken|beef|pork|steak|bacon)\b)"
        ),
        "omnivore",
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
    # "Lily turned 7", "Lily just turned seven": a birthday, the new age ("When John turned ten, …" tells of a past one)
    (
        "age",
        re.compile(
            r"(?i:^(?!.*\b(?:when|since|after|before|until|once|by the time)\s+(?:\S+\s+){0,3}?(?:just\s+)?turned\b).*?"
            r"\b(?:just turned|turned|is turning)\s+)(\d{1,3}|" + _NUMBER + r")\b(?!\s+(?:of|into)\b)"
        ),
        None,
    ),
    # "The user moved from Berlin to Munich": where the user lives now
    (
        "location",
        re.compile(
            rf"(?i:\b(?:moved|relocated|has moved|just moved|recently moved)\s+from\s+){_CAP}(?:\s+{_CAP})*"
            rf"(?i:,?\s+to\s+)(?:the\s+)?{_PROPER}"
        ),
        None,
    ),
    # "The user lives at 8 Harbour Road in Cork", "The user's new address: 12 Rue Lafayette, Nantes": where the
    # user lives, to the street (a new address updates the home, and a move to another city the address)
    (
        "location",
        re.compile(
            r"(?i:\b(?:lives|is living|resides|moved|has moved|just moved|relocated)\s+(?:at|to)\s+)"
            r"(\d{1,5}[A-Za-z]?,?\s+[^.;!?]+?)(?=\s*[.;!?]|$)"
        ),
        None,
    ),
    (
        "location",
        re.compile(r"^(?i:the user's\s+(?:new\s+|current\s+|home\s+)*address(?:\s+is|\s*:)\s+)(\w[^;!?]*?)\.?$"),
        None,
    ),
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
    # "The user's new job is at Spotify": the employer, which the next one updates
    (
        "employer",
        re.compile(rf"(?i:\b(?:job|position|role|workplace)\s+is\s+(?:now\s+)?(?:at|with)\s+)(?:the\s+)?{_PROPER}"),
        None,
    ),
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
