"""Memory tools for agents: search the memory, and add, correct or delete a fact through the AMU path.

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

from typing import TYPE_CHECKING, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool

from langchain_memoryos.amu.corrections import FactNotFoundError
from langchain_memoryos.graph.runtime import MemoryFactory, resolve_memory, resolve_thread_id, resolve_user_id
from langchain_memoryos.schema import WriteEvent
from langchain_memoryos.schema.context import fact_id_from_ref, fact_ref

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = ["create_manage_memory_tool", "create_search_memory_tool"]

Action = Literal["add", "update", "delete"]


def _events(events: list[WriteEvent]) -> str:
    lines = [
        f"{e.action}: {e.record.summary} (id {fact_ref(e.record.id) if e.record.id else '-'}; {e.reason})"
        for e in events
    ]
    return "\n".join(lines) or "nothing changed"


def create_search_memory_tool(
    memory: MemoryOS | MemoryFactory | None = None, *, name: str = "search_memory"
) -> BaseTool:
    """A tool that searches the user's memory (no model call) and returns the context as text.

    Each fact in the text shows its id (``[f:12]``) for :func:`create_manage_memory_tool`.
    Without ``memory`` (or with a factory) the tool uses the memory over the
    store of the graph it runs in (see :func:`~langchain_memoryos.graph.runtime.resolve_memory`).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> _ = memory.add_turn("I play the cello.", "Lovely.", user_id="ana")
        >>> tool, cfg = create_search_memory_tool(memory, name="recall"), {"configurable": {"user_id": "ana"}}
        >>> tool.name, "User: I play the cello." in tool.invoke({"query": "What do I play?"}, cfg)
        ('recall', True)
    """

    def search(query: str, config: RunnableConfig) -> str:
        ctx = resolve_memory(memory).retrieve(
            query, user_id=resolve_user_id(config), thread_id=resolve_thread_id(config)
        )
        return ctx.to_prompt() or "No memory about this yet."

    async def asearch(query: str, config: RunnableConfig) -> str:
        ctx = await resolve_memory(memory).aretrieve(
            query, user_id=resolve_user_id(config), thread_id=resolve_thread_id(config)
        )
        return ctx.to_prompt() or "No memory about this yet."

    return StructuredTool.from_function(
        func=search,
        coroutine=asearch,
        name=name,
        description="Search your long-term memory of this user (facts, past conversations) for a query.",
    )


def create_manage_memory_tool(
    memory: MemoryOS | MemoryFactory | None = None, *, name: str = "manage_memory"
) -> BaseTool:
    """A tool that adds a fact (through the AMU write path), corrects one, or deletes one.

    ``add`` takes ``content``; ``update`` takes ``fact_id`` and ``content``;
    ``delete`` takes ``fact_id``. Fact ids appear in the memory context and in
    the search tool's output as ``[f:12]``, and in this tool's answers; the
    tool takes ``f:12``, ``[f:12]`` or the stored id. Mistakes (an unknown id,
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
        >>> tool.invoke({"action": "delete", "fact_id": "f_nope"}, cfg)
        "No fact with id 'f_nope'; search the memory for the right id."
        >>> tool.invoke({"action": "update", "fact_id": "f_nope"}, cfg)
        "'update' needs the fact as 'content'."
    """

    def check(action: Action, content: str | None, fact_id: str | None) -> str | None:
        if action in ("add", "update") and not (content or "").strip():
            return f"'{action}' needs the fact as 'content'."
        if action in ("update", "delete") and not (fact_id or "").strip():
            return f"'{action}' needs the 'fact_id' of the fact to change."
        return None

    def manage(action: Action, config: RunnableConfig, content: str | None = None, fact_id: str | None = None) -> str:
        problem = check(action, content, fact_id)
        if problem:
            return problem
        user, fact_id = resolve_user_id(config), fact_id_from_ref(fact_id or "")
        mem = resolve_memory(memory)
        try:
            if action == "add":
                return _events(mem.add_fact(str(content), user_id=user, source="tool"))
            if action == "update":
                return _events([mem.update_fact(fact_id, str(content), user_id=user)])
            return _events([mem.delete_fact(fact_id, user_id=user)])
        except FactNotFoundError:
            return f"No fact with id {fact_id!r}; search the memory for the right id."

    async def amanage(
        action: Action, config: RunnableConfig, content: str | None = None, fact_id: str | None = None
    ) -> str:
        problem = check(action, content, fact_id)
        if problem:
            return problem
        user, fact_id = resolve_user_id(config), fact_id_from_ref(fact_id or "")
        mem = resolve_memory(memory)
        try:
            if action == "add":
                return _events(await mem.aadd_fact(str(content), user_id=user, source="tool"))
            if action == "update":
                return _events([await mem.aupdate_fact(fact_id, str(content), user_id=user)])
            return _events([await mem.adelete_fact(fact_id, user_id=user)])
        except FactNotFoundError:
            return f"No fact with id {fact_id!r}; search the memory for the right id."

    return StructuredTool.from_function(
        func=manage,
        coroutine=amanage,
        name=name,
        description=(
            "Manage long-term memory of this user: action 'add' stores a fact (content), 'update' "
            "corrects a fact (fact_id, content), 'delete' forgets a fact (fact_id). A fact's id is shown "
            "before it in the memory, e.g. [f:12]: pass f:12."
        ),
    )
