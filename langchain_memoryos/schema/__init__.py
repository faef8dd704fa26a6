"""Records of the memory: pages, segments, typed facts, persona, write events, contexts.

Every record is a plain dataclass with ``to_dict`` / ``from_dict`` so that it can
live in any LangGraph ``BaseStore`` as JSON. Timestamps are timezone-aware
``datetime`` objects (naive inputs are taken as UTC).

The package's modules: :mod:`~langchain_memoryos.schema.timestamps` (UTC
times), :mod:`~langchain_memoryos.schema.records` (typed records, relations,
write events), :mod:`~langchain_memoryos.schema.persona` (the persona and its
vocabularies), :mod:`~langchain_memoryos.schema.pages` (dialogue pages and
segments) and :mod:`~langchain_memoryos.schema.context` (what retrieval
returns and how it renders). Every name is importable from here.
"""

from __future__ import annotations

from langchain_memoryos.schema.context import (
    CUT_MARKER_WORDS as CUT_MARKER_WORDS,
)
from langchain_memoryos.schema.context import (
    MEMORY_PREAMBLE as MEMORY_PREAMBLE,
)
from langchain_memoryos.schema.context import (
    PAST_CONVERSATION_TITLE,
    RECENT_CONVERSATION_TITLE,
    MemoryContext,
    MemoryStats,
    ScoredPage,
    ScoredRecord,
    ScoredSegment,
    cut_page,
    page_words,
    past_conversation,
    stm_line,
)
from langchain_memoryos.schema.context import (
    fence_memory as fence_memory,
)
from langchain_memoryos.schema.pages import DialoguePage, Segment
from langchain_memoryos.schema.persona import PROFILE_KEYS, TRAIT_DIMENSIONS, Persona, persona_key, persona_value
from langchain_memoryos.schema.records import (
    ASPECTS,
    INTENTS,
    SENTIMENTS,
    Aspect,
    FactKind,
    Intent,
    MemoryRecord,
    Relation,
    RelationLabel,
    Sentiment,
    WriteAction,
    WriteEvent,
    WriteReport,
)
from langchain_memoryos.schema.search import FactHistory, ForgetReport, SearchHit
from langchain_memoryos.schema.timestamps import check_timestamp, ensure_utc

__all__ = [
    "ASPECTS",
    "INTENTS",
    "PROFILE_KEYS",
    "SENTIMENTS",
    "TRAIT_DIMENSIONS",
    "Aspect",
    "DialoguePage",
    "FactHistory",
    "ForgetReport",
    "FactKind",
    "Intent",
    "MemoryContext",
    "MemoryRecord",
    "MemoryStats",
    "PAST_CONVERSATION_TITLE",
    "RECENT_CONVERSATION_TITLE",
    "Persona",
    "Relation",
    "RelationLabel",
    "ScoredPage",
    "ScoredRecord",
    "ScoredSegment",
    "SearchHit",
    "Segment",
    "Sentiment",
    "WriteAction",
    "WriteEvent",
    "WriteReport",
    "check_timestamp",
    "cut_page",
    "ensure_utc",
    "page_words",
    "past_conversation",
    "persona_key",
    "persona_value",
    "stm_line",
]
