"""Copies of the schema's records for the caller, made without ``dataclasses.replace``.

A read hands out copies of the stored pages, facts and segments (the caller may
change them), a few dozen per read. ``dataclasses.replace`` builds each copy
through the class's ``__init__`` with every field passed by name, several
microseconds apiece; :func:`copied` copies the instance's attributes instead,
which gives the same object for the schema's plain dataclasses (no
``__post_init__``, every field an ``__init__`` field, no other attributes).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["copied"]

_T = TypeVar("_T")


def copied(obj: _T, **changes: Any) -> _T:
    """``dataclasses.replace(obj, **changes)``, faster for a plain dataclass instance: a shallow copy with ``changes``.

    Any other object (a class with ``__post_init__``, an ``InitVar`` or a field
    ``__init__`` does not take, slots, an attribute that is not a field) or a
    change that names no field goes to ``dataclasses.replace`` itself.

    Example:
        >>> from langchain_memoryos.schema import DialoguePage
        >>> page = DialoguePage(id="p", user_input="hi", agent_response="yo", keywords=["hi"])
        >>> twin = copied(page, agent_response="")
        >>> twin == dataclasses.replace(page, agent_response=""), twin.keywords is page.keywords
        (True, True)
    """
    names = _field_names(type(obj))
    attrs = getattr(obj, "__dict__", None)
    if names is None or attrs is None or len(attrs) != len(names) or not changes.keys() <= names:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    twin = object.__new__(type(obj))
    twin.__dict__.update(attrs)
    twin.__dict__.update(changes)
    return twin


_NAMES: dict[type, frozenset[str] | None] = {}


def _field_names(cls: type) -> frozenset[str] | None:
    """The fields of a dataclass whose attributes ``replace`` would copy as they are (``None``: not such a class)."""
    if cls not in _NAMES:
        every = getattr(cls, "__dataclass_fields__", None)
        fields = dataclasses.fields(cls) if every is not None else ()
        plain = (
            every is not None
            and len(fields) == len(every)  # no ClassVar or InitVar pseudo-fields
            and all(f.init for f in fields)
            and not hasattr(cls, "__post_init__")
        )
        _NAMES[cls] = frozenset(f.name for f in fields) if plain else None
    return _NAMES[cls]
