"""Judgements as typed requests: what a stage asks of the controller, performed and counted by the driver.

A stage never calls the controller: it yields a request (one of the classes
here) and receives the answer. The drivers (:func:`~langchain_memoryos.kernel.effects.run_sync`,
:func:`~langchain_memoryos.kernel.effects.run_async`) perform it with
:meth:`Judgement.ask` / :meth:`Judgement.aask`; a write's
:func:`~langchain_memoryos.kernel.effects.judged` wrapper records the answers
(so a write that runs again reuses them) and counts each answer's model usage
once, under the request's :attr:`Judgement.name`.

Example:
    >>> from langchain_memoryos.controllers import HeuristicController
    >>> req = ParseRecords("I'm vegan.", "user")
    >>> req.name, [r.summary for r in req.ask(HeuristicController()).records]
    ('parse_records', ['The user is vegan.'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from langchain_memoryos.kernel.controller import MemoryController, PageAnalysis, PageReading
    from langchain_memoryos.schema import DialoguePage, MemoryRecord, Persona, Segment

__all__ = [
    "AnalyzePage",
    "FuseRecords",
    "JudgeRelations",
    "Judgement",
    "ParseRecords",
    "PlanQuery",
    "PromoteSegment",
]


@dataclass(frozen=True)
class Judgement:
    """A request to the controller (a base class; see the subclasses).

    Attributes:
        offline: ask the memory's offline controller instead (the controller
            itself when it is local, else its fallback): a judgement made
            while the user's lock is held is never a model call.
    """

    name: ClassVar[str] = ""
    #: made in process on the async path too (``aask`` asks the sync method: the judgement is local)
    local: ClassVar[bool] = False
    offline: bool = field(default=False, kw_only=True)

    def arguments(self) -> tuple[Any, ...]:
        """What the controller's method is given: the request's fields in order (not ``offline``, not uncompared ones).

        Example:
            >>> ParseRecords("I'm vegan.", "user", offline=True).arguments()
            ("I'm vegan.", 'user')
        """
        return tuple(getattr(self, f.name) for f in fields(self) if f.compare and f.name != "offline")

    def ask(self, controller: MemoryController) -> Any:
        """Make the judgement with blocking IO: ``controller.<name>(*arguments)``.

        Example:
            >>> class Echo:
            ...     def parse_records(self, text, kind):
            ...         return f"{kind}: {text}"
            >>> ParseRecords("I'm vegan.", "user").ask(Echo())  # type: ignore[arg-type]
            "user: I'm vegan."
        """
        return getattr(controller, self.name)(*self.arguments())

    async def aask(self, controller: MemoryController) -> Any:
        """Make the judgement with async IO: ``await controller.a<name>(*arguments)`` (a local one: :meth:`ask`).

        Example:
            >>> import asyncio
            >>> class Echo:
            ...     async def aparse_records(self, text, kind):
            ...         return f"{kind}, async: {text}"
            >>> asyncio.run(ParseRecords("I'm vegan.", "user").aask(Echo()))  # type: ignore[arg-type]
            "user, async: I'm vegan."
        """
        if self.local:
            return self.ask(controller)
        return await getattr(controller, "a" + self.name)(*self.arguments())

    def key(self) -> str:
        """The request's full value: the same request on the same records gets the same answer.

        Example:
            >>> ParseRecords("I'm vegan.", "user").key() == ParseRecords("I'm vegan.", "user", offline=True).key()
            True
        """
        values = [getattr(self, f.name) for f in fields(self) if f.compare and f.name != "offline"]
        return self.name + repr(values)


@dataclass(frozen=True)
class AnalyzePage(Judgement):
    """``analyze_page``: chain link and meta, keywords, topic summary and candidate records of a page just added.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.schema import DialoguePage
        >>> page = DialoguePage(id="p", user_input="I live in Oslo.", agent_response="Nice!")
        >>> [r.summary for r in AnalyzePage(page, None, None).ask(HeuristicController()).records]
        ['The user lives in Oslo.']
    """

    name: ClassVar[str] = "analyze_page"
    page: DialoguePage
    previous: DialoguePage | None
    similarity: float | None
    #: the page's content read ahead when it was embedded (a pure function of the page: not part of the request)
    reading: PageReading | None = field(default=None, compare=False, kw_only=True)

    def key(self) -> str:
        """The request's value without the pages' store bookkeeping (their ``_seq``, given when a page is stored).

        A turn run again on a user that moved meanwhile stores its page under
        another sequence number: it asks the same, and reuses the answer.

        Example:
            >>> from langchain_memoryos.schema import DialoguePage
            >>> def page(seq):
            ...     return DialoguePage(id="p", user_input="I live in Oslo.", agent_response="", metadata={"_seq": seq})
            >>> AnalyzePage(page(3), None, None).key() == AnalyzePage(page(4), None, None).key()
            True
        """
        pages = [_unsequenced(p) for p in (self.page, self.previous)]
        return self.name + repr([*pages, self.similarity])

    def ask(self, controller: MemoryController) -> PageAnalysis:
        """Ask ``controller.analyze_page`` (with the content read ahead when it fits the page and the controller)."""
        reading = self.reading
        content = reading.content_for(self.page, controller) if reading is not None else None
        if reading is not None and content is not None:  # the reader is the controller
            return reading.reader.analyze_page(self.page, self.previous, self.similarity, content=content)
        analysis: PageAnalysis = super().ask(controller)
        return analysis

    async def aask(self, controller: MemoryController) -> PageAnalysis:
        """Ask ``controller.aanalyze_page`` (a fitting reading ahead is used in process: it is a local controller)."""
        if self.reading is not None and self.reading.content_for(self.page, controller) is not None:
            return self.ask(controller)
        analysis: PageAnalysis = await super().aask(controller)
        return analysis


def _unsequenced(page: DialoguePage | None) -> DialoguePage | None:
    if page is None or "_seq" not in page.metadata:
        return page
    return replace(page, metadata={k: v for k, v in page.metadata.items() if k != "_seq"})


@dataclass(frozen=True)
class PromoteSegment(Judgement):
    """``promote_segment``: a hot segment's summary, keywords, persona update and further records.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.schema import DialoguePage, Persona, Segment
        >>> page = DialoguePage(id="p", user_input="I work as a nurse. I live in Oslo.", agent_response="")
        >>> PromoteSegment(Segment(id="s"), (page,), Persona()).ask(HeuristicController()).user_profile
        {'occupation': 'nurse', 'location': 'Oslo'}
    """

    name: ClassVar[str] = "promote_segment"
    segment: Segment
    pages: Sequence[DialoguePage]
    persona: Persona


@dataclass(frozen=True)
class ParseRecords(Judgement):
    """``parse_records``: a directly given fact as typed records.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> len(ParseRecords("My name is Ana and I live in Lisbon.", "user").ask(HeuristicController()).records)
        2
    """

    name: ClassVar[str] = "parse_records"
    text: str
    kind: str


@dataclass(frozen=True)
class JudgeRelations(Judgement):
    """``judge_relations``: duplicate / update / separate for every candidate of a new record.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> old = MemoryRecord(id="f1", aspect="personal_profile", summary="The user lives in Oslo.")
        >>> new = MemoryRecord(aspect="personal_profile", summary="The user lives in Bergen.")
        >>> [r.label for r in JudgeRelations(new, ((old, 0.8),)).ask(HeuristicController()).relations]
        ['update']
    """

    name: ClassVar[str] = "judge_relations"
    record: MemoryRecord
    candidates: Sequence[tuple[MemoryRecord, float]]


@dataclass(frozen=True)
class FuseRecords(Judgement):
    """``fuse``: one current record from a new record and the records it updates.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> old = MemoryRecord(id="f1", summary="The user lives in Oslo.")
        >>> new = MemoryRecord(summary="The user lives in Bergen.")
        >>> FuseRecords(new, (old,)).ask(HeuristicController()).record.summary
        'The user lives in Bergen.'
    """

    name: ClassVar[str] = "fuse"
    record: MemoryRecord
    updated: Sequence[MemoryRecord]


@dataclass(frozen=True)
class PlanQuery(Judgement):
    """``plan_query``: how the read path matches a query against facts (its third-person form, its aspects).

    Language rules live behind the controller: the read path only asks. A
    controller without ``plan_query`` is answered by the offline controller
    (never a model call on the read path).

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> PlanQuery("Where do I live?").ask(HeuristicController()).fact_query
        'Where do the user lives.'
    """

    name: ClassVar[str] = "plan_query"
    local: ClassVar[bool] = True  # query planning is local: the async path asks in process too
    query: str
