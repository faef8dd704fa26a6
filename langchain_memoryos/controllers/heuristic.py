"""The offline, deterministic controller: no model, the zero-config default.

* chain link: embedding similarity to the previous page or a reference cue
  ("and", "it", "what about" …) within a few hours on the same thread;
* chain meta and segment summaries: extractive (first sentences and keywords);
* keywords: YAKE;
* typed records: of a page, one self-contained third-person fact per speaker
  side (:mod:`langchain_memoryos.controllers.facts`); of a given statement,
  the rules of :mod:`langchain_memoryos.controllers.rules`;
* relation judge: the same person's slot first, then similarity bands;
* fuse: the new state wins, provenance is merged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_memoryos.config import MODEL_THRESHOLDS, ModelThresholds
from langchain_memoryos.controllers.fact_cleaning import request_tail
from langchain_memoryos.controllers.facts import (
    kept_statement,
    own_statement,
    page_fact_records,
    page_requests,
    split_speaker,
)
from langchain_memoryos.controllers.lexicon import PARTNERS, words
from langchain_memoryos.controllers.relation_rules import LIGHT_WORDS as _LIGHT_WORDS
from langchain_memoryos.controllers.relation_rules import TIME_WORDS as _TIME_WORDS
from langchain_memoryos.controllers.relation_rules import other_occurrence, replaces, same_slot_key
from langchain_memoryos.controllers.rewrite import agent_summary, gist, split_sentences, third_person
from langchain_memoryos.controllers.rules import (
    ASPECT_LEXICON,
    SentenceFacts,
    analyze_sentence,
    change_cue,
    memory_request,
    query_aspects,
    slot_of,
)
from langchain_memoryos.controllers.slots import agent_slot, as_the_user, find_slot
from langchain_memoryos.index.lexical import STOPWORDS
from langchain_memoryos.kernel.controller import (
    BaseController,
    FuseResult,
    PageAnalysis,
    PageContent,
    PageReading,
    ParsedRecords,
    PromotionResult,
    QueryPlan,
    RelationJudgement,
)
from langchain_memoryos.retrieval.keywords import extract_keywords, merge_keywords
from langchain_memoryos.schema import PROFILE_KEYS, DialoguePage, FactKind, MemoryRecord, Persona, Relation, Segment
from langchain_memoryos.scoring import states_new_use, states_reversal

__all__ = ["HeuristicController", "PageContent", "PageReading"]

_REFERENCE_START = re.compile(
    r"^(?:and|also|but|so|then|what about|how about|it|that|this|they|those|he|she|yes|no|yeah|"
    r"right|exactly|same|too|oh and|btw|by the way)\b",
    re.IGNORECASE,
)
_MAX_CHAIN_GAP_SECONDS = 6 * 3600
_CHAIN_ITEMS = 3
_ACTIVITIES = frozenset(w for w in ASPECT_LEXICON["activity"] if len(w) > 3 and w.endswith("ing")) | frozenset(
    {
        "yoga",
        "chess",
        "guitar",
        "piano",
        "violin",
        "drums",
        "soccer",
        "football",
        "basketball",
        "tennis",
        "golf",
        "marathon",
        "photography",
        "pottery",
    }
)
_PROFILE_SLOTS = frozenset(PROFILE_KEYS)  # the slots that become profile attributes


def _slot_value(summary: str, kind: str) -> tuple[str, str] | None:
    """The slot key and value of a summary: agent traits and user facts have their own slots."""
    return agent_slot(summary) if kind == "agent" else slot_of(summary)


def _record(facts: SentenceFacts, kind: str) -> MemoryRecord:
    record_kind: FactKind = "agent" if facts.agent_directed or kind == "agent" else "user"
    slot = _slot_value(facts.summary, record_kind) if facts.summary else None
    return MemoryRecord(
        slot=slot[0] if slot else "",
        kind=record_kind,
        aspect=facts.aspect,  # type: ignore[arg-type]
        intent=facts.intent,  # type: ignore[arg-type]
        personal=facts.personal,
        entities=list(facts.entities),
        summary=facts.summary,
        sentiment=facts.sentiment,  # type: ignore[arg-type]
        confidence=facts.confidence,
    )


#: A first-person word: a query without one needs no third-person rewrite.
_FIRST_PERSON = re.compile(r"(?i)\b(?:i|me|my|mine|myself|i'm|i've|i'd|i'll|im|ive)\b")


class HeuristicController(BaseController):
    """Rule- and similarity-based controller that needs no model.

    Args:
        thresholds: similarity thresholds for the embedding model in use
            (``chain_similarity`` and ``duplicate_similarity`` are used here).
        page_keywords: keywords per page.

    Example:
        >>> from langchain_memoryos.schema import DialoguePage
        >>> c = HeuristicController()
        >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted!")
        >>> [r.summary for r in c.analyze_page(page, None, None).records]
        ['The user is vegan.']
    """

    name = "heuristic"
    #: its judgements are computed in process with no IO, so a write may make them under the user's lock
    #: (a controller without ``local = True`` is treated as one that calls a model)
    local = True

    def __init__(self, thresholds: ModelThresholds | None = None, *, page_keywords: int = 8) -> None:
        self.thresholds = thresholds or MODEL_THRESHOLDS["all-MiniLM-L6-v2"]
        self.page_keywords = page_keywords
        self._explicit_thresholds = thresholds is not None

    def adopt_thresholds(self, thresholds: ModelThresholds) -> None:
        """Take the memory's thresholds unless thresholds were given explicitly.

        ``MemoryOS`` calls this so that a controller created without arguments
        follows the embedding model in use.

        Example:
            >>> c = HeuristicController(); c.adopt_thresholds(MODEL_THRESHOLDS["default"])
            >>> c.thresholds.chain_similarity
            0.5
        """
        if not self._explicit_thresholds:
            self.thresholds = thresholds

    # -- pages ---------------------------------------------------------------

    def _linked(self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None) -> bool:
        if previous is None or previous.thread_id != page.thread_id:
            return False
        gap = (page.timestamp - previous.timestamp).total_seconds()
        if gap > _MAX_CHAIN_GAP_SECONDS:
            return False
        if similarity is not None and similarity >= self.thresholds.chain_similarity:
            return True
        return bool(_REFERENCE_START.match(page.user_input.strip()))

    def records_from_text(self, text: str, kind: str = "user") -> list[MemoryRecord]:
        """Typed records of every sentence that states or asks something personal.

        Sentences with neither a personal statement nor a request yield
        nothing. A request that also states a fact ("book a vegan place, I'm
        vegan") yields the request and the fact as two records, so the gate
        rejects the task and keeps the fact.

        Example:
            >>> [(r.intent, r.summary) for r in HeuristicController().records_from_text("Book a table, I'm vegan.")]
            [('request', 'Book a table, the user is vegan.'), ('inform', 'The user is vegan.')]
            >>> [r.personal for r in HeuristicController().records_from_text("Book a table, I'm vegan.")]
            [False, True]
        """
        out: list[MemoryRecord] = []
        for sentence in split_sentences(text):
            request, rest = memory_request(sentence)
            if not request and kept_statement(sentence):
                request, rest = "remember", kept_statement(sentence)  # "From now on, remember I'm vegetarian"
            if request == "forget":
                continue  # a request about the memory: never a record (see facts.page_requests)
            if request == "remember":
                sentence = own_statement(rest, asked=True)  # "Remember that I'm vegan": the statement is the fact
            facts = analyze_sentence(sentence)
            if kind == "agent":
                facts = _as_agent_trait(sentence, facts)
            if not (facts.summary or facts.intent == "request"):
                continue
            record = _record(facts, kind)
            out.append(record)
            if facts.intent == "request" and not facts.agent_directed and kind != "agent":
                for clause in _EMBEDDED_FACT.findall(sentence):
                    inner = analyze_sentence(clause)
                    if inner.summary and inner.personal and inner.intent != "request":
                        out.append(_record(inner, kind))
                        record.personal = False  # the fact is its own record; the task is not kept
        return out

    def page_content(self, page: DialoguePage) -> PageContent:
        """Gist, YAKE keywords, agent traits and fact records of a page (what needs no other page).

        Example:
            >>> p = DialoguePage(id="p", user_input="I live in Lyon.", agent_response="Nice city.")
            >>> [r.summary for r in HeuristicController().page_content(p).records]
            ['The user lives in Lyon.']
        """
        this_gist = gist(page.user_input) or gist(page.agent_response)
        keywords = extract_keywords(f"{page.user_input}\n{page.agent_response}", self.page_keywords)
        # an instruction to the assistant; a named other side is a person, whom "you" addresses, not the assistant
        named_other = bool(split_speaker(page.agent_response)[0])
        said = split_speaker(page.user_input)[1]
        traits = [] if named_other else self.records_from_text(said)
        traits = [r for r in traits if r.kind == "agent"]
        # "I'm not a morning person, so don't book me anything before 10 am": the request is a trait of its own
        traits += [] if named_other else [t for t in map(_asked_trait, split_sentences(said)) if t is not None]
        return PageContent(this_gist, keywords, traits + page_fact_records(page), page_requests(page))

    def read_ahead(self, page: DialoguePage, content: PageContent | None = None) -> PageReading | None:
        """The page's content read now, for :meth:`analyze_page` of the page (``None``: not this class).

        Thread-safe (a pure function of the page): ``add_turn`` calls it in a
        worker thread while the page is embedded. A subclass that redefines
        :meth:`page_content` or :meth:`analyze_page` reads nothing ahead: its
        pages are analysed in ``chain_link``, under the user's lock.

        Args:
            page: the page.
            content: its :meth:`page_content` computed elsewhere (by this class, in a worker process).

        Example:
            >>> page = DialoguePage(id="p", user_input="I live in Lyon.", agent_response="Nice city.")
            >>> HeuristicController().read_ahead(page).content.keywords
            ['lyon', 'live', 'city']
        """
        cls = type(self)
        if cls.page_content is not HeuristicController.page_content or (
            cls.analyze_page is not HeuristicController.analyze_page
        ):
            return None
        return PageReading.read(self, page, content or self.page_content(page))

    def analyze_page(
        self,
        page: DialoguePage,
        previous: DialoguePage | None,
        similarity: float | None,
        content: PageContent | None = None,
    ) -> PageAnalysis:
        """Chain link, extractive chain meta, YAKE keywords, gist; the page's facts and agent traits.

        The records are the user side's instructions to the assistant (agent
        traits) and one fact record per speaker side
        (:func:`~langchain_memoryos.controllers.facts.page_fact_records`).
        ``content``: the page's :meth:`page_content` when it was computed ahead.

        Example:
            >>> p = DialoguePage(id="p", user_input="I live in Lyon.", agent_response="Nice city.")
            >>> HeuristicController().analyze_page(p, None, None).chain_meta
            'I live in Lyon.'
        """
        linked = self._linked(page, previous, similarity)
        if content is None:
            content = self.page_content(page)
        this_gist, keywords = content.gist, list(content.keywords)
        if linked and previous is not None and previous.meta:
            items = [x for x in previous.meta.split(" → ") if x][-(_CHAIN_ITEMS - 1) :] + [this_gist]
            meta = " → ".join(items)
        else:
            meta = this_gist
        topic = this_gist
        if keywords:
            topic = f"{', '.join(keywords[:4])}: {this_gist}" if this_gist else ", ".join(keywords[:4])
        records = list(content.records)
        return PageAnalysis(
            linked=linked,
            chain_meta=meta,
            keywords=keywords,
            topic_summary=topic,
            records=records,
            requests=list(content.requests),
        )

    # -- promotion -------------------------------------------------------------

    def promote_segment(self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona) -> PromotionResult:
        """Extractive summary, merged keywords, profile slots and trait lists.

        Example:
            >>> from langchain_memoryos.schema import Segment, Persona
            >>> p = DialoguePage(id="p", user_input="My name is Ana. I love chess.", agent_response="Hi Ana!")
            >>> r = HeuristicController().promote_segment(Segment(id="s"), [p], Persona())
            >>> r.user_profile["name"], r.user_traits["interests"]
            ('Ana', ['chess'])
        """
        keywords = merge_keywords([p.keywords for p in pages] + [segment.keywords], 12)
        gists = [g for g in (gist(p.user_input, 70) for p in pages[:3]) if g]
        summary = f"Conversation about {', '.join(keywords[:5])}"
        if gists:
            summary += ": " + " / ".join(gists)
        profile = dict(persona.user_profile)
        traits = {k: list(v) for k, v in persona.user_traits.items()}
        for page in pages:
            for sentence in split_sentences(page.user_input):
                facts = analyze_sentence(sentence)
                if not facts.summary or not facts.personal or facts.agent_directed:
                    continue
                if facts.confidence < 0.5:
                    continue
                slot = slot_of(facts.summary)
                if slot is None:
                    if facts.aspect == "activity":
                        _add_trait(traits, "activities", [w for w in words(sentence) if w in _ACTIVITIES][:2])
                    continue
                key, value = slot
                if key in _PROFILE_SLOTS:
                    original = _original_case(sentence, value)
                    profile[key] = original
                elif key == "nickname" and not profile.get("name"):
                    profile["name"] = _original_case(sentence, value)  # "I go by Rafa": the name they use
                elif key.startswith("favorite_"):
                    _add_trait(traits, "favorites", [f"{key[9:]}: {_original_case(sentence, value)}"])
                elif key.startswith("preference:"):
                    obj = key.split(":", 1)[1]
                    if value == "+":
                        _add_trait(traits, "interests", [obj])
                        _remove_trait(traits, "dislikes", obj)
                    else:
                        _add_trait(traits, "dislikes", [obj])
                        _remove_trait(traits, "interests", obj)
        return PromotionResult(
            segment_summary=summary,
            segment_keywords=keywords,
            user_profile=profile,
            user_traits=traits,
        )

    # -- AMU -------------------------------------------------------------------

    def parse_records(self, text: str, kind: str) -> ParsedRecords:
        """Parse directly given text into typed records, one fact each.

        A fact in the third person ("The user is vegan") is taken as it is; a
        first-person one is rewritten. For ``kind="agent"`` every instruction
        becomes a trait ("keep it short" → "The assistant should keep it
        short."). Text that states nothing yields one unpersonal record, which
        the write-gate then filters (so the decision is still logged).

        Example:
            >>> HeuristicController().parse_records("I live in Oslo", "user").records[0].summary
            'The user lives in Oslo.'
            >>> [r.summary for r in HeuristicController().parse_records("Hi! I'm Ana and I'm vegan.", "user").records]
            ["The user's name is Ana.", 'The user is vegan.']
        """
        text = " ".join((text or "").split())
        records = self.records_from_text(text, kind)
        if not records:
            records = [_record(analyze_sentence(text), kind)]
        for record in records:
            record.kind = "agent" if kind == "agent" else "user"
        return ParsedRecords(records)

    def judge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """The same person's slot → duplicate (same value) or update (new value); else similarity bands.

        Facts about two people (``subject``) never relate: "Caroline lives in
        Boston" does not update "Melanie lives in Denver". A change cue
        ("just", "started", "new" …) updates nothing by itself: only a slot
        (location, employer, diet …) of the same person, or an ended
        relationship, is updated; a fact in the duplicate band is a duplicate.

        Example:
            >>> new = MemoryRecord(summary="The user lives in Denver.")
            >>> old = MemoryRecord(id="a", summary="The user lives in Boston.")
            >>> HeuristicController().judge_relations(new, [(old, 0.8)]).relations[0].label
            'update'
            >>> new = MemoryRecord(summary="Jo just started a new painting class.", subject="Jo")
            >>> old = MemoryRecord(id="b", summary="Jo painted a lake.", subject="Jo", entities=["painting"])
            >>> HeuristicController().judge_relations(new, [(old, 0.7)]).relations[0].label
            'separate'
        """
        new_slot = _fact_slot(record)
        relations: list[Relation] = []
        for cand, sim in candidates:
            if _ended_with(record, new_slot, cand):
                relations.append(Relation(cand.id, "update", sim, f"the relationship with {cand.subject} ended"))
                continue
            if _gone(record, cand):
                relations.append(Relation(cand.id, "update", sim, f"{record.subject} is gone"))
                continue
            if _subject(cand) != _subject(record):
                relations.append(Relation(cand.id, "separate", sim, "facts about different people"))
                continue
            old_slot = _fact_slot(cand)
            if new_slot is not None and old_slot is not None and same_slot_key(new_slot[0], old_slot[0]):
                if new_slot[1] == old_slot[1]:
                    relations.append(Relation(cand.id, "duplicate", sim, f"same {new_slot[0]}: {new_slot[1]}"))
                else:
                    relations.append(
                        Relation(cand.id, "update", sim, f"{new_slot[0]} changed: {old_slot[1]} → {new_slot[1]}")
                    )
                continue
            if new_slot is not None and new_slot[0] == "relationship_status" and new_slot[1] in _ENDED:
                text = _neutral(cand)
                subject = find_slot(text)
                if (
                    (old_slot is not None and old_slot[0] == "relationship_status")
                    or (subject is not None and subject.subject in PARTNERS)
                    or _PARTNER_WORDS.search(text)
                ):
                    relations.append(Relation(cand.id, "update", sim, "the relationship ended"))
                    continue
            if states_new_use(record, cand):
                relations.append(Relation(cand.id, "update", sim, "a new one of what the fact says is used"))
                continue
            if states_reversal(record, cand):
                relations.append(Relation(cand.id, "update", sim, "what the fact holds was left or taken back"))
                continue
            if replaces(record, cand):
                relations.append(Relation(cand.id, "update", sim, "a correction of the value the fact holds"))
                continue
            if sim >= self.thresholds.duplicate_similarity and not other_occurrence(record, cand):
                stated = _STRONG_CHANGE.search(record.summary) and not change_cue(cand.summary)
                if stated and _entity_shift(record, cand):
                    relations.append(Relation(cand.id, "update", sim, "a stated change with new entities"))
                else:
                    relations.append(Relation(cand.id, "duplicate", sim, f"similarity {sim:.2f} in duplicate band"))
                continue
            if _STRONG_CHANGE.search(record.summary) and _shared_entities(record, cand):
                relations.append(Relation(cand.id, "update", sim, "a stated change on a shared entity"))
                continue
            if _STATED_END.search(record.summary) and _shared_content(record, cand):
                relations.append(Relation(cand.id, "update", sim, "a stated end of what the fact says"))
                continue
            relations.append(Relation(cand.id, "separate", sim, "different fact that can coexist"))
        return RelationJudgement(relations)

    def plan_query(self, query: str) -> QueryPlan:
        """The query in the third person (as facts are written) and the aspects it is about (English rules).

        Facts are stored in the third person ("The user lives in Denver."), and
        MiniLM scores a first-person question against them far lower than the
        same question about "the user" (0.27 against 0.63 for that pair), so the
        read path matches facts with both forms and keeps the better cosine.

        A query with no first-person word is kept as asked (one encoding at read time, not two).

        Example:
            >>> plan = HeuristicController().plan_query("Where do I live?")
            >>> plan.fact_query, sorted(plan.aspects)
            ('Where do the user lives.', ['personal_profile'])
            >>> HeuristicController().plan_query("Where does Ana live?").fact_query
            'Where does Ana live?'
        """
        if not _FIRST_PERSON.search(query):
            return QueryPlan(query, frozenset(query_aspects(query)))
        try:
            fact_query = third_person(query) or query
        except Exception:  # noqa: BLE001 - a rewrite must never break retrieval
            fact_query = query
        return QueryPlan(fact_query, frozenset(query_aspects(query)))

    def fuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """Keep the new state (and its slot); merge provenance; keep the earliest creation time.

        Example:
            >>> new = MemoryRecord(summary="The user lives in Denver.", source_page_ids=["p2"])
            >>> old = MemoryRecord(id="a", summary="The user lives in Boston.", source_page_ids=["p1"])
            >>> HeuristicController().fuse(new, [old]).record.source_page_ids
            ['p1', 'p2']
        """
        sources: list[str] = []
        for r in [*updated, record]:
            for s in r.source_page_ids:
                if s not in sources:
                    sources.append(s)
        created = min([r.created_at for r in updated] + [record.created_at]) if updated else record.created_at
        fused = MemoryRecord(
            id="",
            kind=record.kind,
            aspect=record.aspect,
            intent=record.intent,
            personal=record.personal,
            entities=list(record.entities),
            summary=record.summary,
            sentiment=record.sentiment,
            confidence=record.confidence,
            created_at=created,
            updated_at=record.updated_at,
            source_page_ids=sources,
            slot=record.slot,
            subject=record.subject,
            valid_at=record.valid_at,  # when the new state was said
        )
        return FuseResult(fused)

    async def aanalyze_page(
        self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None
    ) -> PageAnalysis:
        """Async twin (no IO: runs inline)."""
        return self.analyze_page(page, previous, similarity)

    async def apromote_segment(
        self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona
    ) -> PromotionResult:
        """Async twin (no IO: runs inline)."""
        return self.promote_segment(segment, pages, persona)

    async def aparse_records(self, text: str, kind: str) -> ParsedRecords:
        """Async twin (no IO: runs inline)."""
        return self.parse_records(text, kind)

    async def ajudge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """Async twin (no IO: runs inline)."""
        return self.judge_relations(record, candidates)

    async def afuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """Async twin (no IO: runs inline)."""
        return self.fuse(record, updated)


_ENDED = frozenset({"single", "separated", "divorced", "widowed"})
_PARTNER_WORDS = re.compile(r"\b(?:" + "|".join(sorted(PARTNERS)) + r"|dating|anniversary|in a relationship)\b", re.I)
_EMBEDDED_FACT = re.compile(
    r"\b(?:I'm|I’m|I am|I've|I’ve|I have|I live|I work|I don't eat|I do not eat|I can't eat|my \w+ (?:is|are|has))"
    r"\b[^,.;!?]*",
    re.IGNORECASE,
)


def _as_agent_trait(sentence: str, facts: SentenceFacts) -> SentenceFacts:
    """Read a sentence given as an agent trait: an instruction to the assistant."""
    if facts.agent_directed:
        return facts
    body = _INTERJECTION_ONLY.sub("", facts.sentence or sentence).strip(" .!,?")
    if len(words(body)) < 2:
        return facts  # "Thanks!" is not a trait
    if re.match(r"^(?:the assistant|assistant)\b", body, re.IGNORECASE):
        summary = body[0].upper() + body[1:] + "."
    else:
        summary = agent_summary(body)
    facts.summary = summary
    facts.personal = True
    facts.intent = "request"
    facts.agent_directed = True
    facts.aspect = "preference" if facts.aspect == "other" else facts.aspect
    facts.entities = facts.entities or extract_keywords(body, 3) or words(body)[:3]
    facts.confidence = max(facts.confidence, 0.75) if facts.confidence >= 0.5 else facts.confidence
    return facts


def _asked_trait(sentence: str) -> MemoryRecord | None:
    """The trait a statement's closing request asks for (", so no wine pairings please"), or ``None``."""
    ask = request_tail(sentence)
    if not ask or analyze_sentence(sentence).agent_directed:
        return None  # none, or the sentence is an instruction already (its own trait)
    return _record(_as_agent_trait(ask, analyze_sentence(ask)), "agent")


_INTERJECTION_ONLY = re.compile(r"^(?:(?:oh|ok|okay|hey|hi|so|well|and|also|thanks|thank you)\b[\s,!.]*)+", re.I)


#: A change stated outright ("no longer", "moved", "quit" …): it may update a fact that shares an entity.
#: Softer cues ("just", "started", "new", "recently") only tell a story and update nothing (a story told
#: over sessions is not a change of state).
_STRONG_CHANGE = re.compile(
    r"\b(?:no longer|any ?more|not anymore|moved|switched|instead|used to|quit|stopped|"
    r"i meant|correction|(?-i:left(?= (?:the )?[A-Z])))\b",
    re.IGNORECASE,
)


#: An end stated outright ("doesn't go to the gym anymore", "stopped playing the violin"): it updates the
#: fact about the same thing even when no named entity is shared.
_STATED_END = re.compile(
    r"\b(?:no longer|any ?more|stopped|quit|gave up|sold|got rid of|gave away|moved out|called off|graduated|"
    r"passed away|died)\b",
    re.IGNORECASE,
)


def _shared_content(a: MemoryRecord, b: MemoryRecord) -> bool:
    """Whether two facts share a content word (not a time word): what the ending one is about."""

    def content(record: MemoryRecord) -> set[str]:
        tokens = [t for t in words(record.summary) if t not in STOPWORDS and t not in _TIME_WORDS and len(t) > 2]
        return {t[:-1] if t.endswith("s") and not t.endswith("ss") else t for t in tokens} - _LIGHT_WORDS

    return bool(content(a) & content(b))


def _ended_with(record: MemoryRecord, new_slot: tuple[str, str] | None, cand: MemoryRecord) -> bool:
    """Whether the user's new fact ends a relationship with the person a candidate fact names as a partner.

    "Felix and the user called it quits" ends "The user's boyfriend Felix is a session musician" (a fact
    about Felix, whose partner word no longer holds).
    """
    return (
        not record.subject
        and new_slot is not None
        and new_slot[0] == "relationship_status"
        and new_slot[1] in _ENDED
        and bool(cand.subject)
        and bool(re.search(rf"\b{re.escape(cand.subject)}\b", record.summary))
        and bool(_PARTNER_WORDS.search(cand.summary))
    )


_GONE = re.compile(r"\b(?:passed away|died|was put down|ran away)\b", re.IGNORECASE)


def _gone(record: MemoryRecord, cand: MemoryRecord) -> bool:
    """Whether the new fact says that the one it is about is gone ("Pixel passed away") and the candidate names them."""
    return (
        bool(record.subject)
        and bool(_GONE.search(record.summary))
        and _subject(cand) != _subject(record)
        and bool(re.search(rf"\b{re.escape(record.subject)}\b", cand.summary))
    )


def _subject(record: MemoryRecord) -> str:
    """Who a fact is about ("" for the user unnamed), compared case-blind."""
    return record.subject.strip().lower()


def _neutral(record: MemoryRecord) -> str:
    """The summary with its subject's name as "the user" (the form the slot rules read)."""
    return as_the_user(record.summary, record.subject)


def _fact_slot(record: MemoryRecord) -> tuple[str, str] | None:
    """The slot key and value of a fact about its subject (see :func:`_slot_value`)."""
    return _slot_value(_neutral(record), record.kind)


def _shared_entities(a: MemoryRecord, b: MemoryRecord) -> bool:
    return bool({e.lower() for e in a.entities} & {e.lower() for e in b.entities})


def _entity_shift(a: MemoryRecord, b: MemoryRecord) -> bool:
    return bool({e.lower() for e in a.entities} - {e.lower() for e in b.entities})


def _add_trait(traits: dict[str, list[str]], key: str, values: Sequence[str]) -> None:
    bucket = traits.setdefault(key, [])
    for v in values:
        if v and v not in bucket:
            bucket.append(v)
    del bucket[:-20]


def _remove_trait(traits: dict[str, list[str]], key: str, value: str) -> None:
    if key in traits and value in traits[key]:
        traits[key].remove(value)


def _original_case(sentence: str, value: str) -> str:
    idx = sentence.lower().find(value)
    if idx < 0:
        return value
    return sentence[idx : idx + len(value)]
