"""Where a user's memory lives in a LangGraph ``BaseStore``: namespaces, reversible id labels, page keys.

Namespaces (``<u>`` is the reversibly encoded user id, ``<t>`` the thread id)::

    ("memoryos", <u>, "stm", <t>)      short-term pages of one thread
    ("memoryos", <u>, "pages")         mid-term pages
    ("memoryos", <u>, "segments")      mid-term segments
    ("memoryos", <u>, "facts", "user") user knowledge base
    ("memoryos", <u>, "facts", "agent") agent traits
    ("memoryos", <u>, "persona")       persona (key "persona")
    ("memoryos", <u>, "log")           AMU write events
    ("memoryos", <u>, "meta")          conversation clock and counters (key "state")
    ("memoryos", <u>, "version")       the version stamp (stores shared by processes)
    ("memoryos", <u>, "snapshot")      the index snapshot of the user's state (key "state"; shared stores)
    ("memoryos", <u>, "journal")       one row per flush since the snapshot: what it changed (shared stores)
    ("memoryos", <u>, "deleting")      the tombstone of a deletion under way
"""

from __future__ import annotations

import hashlib
import logging

__all__ = ["ROOT", "decode_label", "encode_label", "page_key"]

logger = logging.getLogger(__name__)

ROOT = "memoryos"
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
