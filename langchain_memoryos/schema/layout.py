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
    (*<root>, <u>, "id")            the user id itself (key "id"), for a user under a hash label

An id becomes its label reversibly (:func:`encode_label`), as long as the label
stays within :data:`MAX_LABEL_BYTES`: PostgreSQL's btree index refuses a row of
more than about 2,700 bytes for a whole namespace and key, so a longer id is
stored under a *hash label* (``"%h"`` and the SHA-256 of the id) and the id
itself is kept in a stored value (the ``"id"`` row of a user, the ``thread_id``
of an STM page), where :meth:`MemoryOS.list_users` and the loads read it back.

The root (:func:`scope_root`) is the namespace prefix, ``("memoryos",)`` by
default, followed for an agent scope by ``"%agent"`` and the encoded agent id:
``("memoryos", "%agent", "coach")``. No encoded user id is ``"%agent"`` (``%``
is encoded as ``%25``), so a scope never reads another's rows.
"""

from __future__ import annotations

import hashlib
import logging

from langchain_memoryos.errors import InvalidInputError, InvalidTypeError

__all__ = [
    "AGENT_LABEL",
    "HASH_LABEL",
    "MAX_LABEL_BYTES",
    "MAX_PREFIX_BYTES",
    "ROOT",
    "decode_label",
    "encode_label",
    "escape_id",
    "is_hash_label",
    "page_key",
    "scope_root",
]

logger = logging.getLogger(__name__)

ROOT = "memoryos"
#: the namespace label that opens an agent scope (never an encoded user id: ``%`` is encoded as ``%25``)
AGENT_LABEL = "%agent"
#: the namespace part and key of a user's tombstone (see ``MemoryRepository.delete_all``)
_DELETING, _TOMBSTONE = "deleting", "tombstone"
#: the longest label, in UTF-8 bytes, that an id is stored as; a longer id gets a hash label. With the scope's
#: prefix (at most :data:`MAX_PREFIX_BYTES`), an agent, a user and a thread label and a key, a namespace and key
#: stay under PostgreSQL's btree index entry limit (2,704 bytes, ``store_pkey``).
MAX_LABEL_BYTES = 512
#: the most UTF-8 bytes the labels of a ``namespace_prefix`` may take together (see :func:`scope_root`)
MAX_PREFIX_BYTES = 512
#: what a hash label starts with (never an ordinary label: an id's ``%`` is always escaped as ``%25``)
HASH_LABEL = "%h"


def escape_id(value: str) -> str:
    """An id as text that every backend stores and LangGraph accepts as a label, reversibly (never hashed).

    ``%`` is escaped first (``%25``), then ``.`` (``%2E``, which LangGraph
    refuses in labels) and NUL (``%00``, which PostgreSQL text and JSON refuse);
    :func:`decode_label` inverts it. An id without these characters is its own
    escape.

    Example:
        >>> escape_id("a.b" + chr(0) + "50%")
        'a%2Eb%0050%25'
        >>> decode_label(escape_id("a.b" + chr(0) + "50%")) == "a.b" + chr(0) + "50%"
        True
    """
    return value.replace("%", "%25").replace(".", "%2E").replace("\x00", "%00")


def encode_label(value: str) -> str:
    """Encode an id as a namespace label LangGraph and every backend accept.

    The label is the id escaped by :func:`escape_id` (reversible), or, when
    that is over :data:`MAX_LABEL_BYTES` UTF-8 bytes, a *hash label*:
    ``"%h"`` and the id's SHA-256 (see :func:`is_hash_label`; the id itself is
    then kept in a stored value). Short ids encode as they always did.

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
        >>> label = encode_label("x" * 3000); label[:10], len(label)
        ('%he1630f84', 66)
    """
    if not isinstance(value, str) or not value:
        raise InvalidInputError(f"ids must be non-empty strings, got {value!r}.")
    label = escape_id(value)
    if len(label) * 4 <= MAX_LABEL_BYTES or len(label.encode("utf-8", "surrogatepass")) <= MAX_LABEL_BYTES:
        return label
    return HASH_LABEL + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def is_hash_label(label: str) -> bool:
    """Whether a label is the hash of a long id (:func:`encode_label`), which cannot be decoded.

    Example:
        >>> is_hash_label(encode_label("x" * 600)), is_hash_label(encode_label("%h"))
        (True, False)
    """
    return label.startswith(HASH_LABEL)


def decode_label(label: str) -> str:
    """Invert :func:`encode_label` (and :func:`escape_id`).

    Raises:
        ValueError: for a hash label (:func:`is_hash_label`): its id is kept in a stored value instead.

    Example:
        >>> decode_label("50%25%2E")
        '50%.'
    """
    if is_hash_label(label):
        raise InvalidInputError(
            f"{label!r} is the hash label of a long id: the id is kept in a stored value, read it there."
        )
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
        ValueError: an empty prefix, an empty label or one with ``.`` or NUL, a prefix over
            :data:`MAX_PREFIX_BYTES` UTF-8 bytes; an empty agent id.

    Example:
        >>> scope_root()
        ('memoryos',)
        >>> scope_root(("myapp", "memory"), agent_id="coach.v2")
        ('myapp', 'memory', '%agent', 'coach%2Ev2')
        >>> scope_root("myapp")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidTypeError: namespace_prefix must be a tuple of strings, e.g. ("myapp",), got \
'myapp'.
    """
    if namespace_prefix is None:
        prefix: tuple[str, ...] = (ROOT,)
    else:
        if not isinstance(namespace_prefix, (tuple, list)) or not all(isinstance(x, str) for x in namespace_prefix):
            raise InvalidTypeError(
                f'namespace_prefix must be a tuple of strings, e.g. ("myapp",), got {namespace_prefix!r}.'
            )
        prefix = tuple(namespace_prefix)
        if not prefix or any(not x or "." in x or "\x00" in x for x in prefix):
            raise InvalidInputError(
                f'namespace_prefix must hold at least one label, none empty or with "." or NUL, e.g. ("myapp",); '
                f"got {namespace_prefix!r}."
            )
        size = len(".".join(prefix).encode("utf-8", "surrogatepass"))
        if size > MAX_PREFIX_BYTES:
            raise InvalidInputError(
                f"namespace_prefix takes {size} UTF-8 bytes, more than {MAX_PREFIX_BYTES}: with the user and thread "
                "labels it would pass PostgreSQL's index entry limit (2,704 bytes); pass shorter labels, e.g. "
                '("myapp",).'
            )
    if agent_id is None:
        return prefix
    if not isinstance(agent_id, str) or not agent_id.strip():
        raise InvalidInputError(f"agent_id must be a non-empty string (or None for no agent scope), got {agent_id!r}.")
    return (*prefix, AGENT_LABEL, encode_label(agent_id))
