"""Whose memory: the user id of a LangGraph run, resolved the same way in every node and tool.

Order: the run's ``Runtime`` context (a ``context_schema`` with ``user_id``),
then ``config["configurable"]["user_id"]``, then ``langgraph_user_id``, then the
authenticated user of LangGraph Server (``langgraph_auth_user``). With none of
them the call fails closed: no memory is read or written for an unknown user.

Example:
    >>> resolve_user_id({"configurable": {"user_id": "u1"}})
    'u1'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MissingUserIdError", "resolve_user_id", "resolve_thread_id"]

_HOW = (
    "pass it as the run's context (context_schema with a 'user_id' field: "
    "graph.invoke(..., context={'user_id': 'u1'})) or in the config "
    "(config={'configurable': {'user_id': 'u1'}})"
)


class MissingUserIdError(ValueError):
    """No user id could be found for a memory operation inside a LangGraph run.

    Example:
        >>> resolve_user_id({"configurable": {"thread_id": "t1"}})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        langchain_memoryos.graph.runtime.MissingUserIdError: memoryos: no user id for this run; pass it as ...
    """


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


def resolve_thread_id(config: Mapping[str, Any] | None = None, default: str = "default") -> str:
    """The run's thread (``config["configurable"]["thread_id"]``), else ``default``.

    Example:
        >>> resolve_thread_id({"configurable": {"thread_id": "t9"}})
        't9'
    """
    cfg = config if config is not None else _current_config()
    value = ((cfg or {}).get("configurable", {}) or {}).get("thread_id")
    return str(value) if value not in (None, "") else default
