"""The prompts of :class:`~langchain_memoryos.controllers.llm.LLMController`, one per judgement.

Each is a ``str.format`` template. Every prompt asks for answers in the
conversation's own language and gives dates, so that relative time ("last
week") becomes an absolute date in what is stored. Override any of them with
``LLMController(model, prompts=Prompts(analyze_page=...))``.

Example:
    >>> "{page}" in DEFAULT_ANALYZE_PAGE_PROMPT
    True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_ANALYZE_PAGE_PROMPT",
    "DEFAULT_FUSE_PROMPT",
    "DEFAULT_JUDGE_RELATIONS_PROMPT",
    "DEFAULT_PARSE_RECORDS_PROMPT",
    "DEFAULT_PROMOTE_SEGMENT_PROMPT",
    "DEFAULT_SYSTEM_PROMPT",
    "Prompts",
]

#: The system message of every judgement.
DEFAULT_SYSTEM_PROMPT = (
    "You maintain the long-term memory of an assistant about one user. You never answer the user; you "
    "only fill in the requested structure. Write every text field in the language the conversation is "
    "in. Resolve relative times ('yesterday', 'last week') to absolute dates using the dates given."
)

_RECORD_RULES = (
    "Typed records: one record per distinct fact worth remembering across conversations (none for "
    "small talk, greetings, questions or one-off tasks). For each: aspect (personal_profile, "
    "social_relationship, activity, health, preference, other); intent (inform, request, express, "
    "plan, reflect, other); personal (true if it is reusable information about the user); entities "
    "(names, places, things that anchor it); summary (one self-contained, affect-neutral sentence in "
    "the third person about 'the user', stating the current state: 'The user lives in Denver.'); "
    "sentiment (positive, neutral, negative: the user's feeling, kept out of the summary); confidence "
    "(1.0 explicit and stable; multiply by 0.6 for each hedge such as 'maybe' or 'I think', by 0.4 for "
    "a passing state, by 0.7 if ambiguous); kind ('agent' when it says how the assistant should behave, "
    "e.g. answer length or tone, else 'user')."
)

_PAGE_RECORD_RULES = (
    "Records: the facts worth remembering across conversations about the people speaking in the current "
    "page ([] for none). Known names: {names}. Each record's summary is one self-contained statement of at "
    "most 20 words and shorter than the words it comes from, in the third person, that names the person it "
    "is about: the name written before their words ('Caroline: ...') or the known name ('the user' only "
    "while the user's name is unknown; never a fact from the words of an unnamed assistant). A named person "
    "the speaker talks about is the subject of their own record ('My sister Ana lives in Rome' -> summary "
    "'The user's sister Ana lives in Rome.', subject 'Ana'). Resolve every pronoun ('it', 'she', 'that "
    "trip') from the page, the previous page or the chain summary, or leave the fact out. Resolve every "
    "relative time against the date the current page was said and write dates as '7 May 2023': for a page "
    "said on Monday, 8 May 2023, 'yesterday' -> 'on 7 May 2023', 'last week' -> 'in the week before 8 May "
    "2023', 'next month' -> 'in June 2023', 'two years ago' -> 'in 2021', 'last Friday' -> 'on 5 May "
    "2023'. No feelings, thanks, greetings, compliments, small talk or questions, and no closing remark in "
    "a fact (', still sore', ', in case it matters', ', can't believe it'). A sentence about someone else "
    "who is named ('Mel got a puppy', Mel being the other speaker Melanie) is their record. Requests about the "
    "memory: 'Please remember that ...', 'Note that ...', 'Remember: ...' -> the fact alone, without the "
    "request; 'Call me Sam' -> 'The user goes by Sam.'; 'Forget ...', 'Don't remember ...' -> no record, "
    "but one entry in requests (request 'forget', about: what is to be forgotten, subject: who asks, '' for "
    "the unnamed user). A change ('I eat meat now', 'I no longer ...', 'Actually, I live in ...') is "
    "written as the current state ('The user eats meat.'). At most 3 records per person: the most "
    "informative ones. For each: subject (the name the summary is about, '' for the user when unnamed); "
    "aspect (personal_profile, social_relationship, activity, health, preference, other); intent (inform, "
    "request, express, plan, reflect, other); personal (true if it is reusable information about the "
    "person); entities (names, places, things that anchor it); summary; sentiment (positive, neutral, "
    "negative: kept out of the summary); confidence (1.0 explicit and stable; multiply by 0.6 for each hedge "
    "such as 'maybe', by 0.4 for a passing state, by 0.7 if ambiguous); kind ('agent' when the user says how "
    "the assistant should behave, e.g. answer length or tone, else 'user')."
)

#: One call per page, when it is added to short-term memory; its records go through the AMU write path at once
#: (judged and fused offline: no further call). Its fields: ``previous``, ``previous_date``, ``meta``,
#: ``page``, ``date`` (written out, with its weekday and ISO form) and ``names`` (the known names of the
#: user and the assistant).
DEFAULT_ANALYZE_PAGE_PROMPT = (
    "A dialogue page was just added to short-term memory.\n\n"
    "Previous page of this thread (said on {previous_date}):\n{previous}\n\n"
    "Current chain summary (meta): {meta}\n\n"
    "Current page (said on {date}):\n{page}\n\n"
    "Decide: linked (does the current page continue the topic of the previous page?); chain_meta (if "
    "linked, the chain summary updated with this page, else a summary of this page alone; at most two "
    "sentences); keywords (up to 8 short topic keywords of this page); topic_summary (one line naming "
    "the topic, used if this page starts a new topic segment); records and requests (see below).\n\n"
    + _PAGE_RECORD_RULES
)

#: One call per promotion of a hot segment. Its fields: ``summary``, ``pages``, ``profile``, ``traits``, and the
#: allowed keys ``profile_keys`` and ``trait_dimensions`` (the persona vocabulary of :mod:`langchain_memoryos.schema`).
DEFAULT_PROMOTE_SEGMENT_PROMPT = (
    "A topic segment of the user's conversations is being consolidated into long-term memory.\n\n"
    "Segment summary so far: {summary}\n\n"
    "Its new dialogue pages:\n{pages}\n\n"
    "Current user profile: {profile}\n"
    "Current user traits: {traits}\n\n"
    "Return: segment_summary (the refreshed summary of the whole segment, at most three sentences); "
    "segment_keywords (up to 12); user_profile (the full updated set of static attributes, as key/value "
    "pairs with keys only from: {profile_keys}; keep the current ones unless the pages change them; "
    "anything else belongs in records); user_traits (the full updated traits, as dimension/values pairs "
    "with short values, dimensions only from these three groups: {trait_dimensions}); records (only "
    "agent traits: how the assistant should behave, kind 'agent'; the facts of each page were already "
    "written; [] for none).\n\n" + _RECORD_RULES
)

#: A fact given directly (``add_fact``, a memory tool).
DEFAULT_PARSE_RECORDS_PROMPT = (
    "Parse this statement, given on {date} as a {kind} memory, into typed records.\n\n"
    "Statement: {text}\n\n" + _RECORD_RULES
)

#: One call per admitted record that has candidates.
DEFAULT_JUDGE_RELATIONS_PROMPT = (
    "A new memory record is about to be written. Existing records that may concern the same thing:\n"
    "{candidates}\n\n"
    "New record (from {date}): {record}\n\n"
    "For every existing record, give its number and a label: 'duplicate' (the new record says the same "
    "thing, nothing new), 'update' (same subject and property, and the new record changes or refines "
    "it, e.g. a new city, employer or preference), or 'separate' (a different fact)."
)

#: One call per update.
DEFAULT_FUSE_PROMPT = (
    "Merge a new memory record with the older records it updates into one current record.\n\n"
    "Older records:\n{updated}\n\n"
    "New record (from {date}): {record}\n\n"
    "Return the merged record: summary (one self-contained, third-person sentence with the current "
    "state; the newer information wins; keep older details that are still true), entities, and "
    "confidence (0-1)."
)


@dataclass(frozen=True)
class Prompts:
    """The prompt templates of one :class:`~langchain_memoryos.controllers.llm.LLMController`.

    Example:
        >>> p = Prompts(fuse="Merge {updated} into {record} ({date}).")  # the other templates stay the defaults
        >>> p.fuse.format(updated="Oslo", record="Bergen", date="2024-05-01"), p.fuse != DEFAULT_FUSE_PROMPT
        ('Merge Oslo into Bergen (2024-05-01).', True)
        >>> p.judge_relations == DEFAULT_JUDGE_RELATIONS_PROMPT
        True
    """

    system: str = DEFAULT_SYSTEM_PROMPT
    analyze_page: str = DEFAULT_ANALYZE_PAGE_PROMPT
    promote_segment: str = DEFAULT_PROMOTE_SEGMENT_PROMPT
    parse_records: str = DEFAULT_PARSE_RECORDS_PROMPT
    judge_relations: str = DEFAULT_JUDGE_RELATIONS_PROMPT
    fuse: str = DEFAULT_FUSE_PROMPT
