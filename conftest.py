"""Doctest names: the method groups of ``MemoryOS`` (``langchain_memoryos/facade/``) keep its docstrings.

Those docstrings' examples call ``MemoryOS`` as they did when the methods were
written in ``langchain_memoryos/memory.py``; a method group cannot import the
class it is a part of, so the name is given to every doctest here.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _memoryos_in_doctests(doctest_namespace: dict[str, Any]) -> None:
    from langchain_memoryos import MemoryOS

    doctest_namespace.setdefault("MemoryOS", MemoryOS)
