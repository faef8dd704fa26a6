"""The controller protocol: every judgement the papers give to a language model.

A controller answers, for the engine:

* ``analyze_page`` — once per page, when it is added: dialogue-chain continuity and
  chain meta, page keywords, a topic summary (used when the page starts a new
  segment) and the page's candidate typed records (AMU fields).
* ``promote_segment`` — once per promotion: a refreshed segment summary and
  keywords, the persona update (profile attributes and user traits) and any
  further candidate records.
* ``parse_records`` — a fact given directly (``add_fact``, memory tools) as typed records.
* ``judge_relations`` — duplicate / update / separate for every candidate of one
  admitted record, in one judgement.
* ``fuse`` — one current record from a new record and the records it updates.
* ``plan_query`` (optional, local) — how the read path matches a query against
  facts: its third-person form and the aspects it is about. The language
  rules behind it belong to the controller; a controller without it is
  answered by the memory's offline controller.

Every method has an ``a``-prefixed async twin. :class:`BaseController` gives
async twins that run the sync method in a worker thread, so a controller only
has to implement the sync methods.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from langchain_memoryos.schema import DialoguePage, MemoryRecord, Persona, Relation, Segment

__all__ = [
    "BaseController",
    "ControllerUsage",
    "FuseResult",
    "MemoryController",
    "MemoryRequest",
    "PageAnalysis",
    "PageContent",
    "PageReader",
    "PageReading",
    "ParsedRecords",
    "PromotionResult",
    "QueryPlan",
    "RelationJudgement",
]


@dataclass
class ControllerUsage:
    """Model usage of one controller call (zero for the heuristic controller).

    Attributes:
        llm_calls: model calls made.
        llm_tokens: tokens used (prompt + completion).
        fallback: whether the judgement fell back to another controller.
        note: why it fell back, if it did.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> from langchain_memoryos.controllers import HeuristicController, LLMController
        >>> reply = AIMessage('{"records": []}', usage_metadata={"input_tokens": 90, "output_tokens": 10,
        ...                                                      "total_tokens": 100})
        >>> LLMController(GenericFakeChatModel(messages=iter([reply]))).parse_records("Hi!", "user").usage
        ControllerUsage(llm_calls=1, llm_tokens=100, fallback=False, note='')
        >>> HeuristicController().parse_records("Hi!", "user").usage.llm_calls
        0
    """

    llm_calls: int = 0
    llm_tokens: int = 0
    fallback: bool = False
    note: str = ""


@dataclass(frozen=True)
class QueryPlan:
    """How the read path matches a query against facts (``plan_query``).

    Attributes:
        fact_query: the query as facts are written (third person: "Where does
            the user live?"); the query itself when no rewrite applies.
        aspects: the AMU aspects the query is about (their facts come first).

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> HeuristicController().plan_query("Do I have a dog?")
        QueryPlan(fact_query='Do the user has a dog.', aspects=frozenset({'social_relationship'}))
    """

    fact_query: str
    aspects: frozenset[str] = frozenset()


@dataclass(frozen=True)
class MemoryRequest:
    """A request a page makes about the memory itself ("Forget that I …"): never stored as a fact.

    Carrying it out is the memory's ``forget``; the page's analysis only marks it.

    Attributes:
        request: what is asked (``"forget"``).
        about: what it is about, as said ("that I told you about my divorce").
        subject: who asked ("" for the unnamed user).

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> page = DialoguePage(id="p", user_input="Please forget my phone number.", agent_response="Done.")
        >>> a = HeuristicController().analyze_page(page, None, None)
        >>> a.requests, a.records
        ([MemoryRequest(request='forget', about='my phone number.', subject='')], [])
    """

    request: Literal["forget"]
    about: str
    subject: str = ""


@dataclass(frozen=True)
class PageContent:
    """What a local controller's ``analyze_page`` reads off a page alone (all but the chain link and meta).

    A pure function of the page's texts and metadata, so it can be computed
    ahead, in another process (``MemoryOS.add_turns`` does, on a second core).

    Attributes:
        gist: the page's gist (its user side's, else its answer's).
        keywords: its YAKE keywords.
        records: its agent traits and fact records.
        requests: its requests about the memory itself ("Forget …").

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted!")
        >>> HeuristicController().page_content(page).gist
        "I'm vegan."
    """

    gist: str
    keywords: list[str] = field(default_factory=list)
    records: list[MemoryRecord] = field(default_factory=list)
    requests: list[MemoryRequest] = field(default_factory=list)


#: The metadata a page's content reads: the speakers' names
#: (see :func:`~langchain_memoryos.controllers.facts.page_speakers`).
_SPEAKER_KEYS = ("user_name", "agent_name", "persona_name")


def _read_of(page: DialoguePage, page_keywords: int) -> tuple[Any, ...]:
    """Everything a page's :class:`PageContent` is read from (and how many keywords it keeps)."""
    meta = page.metadata or {}
    return (page.user_input, page.agent_response, page_keywords, *(meta.get(k) for k in _SPEAKER_KEYS))


class PageReader(Protocol):
    """A controller that reads pages ahead (as ``HeuristicController.read_ahead`` does).

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> reader: PageReader = HeuristicController(page_keywords=5)
        >>> reader.page_keywords
        5
    """

    page_keywords: int

    def analyze_page(
        self,
        page: DialoguePage,
        previous: DialoguePage | None,
        similarity: float | None,
        content: PageContent | None = None,
    ) -> PageAnalysis:
        """``analyze_page``, with the page's content when it was read ahead."""
        ...


@dataclass(frozen=True)
class PageReading:
    """A page's :class:`PageContent` read ahead, while the page was embedded, for its analysis right after.

    ``add_turn`` reads the new page in a worker thread while the encoder
    embeds it (the controller's ``read_ahead``,
    :meth:`~langchain_memoryos.controllers.heuristic.HeuristicController.read_ahead`), and the turn keeps the
    reading for the page's ``chain_link`` right after ``stm_append``, which then
    needs no keywords or facts computed under the user's lock. It fits only
    the controller that read it and the page as it was read.

    Attributes:
        reader: the controller that read the page (its ``analyze_page`` takes the ``content``, its
            ``page_keywords`` is how many keywords a page keeps).
        of: what the reading depends on (the page's texts and speaker names, the number of keywords).
        content: the page's content.
        rows: the summaries AMU will embed of its records (the admitted ones) and their rows,
            embedded beside the page on another core (``None``: not embedded ahead).

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> c = HeuristicController()
        >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted!")
        >>> reading = c.read_ahead(page)
        >>> reading.content_for(page, c) == c.page_content(page), reading.content_for(page, HeuristicController())
        (True, None)
    """

    reader: PageReader
    of: tuple[Any, ...]
    content: PageContent
    rows: tuple[tuple[str, ...], Any] | None = None

    @classmethod
    def read(cls, reader: PageReader, page: DialoguePage, content: PageContent) -> PageReading:
        """The reading of ``page`` by ``reader``: its ``content``, bound to what it was read from.

        Example:
            >>> from langchain_memoryos.controllers import HeuristicController
            >>> c = HeuristicController()
            >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted!")
            >>> PageReading.read(c, page, c.page_content(page)).content_for(page, c).records[0].summary
            'The user is vegan.'
        """
        return cls(reader, _read_of(page, reader.page_keywords), content)

    def content_for(self, page: DialoguePage, controller: object) -> PageContent | None:
        """The content when it fits ``page`` as it is now and ``controller`` is the reader, else ``None``.

        Example:
            >>> from langchain_memoryos.controllers import HeuristicController
            >>> c = HeuristicController()
            >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted!")
            >>> reading = c.read_ahead(page); page.user_input = "I'm a nurse."
            >>> reading.content_for(page, c) is None
            True
        """
        if controller is not self.reader or _read_of(page, self.reader.page_keywords) != self.of:
            return None
        return self.content

    def __deepcopy__(self, memo: dict[int, Any]) -> PageReading:
        return self  # immutable, and its reader is shared on purpose (a copied state keeps the reading)


@dataclass
class PageAnalysis:
    """``analyze_page``'s answer for a page just added to STM (its records are written with the turn).

    Attributes:
        linked: the page continues the previous page's dialogue chain.
        chain_meta: the updated chain meta (summary of the linked chain).
        keywords: page keywords.
        topic_summary: a one-line topic summary (a new segment's first summary).
        records: candidate typed records of the page (AMU fields, ids empty).
        usage: model usage.
        requests: the page's requests about the memory itself ("Forget …"), never records.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> page = DialoguePage(id="p", user_input="I started pottery classes.", agent_response="Fun!")
        >>> a = HeuristicController().analyze_page(page, None, None)
        >>> a.linked, sorted(a.keywords), [r.summary for r in a.records]
        (False, ['classes', 'fun', 'pottery', 'started'], ['The user started pottery classes.'])
    """

    linked: bool
    chain_meta: str
    keywords: list[str]
    topic_summary: str = ""
    records: list[MemoryRecord] = field(default_factory=list)
    usage: ControllerUsage = field(default_factory=ControllerUsage)
    requests: list[MemoryRequest] = field(default_factory=list)


@dataclass
class PromotionResult:
    """``promote_segment``'s answer.

    Attributes:
        segment_summary: the refreshed segment summary.
        segment_keywords: the refreshed segment keywords (empty keeps the old ones).
        user_profile: the updated static attributes (the full mapping).
        user_traits: the updated traits by dimension (the full mapping).
        records: further candidate records (user facts and agent traits).
        usage: model usage.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> page = DialoguePage(id="p", user_input="My name is Ana. I love chess.", agent_response="Hi Ana!")
        >>> r = HeuristicController().promote_segment(Segment(id="s"), [page], Persona())
        >>> r.user_profile, r.user_traits
        ({'name': 'Ana'}, {'interests': ['chess']})
    """

    segment_summary: str
    segment_keywords: list[str] = field(default_factory=list)
    user_profile: dict[str, str] = field(default_factory=dict)
    user_traits: dict[str, list[str]] = field(default_factory=dict)
    records: list[MemoryRecord] = field(default_factory=list)
    usage: ControllerUsage = field(default_factory=ControllerUsage)


@dataclass
class ParsedRecords:
    """``parse_records``'s answer.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> parsed = HeuristicController().parse_records("I'm vegan and I live in Oslo.", "user")
        >>> [(r.aspect, r.summary) for r in parsed.records]
        [('health', 'The user is vegan.'), ('personal_profile', 'The user lives in Oslo.')]
    """

    records: list[MemoryRecord]
    usage: ControllerUsage = field(default_factory=ControllerUsage)


@dataclass
class RelationJudgement:
    """``judge_relations``'s answer: one relation per candidate, in candidate order.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> new = MemoryRecord(summary="The user lives in Denver.")
        >>> old = MemoryRecord(id="f1", summary="The user lives in Boston.")
        >>> HeuristicController().judge_relations(new, [(old, 0.8)]).relations  # doctest: +NORMALIZE_WHITESPACE
        [Relation(candidate_id='f1', label='update', similarity=0.8, reason='location changed: boston → denver')]
    """

    relations: list[Relation]
    usage: ControllerUsage = field(default_factory=ControllerUsage)


@dataclass
class FuseResult:
    """``fuse``'s answer: the current record that replaces the updated ones.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> new = MemoryRecord(summary="The user lives in Denver.", source_page_ids=["p2"])
        >>> old = MemoryRecord(id="f1", summary="The user lives in Boston.", source_page_ids=["p1"])
        >>> fused = HeuristicController().fuse(new, [old]).record
        >>> fused.summary, fused.source_page_ids
        ('The user lives in Denver.', ['p1', 'p2'])
    """

    record: MemoryRecord
    usage: ControllerUsage = field(default_factory=ControllerUsage)


@runtime_checkable
class MemoryController(Protocol):
    """What the engine asks of a controller (sync and async).

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> controller: MemoryController = HeuristicController()
        >>> [r.summary for r in controller.parse_records("I live in Oslo.", "user").records]
        ['The user lives in Oslo.']
        >>> isinstance(controller, MemoryController), isinstance(object(), MemoryController)
        (True, False)
    """

    name: str

    def analyze_page(self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None) -> PageAnalysis:
        """Chain link, chain meta, keywords, topic summary and candidate records of a page."""
        ...

    async def aanalyze_page(
        self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None
    ) -> PageAnalysis:
        """Async twin of :meth:`analyze_page`."""
        ...

    def promote_segment(self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona) -> PromotionResult:
        """Refresh the segment summary and update the persona from a hot segment."""
        ...

    async def apromote_segment(
        self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona
    ) -> PromotionResult:
        """Async twin of :meth:`promote_segment`."""
        ...

    def parse_records(self, text: str, kind: str) -> ParsedRecords:
        """Parse a directly given fact into typed records."""
        ...

    async def aparse_records(self, text: str, kind: str) -> ParsedRecords:
        """Async twin of :meth:`parse_records`."""
        ...

    def judge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """Label every candidate duplicate / update / separate."""
        ...

    async def ajudge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """Async twin of :meth:`judge_relations`."""
        ...

    def fuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """Fuse a new record with the records it updates."""
        ...

    async def afuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """Async twin of :meth:`fuse`."""
        ...


class BaseController:
    """Base class that derives the async twins from the sync methods.

    Subclasses implement the five sync methods; each async twin runs its sync
    method in a worker thread. Override an async twin for native async IO.

    Example:
        >>> class Shout(BaseController):
        ...     name = "shout"
        ...     def parse_records(self, text, kind):
        ...         return ParsedRecords([MemoryRecord(kind=kind, summary=text.upper())])
        >>> [r.summary for r in asyncio.run(Shout().aparse_records("i live in oslo", "user")).records]
        ['I LIVE IN OSLO']
        >>> Shout().fuse(MemoryRecord(), [])
        Traceback (most recent call last):
        ...
        NotImplementedError
    """

    name: str = "base"

    def analyze_page(self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None) -> PageAnalysis:
        """See :class:`MemoryController`."""
        raise NotImplementedError

    def promote_segment(self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona) -> PromotionResult:
        """See :class:`MemoryController`."""
        raise NotImplementedError

    def parse_records(self, text: str, kind: str) -> ParsedRecords:
        """See :class:`MemoryController`."""
        raise NotImplementedError

    def judge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """See :class:`MemoryController`."""
        raise NotImplementedError

    def fuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """See :class:`MemoryController`."""
        raise NotImplementedError

    async def aanalyze_page(
        self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None
    ) -> PageAnalysis:
        """Async twin of :meth:`analyze_page` (worker thread)."""
        return await asyncio.to_thread(self.analyze_page, page, previous, similarity)

    async def apromote_segment(
        self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona
    ) -> PromotionResult:
        """Async twin of :meth:`promote_segment` (worker thread)."""
        return await asyncio.to_thread(self.promote_segment, segment, pages, persona)

    async def aparse_records(self, text: str, kind: str) -> ParsedRecords:
        """Async twin of :meth:`parse_records` (worker thread)."""
        return await asyncio.to_thread(self.parse_records, text, kind)

    async def ajudge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """Async twin of :meth:`judge_relations` (worker thread)."""
        return await asyncio.to_thread(self.judge_relations, record, candidates)

    async def afuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """Async twin of :meth:`fuse` (worker thread)."""
        return await asyncio.to_thread(self.fuse, record, updated)
