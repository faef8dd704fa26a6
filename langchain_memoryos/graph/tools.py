"""Memory tools for agents: search the memory; add, correct, delete a fact (AMU path) or forget what is named.

The user is taken from the run (:func:`~langchain_memoryos.graph.runtime.resolve_user_id`),
never from the model's arguments, so a model cannot read or write another
user's memory.

Example:
    >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
    >>> memory = MemoryOS(config=MemoryOSConfig(agent_profile=""))
    >>> manage, search = create_manage_memory_tool(memory), create_search_memory_tool(memory)
    >>> _ = manage.invoke({"action": "add", "content": "I am vegan."}, {"configurable": {"user_id": "ana"}})
    >>> "The user is vegan." in search.invoke({"query": "What do I eat?"}, {"configurable": {"user_id": "ana"}})
    True
    >>> search.invoke({"query": "What do I eat?"}, {"configurable": {"user_id": "bob"}})
    'No memory about this yet.'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import InjectedState
from pydantic import BaseModel, Field

from langchain_memoryos.amu.corrections import FactNotFoundError
from langchain_memoryos.graph.runtime import MemoryFactory, resolve_memory, resolve_thread_id, resolve_user_id
from langchain_memoryos.schema import ForgetReport, SearchHit, WriteEvent
from langchain_memoryos.schema.context import fact_id_from_ref, fact_line, fact_ref, page_ref, said_on

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = [
    "ManageMemoryInput",
    "SearchMemoryInput",
    "create_manage_memory_tool",
    "create_search_memory_tool",
    "hit_line",
]

Action = Literal["add", "update", "delete", "forget"]


def _events(events: list[WriteEvent]) -> str:
    lines = [
        f"{e.action}: {e.record.summary} (id {fact_ref(e.record.id) if e.record.id else '-'}; {e.reason})"
        for e in events
    ]
    return "\n".join(lines) or "nothing changed"


class SearchMemoryInput(BaseModel):
    """The search tool's arguments (the model fills ``query``; the graph injects its state)."""

    query: str = Field(
        description="What to look for in your memory of this user: a question or a few keywords, e.g. 'allergies'."
    )
    state: Annotated[Any, InjectedState] = None


def hit_line(hit: SearchHit) -> str:
    """One search hit as the tool shows it to a model: its id, when, and its text in one line.

    Example:
        >>> import datetime as dt
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> when = dt.datetime(2023, 5, 7, tzinfo=dt.UTC)
        >>> fact = MemoryRecord(id="f_000000000003", summary="Ana is allergic to peanuts.", valid_at=when)
        >>> hit_line(SearchHit(kind="fact", id=fact.id, text=fact.summary, score=0.8, timestamp=when, fact=fact))
        '- [f:3] Ana is allergic to peanuts. (said 7 May 2023)'
    """
    if hit.kind == "fact":
        return fact_line(hit.fact) if hit.fact is not None else f"- [{fact_ref(hit.id)}] {hit.text}"
    ref = page_ref(hit.page) if hit.page is not None else hit.id
    return f"- [{ref}] {said_on(hit.timestamp)}: {' / '.join(hit.text.splitlines())}"


def _artifact(hits: list[SearchHit]) -> list[dict[str, Any]]:
    """The hits as plain data (checkpointers store a ToolMessage's artifact)."""
    return [
        {
            "kind": h.kind,
            "id": h.id,
            "ref": fact_ref(h.id) if h.kind == "fact" else (page_ref(h.page) if h.page is not None else h.id),
            "text": h.text,
            "score": h.score,
            "timestamp": h.timestamp.isoformat(),
            "sources": list(h.sources),
            "thread_id": h.thread_id,
        }
        for h in hits
    ]


def create_search_memory_tool(
    memory: MemoryOS | MemoryFactory | None = None, *, name: str = "search_memory", limit: int = 8
) -> BaseTool:
    """A tool that searches the user's memory (no model call): a compact list for the model, the hits as artifact.

    The model gets one line per hit, best first (``- [f:12] …`` for a fact,
    ``- [p:40] 2 May 2023: User: … / Assistant: …`` for a past exchange); the
    ``ToolMessage``'s ``artifact`` holds the same hits as data (kind, id,
    short id, text, score, time, sources, thread). What the model already
    reads is never returned: neither the thread's recent conversation (its
    STM) nor, in a graph, any turn in the state's messages, whichever tier it
    sits in. Fact ids are those :func:`create_manage_memory_tool` takes.
    Without ``memory`` (or with a factory) the tool uses the memory over the
    store of the graph it runs in (see :func:`~langchain_memoryos.graph.runtime.resolve_memory`).

    Args:
        memory: the memory (``None``: the graph's store's).
        name: the tool's name.
        limit: at most this many hits per call.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> _ = memory.add_turn("I play the cello.", "Lovely.", user_id="ana", thread_id="t1")
        >>> tool = create_search_memory_tool(memory, name="recall")
        >>> call = {"type": "tool_call", "id": "c1", "name": "recall", "args": {"query": "What do I play?"}}
        >>> out = tool.invoke(call, {"configurable": {"user_id": "ana", "thread_id": "t2"}})
        >>> "User: I play the cello." in out.content, sorted({hit["kind"] for hit in out.artifact})
        (True, ['fact', 'page'])
        >>> own = tool.invoke(call, {"configurable": {"user_id": "ana", "thread_id": "t1"}}).content  # its own thread
        >>> "User: I play the cello." in own, "The user plays the cello." in own  # the fact, not the conversation
        (False, True)
    """

    def request(query: str, config: RunnableConfig, state: Any) -> dict[str, Any]:
        messages = state.get("messages") if isinstance(state, Mapping) else None
        return {
            "user_id": resolve_user_id(config),
            "thread_id": resolve_thread_id(config),
            "limit": limit,
            "messages": list(messages) if messages else None,
        }

    def answer(hits: list[SearchHit]) -> tuple[str, list[dict[str, Any]]]:
        return ("\n".join(hit_line(h) for h in hits) or "No memory about this yet."), _artifact(hits)

    def search(query: str, config: RunnableConfig, state: Any = None) -> tuple[str, list[dict[str, Any]]]:
        return answer(resolve_memory(memory).search(query, **request(query, config, state)))

    async def asearch(query: str, config: RunnableConfig, state: Any = None) -> tuple[str, list[dict[str, Any]]]:
        return answer(await resolve_memory(memory).asearch(query, **request(query, config, state)))

    return StructuredTool.from_function(
        func=search,
        coroutine=asearch,
        name=name,
        description=(
            "Search your long-term memory of this user (facts and past conversations) for a query. "
            "Returns one line per item, best first, each with its id: a fact as [f:12], a past exchange as [p:40]."
        ),
        args_schema=SearchMemoryInput,
        response_format="content_and_artifact",
    )


class ManageMemoryInput(BaseModel):
    """The manage tool's arguments."""

    action: Action = Field(
        description=(
            "'add' stores a fact (content); 'update' corrects a fact (fact_id, content); 'delete' forgets one fact "
            "(fact_id); 'forget' forgets everything the user asks to forget (content: what, e.g. 'my allergy'), "
            "facts and the sentences they came from."
        )
    )
    content: str | None = Field(
        default=None, description="The fact to add, the corrected fact, or (forget) what to forget, in a few words."
    )
    fact_id: str | None = Field(
        default=None, description="The id shown before a fact in the memory, e.g. f:12 (for update and delete)."
    )


#: What the model is told of the ``manage_memory`` tool.
_MANAGE_DESCRIPTION = (
    "Manage long-term memory of this user: action 'add' stores a fact (content), 'update' "
    "corrects a fact (fact_id, content), 'delete' forgets a fact (fact_id), 'forget' forgets what the "
    "user asks to forget (content). A fact's id is shown before it in the memory, e.g. [f:12]: pass f:12."
)


def _check_manage(action: Action, content: str | None, fact_id: str | None) -> str | None:
    """What a ``manage_memory`` call lacks, as a short message for the model (``None``: nothing)."""
    if action in ("add", "update") and not (content or "").strip():
        return f"'{action}' needs the fact as 'content'."
    if action in ("update", "delete") and not (fact_id or "").strip():
        return f"'{action}' needs the 'fact_id' of the fact to change."
    if action == "forget" and not ((content or "").strip() or (fact_id or "").strip()):
        return "'forget' needs what to forget as 'content' (or a 'fact_id')."
    return None


def _forgot(report: ForgetReport) -> str:
    """A forget's report, as the tool answers it."""
    if not report.removed:
        return "Nothing in memory matches that; nothing was forgotten."
    done = ", ".join(f"{e.record.summary} (id {fact_ref(e.record.id)})" for e in report.events)
    pages = len(report.pages) + len(report.redacted)
    return f"forgot {len(report.facts)} fact{'s' * (len(report.facts) != 1)} and {pages} pages" + (
        f": {done}" if done else ""
    )


def _forget_args(content: str | None, fact_id: str | None) -> dict[str, Any]:
    """``MemoryOS.forget``'s arguments of a ``forget`` call: the fact named, else the query."""
    if (fact_id or "").strip():
        return {"fact_id": fact_id_from_ref(fact_id or "")}
    return {"query": str(content)}


def create_manage_memory_tool(
    memory: MemoryOS | MemoryFactory | None = None, *, name: str = "manage_memory"
) -> BaseTool:
    """A tool that adds a fact (through the AMU write path), corrects one, deletes one, or forgets what is named.

    ``add`` takes ``content``; ``update`` takes ``fact_id`` and ``content``;
    ``delete`` takes ``fact_id``; ``forget`` takes ``content`` (what to
    forget: ``MemoryOS.forget(query=...)``, facts and the sentences they came
    from) or a ``fact_id``. Fact ids appear in the memory context and in the
    search tool's output as ``[f:12]``, and in this tool's answers; the tool
    takes ``f:12``, ``[f:12]`` or the stored id. Mistakes (an unknown id,
    missing content) come back as a short message for the model, not an exception.
    Without ``memory`` (or with a factory) the tool uses the memory over the
    store of the graph it runs in.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> tool, cfg = create_manage_memory_tool(MemoryOS()), {"configurable": {"user_id": "ana"}}
        >>> tool.invoke({"action": "add", "content": "I am vegan."}, cfg)  # doctest: +ELLIPSIS
        'stored: The user is vegan. (id f:1; new fact)'
        >>> tool.invoke({"action": "update", "fact_id": "[f:1]", "content": "The user is vegetarian."}, cfg)
        'edited: The user is vegetarian. (id f:1; edited by the user; was: The user is vegan.)'
        >>> tool.invoke({"action": "forget", "content": "vegetarian"}, cfg)
        'forgot 1 fact and 0 pages: [deleted] (id f:1)'
        >>> tool.invoke({"action": "delete", "fact_id": "f_nope"}, cfg)
        "No fact with id 'f_nope'; search the memory for the right id."
        >>> tool.invoke({"action": "update", "fact_id": "f_nope"}, cfg)
        "'update' needs the fact as 'content'."
    """

    def manage(action: Action, config: RunnableConfig, content: str | None = None, fact_id: str | None = None) -> str:
        problem = _check_manage(action, content, fact_id)
        if problem:
            return problem
        user, ref = resolve_user_id(config), fact_id_from_ref(fact_id or "")
        mem = resolve_memory(memory)
        try:
            if action == "add":
                return _events(mem.add_fact(str(content), user_id=user, source="tool"))
            if action == "update":
                return _events([mem.update_fact(ref, str(content), user_id=user)])
            if action == "forget":
                return _forgot(mem.forget(user_id=user, **_forget_args(content, fact_id)))
            return _events([mem.delete_fact(ref, user_id=user)])
        except FactNotFoundError:
            return f"No fact with id {ref!r}; search the memory for the right id."
        except ValueError as exc:
            return str(exc)

    async def amanage(
        action: Action, config: RunnableConfig, content: str | None = None, fact_id: str | None = None
    ) -> str:
        problem = _check_manage(action, content, fact_id)
        if problem:
            return problem
        user, ref = resolve_user_id(config), fact_id_from_ref(fact_id or "")
        mem = resolve_memory(memory)
        try:
            if action == "add":
                return _events(await mem.aadd_fact(str(content), user_id=user, source="tool"))
            if action == "update":
                return _events([await mem.aupdate_fact(ref, str(content), user_id=user)])
            if action == "forget":
                return _forgot(await mem.aforget(user_id=user, **_forget_args(content, fact_id)))
            return _events([await mem.adelete_fact(ref, user_id=user)])
        except FactNotFoundError:
            return f"No fact with id {ref!r}; search the memory for the right id."
        except ValueError as exc:
            return str(exc)

    return StructuredTool.from_function(
        func=manage,
        coroutine=amanage,
        name=name,
        description=_MANAGE_DESCRIPTION,
        args_schema=ManageMemoryInput,
    )
