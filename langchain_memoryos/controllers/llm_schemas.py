"""What :class:`~langchain_memoryos.controllers.llm.LLMController` asks the model to fill in, and how an answer is read.

The output schemas (one per judgement), the repair of an answer to the schemas'
limits, the check that it carries what was asked, the mapping of vocabulary
values, and the persona filter (known keys and dimensions, values that look like text).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, get_args

from langchain_core.messages import BaseMessage
from langchain_core.utils.json import parse_json_markdown
from pydantic import BaseModel, Field

from langchain_memoryos.controllers.heuristic import _slot_value
from langchain_memoryos.controllers.slots import as_the_user
from langchain_memoryos.kernel.controller import MemoryRequest
from langchain_memoryos.schema import (
    ASPECTS,
    INTENTS,
    PROFILE_KEYS,
    SENTIMENTS,
    TRAIT_DIMENSIONS,
    FactKind,
    MemoryRecord,
    Persona,
    persona_key,
    persona_value,
)

__all__ = [
    "FuseOutput",
    "PageAnalysisOutput",
    "PromotionOutput",
    "RecordOutput",
    "RecordsOutput",
    "RelationOutput",
    "RequestOutput",
    "RelationsOutput",
]

_SUMMARY_CHARS = 400
_META_CHARS = 600
_KEYWORD_CHARS = 40
_PROFILE_VALUE_CHARS = 80
_TRAIT_VALUE_CHARS = 60
_TRAIT_DIMENSION_NAMES = tuple(d for group in TRAIT_DIMENSIONS.values() for d in group)


# --------------------------------------------------------------------------- schemas (what the model fills in)
# A field without a default must be in the model's own answer: an answer without it is a failed answer.


class RecordOutput(BaseModel):
    """One typed record as the model writes it (AMU fields)."""

    aspect: str = Field(description="personal_profile | social_relationship | activity | health | preference | other")
    intent: str = Field(description="inform | request | express | plan | reflect | other")
    personal: bool = Field(description="true if this is reusable information about the user")
    entities: list[str] = Field(default_factory=list, max_length=8, description="names, places, things")
    summary: str = Field(
        min_length=1, max_length=_SUMMARY_CHARS, description="one third-person, affect-neutral sentence"
    )
    sentiment: str = Field(default="neutral", description="positive | neutral | negative")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, description="rubric score in [0, 1]")
    kind: str = Field(default="user", description="'agent' if it says how the assistant should behave, else 'user'")
    subject: str = Field(
        default="", max_length=60, description="the name of the person the summary is about ('' for the unnamed user)"
    )


class RequestOutput(BaseModel):
    """A request about the memory itself that a page makes ("Forget that I …"): never a record."""

    request: str = Field(description="'forget'")
    about: str = Field(default="", max_length=_SUMMARY_CHARS, description="what is to be forgotten, as said")
    subject: str = Field(default="", max_length=60, description="who asks ('' for the unnamed user)")


class PageAnalysisOutput(BaseModel):
    """The answer for a page just added to short-term memory."""

    linked: bool = Field(description="the page continues the previous page's topic")
    chain_meta: str = Field(max_length=_META_CHARS, description="updated chain summary, at most two sentences")
    keywords: list[str] = Field(max_length=8, description="topic keywords of the page")
    topic_summary: str = Field(default="", max_length=_SUMMARY_CHARS, description="one line naming the topic")
    records: list[RecordOutput] = Field(max_length=8, description="facts worth remembering ([] for none)")
    requests: list[RequestOutput] = Field(
        default_factory=list, max_length=8, description="'Forget …' requests about the memory ([] for none)"
    )


class ProfileItem(BaseModel):
    """One static profile attribute."""

    key: str = Field(max_length=40, description=f"attribute name, one of: {', '.join(PROFILE_KEYS)}")
    value: str = Field(max_length=120, description="attribute value")


class TraitItem(BaseModel):
    """One trait dimension and its values."""

    dimension: str = Field(max_length=40, description="a dimension listed in the prompt, e.g. interests")
    values: list[str] = Field(default_factory=list, max_length=12)


class PromotionOutput(BaseModel):
    """The answer for a promoted segment (an omitted profile or traits list leaves the persona unchanged)."""

    segment_summary: str = Field(max_length=_META_CHARS, description="refreshed summary, at most three sentences")
    segment_keywords: list[str] = Field(default_factory=list, max_length=12)
    user_profile: list[ProfileItem] = Field(default_factory=list, max_length=20)
    user_traits: list[TraitItem] = Field(default_factory=list, max_length=20)
    records: list[RecordOutput] = Field(max_length=12, description="further facts ([] for none)")


class RecordsOutput(BaseModel):
    """Typed records parsed from a statement."""

    records: list[RecordOutput] = Field(max_length=8, description="the statement's facts ([] for none)")


class RelationOutput(BaseModel):
    """The label of one candidate."""

    candidate: int = Field(description="the candidate's number as listed")
    label: str = Field(description="duplicate | update | separate")


class RelationsOutput(BaseModel):
    """The labels of all candidates of one record."""

    relations: list[RelationOutput] = Field(max_length=50, description="one label for every candidate")


class FuseOutput(BaseModel):
    """The merged record."""

    summary: str = Field(
        min_length=1, max_length=_SUMMARY_CHARS, description="one third-person sentence, current state"
    )
    entities: list[str] = Field(default_factory=list, max_length=8)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


S = TypeVar("S", bound=BaseModel)


# --------------------------------------------------------------------------- repair and validation


class _Unusable(ValueError):
    """A model answer that does not carry what was asked (retried, then the heuristic decides)."""


def _repair(schema: type[BaseModel], data: Any) -> Any:
    """Bring model output within the schema's limits: cut texts and lists, clamp numbers.

    Nothing is invented: a missing field stays missing and an item of the wrong
    shape stays in its list, so that validation refuses the answer.
    """
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    for name, info in schema.model_fields.items():
        if name not in data:
            continue
        value = data[name]
        limits = {type(m).__name__: m for m in info.metadata}
        inner = get_args(info.annotation)
        nested = inner[0] if inner and isinstance(inner[0], type) and issubclass(inner[0], BaseModel) else None
        if isinstance(value, list):
            if nested is not None:
                value = [_repair(nested, v) for v in value]
            elif inner and inner[0] is str:
                value = [" ".join(str(v).split())[: _KEYWORD_CHARS * 3] for v in value if str(v).strip()]
            if "MaxLen" in limits:
                value = value[: limits["MaxLen"].max_length]
        elif isinstance(value, str):
            value = " ".join(value.split())
            if "MaxLen" in limits:
                value = value[: limits["MaxLen"].max_length]
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and info.annotation is float:
            low = limits["Ge"].ge if "Ge" in limits else None
            high = limits["Le"].le if "Le" in limits else None
            value = min(float(high), value) if high is not None else value
            value = max(float(low), value) if low is not None else value
        out[name] = value
    return out


def _match(value: Any, allowed: Sequence[str]) -> str | None:
    """``value`` on a vocabulary: exact, then case/spacing-insensitive, then a prefix, else ``None``."""
    text = re.sub(r"[\s-]+", "_", str(value).strip().lower())
    if text in allowed:
        return text
    for word in allowed:
        if text.startswith(word[:5]) or word.startswith(text[:5] or "\0"):
            return word
    return None


def _vocab(value: Any, allowed: Sequence[str], default: str) -> str:
    """``value`` mapped onto a vocabulary (see :func:`_match`), else ``default``."""
    return _match(value, allowed) or default


def _answer(schema: type[S], result: Any, check: Callable[[S], None] | None) -> S:
    """The model's answer as ``schema``; raises when it does not carry what was asked.

    ``result`` is ``with_structured_output(..., include_raw=True)``'s dict or, in
    JSON mode, the model's message. The tool call's arguments are read (or a JSON
    object in the text, by ``parse_json_markdown``), repaired and validated.
    """
    raw = result.get("raw") if isinstance(result, dict) else result
    if not isinstance(raw, BaseMessage):
        raise _Unusable("no model message")
    tool_calls = getattr(raw, "tool_calls", None) or []
    data = tool_calls[0]["args"] if tool_calls else parse_json_markdown(raw.text)
    if not isinstance(data, dict):
        raise _Unusable(f"the answer is a JSON {type(data).__name__}, not one {schema.__name__} object")
    out = schema.model_validate(_repair(schema, data))
    if check is not None:
        check(out)
    return out


def _record_from(out: RecordOutput, default_kind: str) -> MemoryRecord:
    kind: FactKind = "agent" if _vocab(out.kind, ("user", "agent"), default_kind) == "agent" else "user"
    summary = out.summary.strip()
    subject = out.subject.strip() if kind == "user" and out.subject.strip() in summary else ""
    # a named person's slot is their own, read as the offline controller reads it ("The user's daughter Lily is 6")
    slot = _slot_value(as_the_user(summary, subject), kind) if summary else None
    return MemoryRecord(
        kind=kind,
        aspect=_vocab(out.aspect, ASPECTS, "other"),  # type: ignore[arg-type]
        intent=_vocab(out.intent, INTENTS, "inform"),  # type: ignore[arg-type]
        personal=bool(out.personal),
        entities=[e.strip() for e in out.entities if e.strip()],
        summary=summary,
        sentiment=_vocab(out.sentiment, SENTIMENTS, "neutral"),  # type: ignore[arg-type]
        confidence=float(out.confidence),
        slot=slot[0] if slot else "",
        subject=subject,
    )


def _persona_update(persona: Persona, out: PromotionOutput) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """The persona after a promotion answer: only known keys and dimensions, and values that look like text.

    Returns the profile, the traits and the refused keys (shortened, for the log).
    """
    profile = dict(persona.user_profile)
    traits = {k: list(v) for k, v in persona.user_traits.items()}
    refused: list[str] = []
    for item in out.user_profile:
        key, value = persona_key(item.key, PROFILE_KEYS), persona_value(item.value, _PROFILE_VALUE_CHARS)
        if key is None or value is None:
            refused.append(item.key[:20])
            continue
        profile[key] = value
    for trait in out.user_traits:
        dimension = persona_key(trait.dimension, _TRAIT_DIMENSION_NAMES)
        values = [v for v in (persona_value(x, _TRAIT_VALUE_CHARS) for x in trait.values) if v is not None]
        if dimension is None or len(values) < len(trait.values):
            refused.append(trait.dimension[:20])
        if dimension is not None and values:
            traits[dimension] = list(dict.fromkeys(values))
    return profile, traits, refused


def _requests_from(out: Sequence[RequestOutput]) -> list[MemoryRequest]:
    """The forget requests of an answer (another kind of request is not one the memory knows: dropped)."""
    return [
        MemoryRequest("forget", r.about.strip(), r.subject.strip())
        for r in out
        if _match(r.request, ("forget",)) == "forget"
    ]


def _keywords(values: Sequence[str]) -> list[str]:
    out = [" ".join(v.lower().split())[:_KEYWORD_CHARS] for v in values]
    return list(dict.fromkeys(v for v in out if v))
