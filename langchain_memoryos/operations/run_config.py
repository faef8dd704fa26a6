"""Whose run this is: the user, agent and thread ids a LangGraph run names (its context, else its config).

Order: the run's ``Runtime`` context (a ``context_schema`` with ``user_id``),
then ``config["configurable"]["user_id"]``, then ``langgraph_user_id``, then the
authenticated user of LangGraph Server (``langgraph_auth_user``). With none of
them the call fails closed: no memory is read or written for an unknown user.
The write and read graphs read their run's ids here; the nodes, tools and
middleware too (re-exported by :mod:`langchain_memoryos.graph`).

Example:
    >>> resolve_user_id({"configurable": {"user_id": "u1"}}), resolve_thread_id({"configurable": {}})
    ('u1', 'default')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_memoryos.errors import MissingUserIdError

__all__ = ["resolve_agent_id", "resolve_thread_id", "resolve_user_id"]

_HOW = (
    "pass it as the run's context (context_schema with a 'user_id' field: "
    "graph.invoke(..., context={'user_id': 'u1'})) or in the config "
    "(config={'configurable': {'user_id': 'u1'}})"
)


def _from_context(context: Any) -> str | None:
    if context is None:
        return None
    value = context.get("user_id") if isinstance(context, Mapping) else getattr(context, "user_id", None)
    return str(value) if value not in (None, "") else None


def _current_runtime_context() -> Any:
    try:
        from langgraph.runtime import get_runtime

        return get_runtime().context
    except Exception:  # noqa: BLE001 - outside a run, or no runtime: nothing to read
        return None


def _current_config() -> Mapping[str, Any] | None:
    try:
        from langgraph.config import get_config

        return get_config()
    except Exception:  # noqa: BLE001 - outside a runnable context
        return None


def resolve_user_id(config: Mapping[str, Any] | None = None, *, context: Any = None) -> str:
    """The user id of the current LangGraph run.

    Args:
        config: the run's config (default: the current one, when called inside a run).
        context: the run's context (default: the current ``Runtime`` context).

    Returns:
        The user id.

    Raises:
        MissingUserIdError: none was given; the message says how to pass one.

    Example:
        >>> resolve_user_id(context={"user_id": "ana"})
        'ana'
        >>> resolve_user_id({"configurable": {"langgraph_user_id": "ben"}})
        'ben'
    """
    found = _from_context(context if context is not None else _current_runtime_context())
    if found:
        return found
    cfg = config if config is not None else _current_config()
    configurable: Mapping[str, Any] = (cfg or {}).get("configurable", {}) or {}
    for key in ("user_id", "langgraph_user_id"):
        value = configurable.get(key)
        if value not in (None, ""):
            return str(value)
    auth = configurable.get("langgraph_auth_user")
    identity = getattr(auth, "identity", None) if auth is not None else None
    if identity is None and isinstance(auth, Mapping):
        identity = auth.get("identity")
    if identity not in (None, ""):
        return str(identity)
    raise MissingUserIdError(f"memoryos: no user id for this run; {_HOW}.")


def resolve_agent_id(config: Mapping[str, Any] | None = None, *, context: Any = None) -> str | None:
    """The agent whose memory scope this run uses: ``agent_id`` in the run's context or config, else ``None``.

    With an agent id the nodes, tools and middleware use ``memory.for_agent(agent_id)``:
    each user's memory kept apart per agent (see ``MemoryOS(..., agent_id=...)``).

    Example:
        >>> resolve_agent_id({"configurable": {"agent_id": "coach"}}), resolve_agent_id({"configurable": {}})
        ('coach', None)
        >>> resolve_agent_id(context={"agent_id": "tutor"})
        'tutor'
    """
    ctx = context if context is not None else _current_runtime_context()
    if ctx is not None:
        value = ctx.get("agent_id") if isinstance(ctx, Mapping) else getattr(ctx, "agent_id", None)
        if value not in (None, ""):
            return str(value)
    cfg = config if config is not None else _current_config()
    value = ((cfg or {}).get("configurable", {}) or {}).get("agent_id")
    return str(value) if value not in (None, "") else None


def resolve_thread_id(config: Mapping[str, Any] | None = None, default: str = "default") -> str:
    """The run's thread (``config["configurable"]["thread_id"]``), else ``default``.

    Example:
        >>> resolve_thread_id({"configurable": {"thread_id": "t9"}})
        't9'
    """
    cfg = config if config is not None else _current_config()
    value = ((cfg or {}).get("configurable", {}) or {}).get("thread_id")
    return str(value) if value not in (None, "") else default
