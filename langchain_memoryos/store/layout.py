"""Where a user's memory lives in a LangGraph ``BaseStore``: scopes, namespaces, reversible id labels, page keys.

Namespaces (``<root>`` is the memory's scope, ``<u>`` the reversibly encoded
user id, ``<t>`` the thread id)::

    (*<root>, <u>, "stm", <t>)      short-term pages of one thread
    (*<root>, <u>, "pages")         mid-term pages
    (*<root>, <u>, "segments")      mid-term segments
    (*<root>, <u>, "facts", "user") user knowledge base
    (*<root>, <u>, "facts", "agent") agent traits
    (*<root>, <u>, "persona")       persona (key "persona")
    (*<root>, <u>, "log")           AMU write events
    (*<root>, <u>, "meta")          conversation clock and counters (key "state")
    (*<root>, <u>, "version")       the version stamp (stores shared by processes)
    (*<root>, <u>, "snapshot")      the index snapshot of the user's state (key "state"; shared stores)
    (*<root>, <u>, "journal")       one row per flush since the snapshot: what it changed (shared stores)
    (*<root>, <u>, "deleting")      the tombstone of a deletion under way

The root (:func:`scope_root`) is the namespace prefix, ``("memoryos",)`` by
default, followed for an agent scope by ``"%agent"`` and the encoded agent id:
``("memoryos", "%agent", "coach")``. No encoded user id is ``"%agent"`` (``%``
is encoded as ``%25``), so a scope never reads another's rows.
"""

from __future__ import annotations

import hashlib
import logging

__all__ = ["AGENT_LABEL", "ROOT", "decode_label", "encode_label", "page_key", "scope_root"]

logger = logging.getLogger(__name__)

ROOT = "memoryos"
#: the namespace label that opens an agent scope (never an encoded user id: ``%`` is encoded as ``%25``)
AGENT_LABEL = "%agent"
#: the namespace part and key of a user's tombstone (see ``MemoryRepository.delete_all``)
_DELETING, _TOMBSTONE = "deleting", "tombstone"


def encode_label(value: str) -> str:
    """Encode an id as a namespace label LangGraph accepts, reversibly.

    LangGraph rejects labels with ``.``, NUL or empty labels; ``%`` is escaped
    first so that decoding is exact.

    Args:
        value: a non-empty id.

    Returns:
        The label.

    Raises:
        ValueError: for an empty or non-string id.

    Example:
        >>> encode_label("a.b@x.com")
        'a%2Eb@x%2Ecom'
        >>> decode_label(encode_label("a.b@x.com"))
        'a.b@x.com'
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"ids must be non-empty strings, got {value!r}.")
    return value.replace("%", "%25").replace(".", "%2E").replace("\x00", "%00")


def decode_label(label: str) -> str:
    """Invert :func:`encode_label`.

    Example:
        >>> decode_label("50%25%2E")
        '50%.'
    """
    out: list[str] = []
    i = 0
    while i < len(label):
        if label[i] == "%" and label[i + 1 : i + 3] in ("25", "2E", "00"):
            out.append({"25": "%", "2E": ".", "00": "\x00"}[label[i + 1 : i + 3]])
            i += 3
        else:
            out.append(label[i])
            i += 1
    return "".join(out)


def page_key(thread_id: str, turn_id: str | None, *parts: str) -> str:
    """Deterministic page key: the same turn always gets the same key.

    Args:
        thread_id: the thread.
        turn_id: a caller-given turn id (preferred), or ``None``.
        *parts: what identifies the turn when there is no turn id (timestamp,
            user input, agent response).

    Returns:
        ``"p_"`` + 24 hex digits.

    Example:
        >>> page_key("t", "turn-1") == page_key("t", "turn-1")
        True
    """
    material = "\x1f".join([thread_id, "id", turn_id] if turn_id is not None else [thread_id, "content", *parts])
    return "p_" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def scope_root(
    namespace_prefix: tuple[str, ...] | list[str] | None = None, agent_id: str | None = None
) -> tuple[str, ...]:
    """The namespace root of a memory's scope: the prefix, then ``"%agent"`` and the agent id for an agent scope.

    Args:
        namespace_prefix: the labels every namespace of the memory starts with
            (default ``("memoryos",)``); two memories on one store must not use
            prefixes of which one starts the other.
        agent_id: keep each user's memory apart per agent (``None``: one memory per user).

    Returns:
        The root, a tuple of namespace labels.

    Raises:
        TypeError: a prefix that is not a tuple or list of strings.
        ValueError: an empty prefix, an empty label or one with ``.``; an empty agent id.

    Example:
        >>> scope_root()
        ('memoryos',)
        >>> scope_root(("myapp", "memory"), agent_id="coach.v2")
        ('myapp', 'memory', '%agent', 'coach%2Ev2')
        >>> scope_root("myapp")
        Traceback (most recent call last):
        TypeError: namespace_prefix must be a tuple of strings, e.g. ("myapp",), got 'myapp'.
    """
    if namespace_prefix is None:
        prefix: tuple[str, ...] = (ROOT,)
    else:
        if not isinstance(namespace_prefix, (tuple, list)) or not all(isinstance(x, str) for x in namespace_prefix):
            raise TypeError(f'namespace_prefix must be a tuple of strings, e.g. ("myapp",), got {namespace_prefix!r}.')
        prefix = tuple(namespace_prefix)
        if not prefix or any(not x or "." in x for x in prefix):
            raise ValueError(
                f'namespace_prefix must hold at least one label, none empty or with ".", e.g. ("myapp",); '
                f"got {namespace_prefix!r}."
            )
    if agent_id is None:
        return prefix
    if not isinstance(agent_id, str) or not agent_id.strip():
        raise ValueError(f"agent_id must be a non-empty string (or None for no agent scope), got {agent_id!r}.")
    return (*prefix, AGENT_LABEL, encode_label(agent_id))
