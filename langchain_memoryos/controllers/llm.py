"""``LLMController``: every memory judgement by any LangChain chat model, one call each.

* one call per page leaving STM (chain link, chain meta, keywords, topic
  summary, candidate typed records);
* one call per promotion (segment summary and keywords, persona, records);
* one call per admitted record that has candidates (all candidates at once);
* one call per update (fuse); retrieval makes none.

Structured output goes through ``with_structured_output`` (tool calling); a
model without tool calling is asked for JSON and its text is repaired and
parsed. Every field is checked: texts and lists are cut to their limits,
numbers clamped, vocabulary values mapped to the closest allowed value or to a
default. A call that fails (timeout, HTTP error, unparsable or invalid output)
is retried ``max_retries`` times; then that one judgement falls back to
:class:`HeuristicController`, a warning is logged and the usage says so (the
AMU write event carries ``fallback=True``). The turn is always stored and no
error text ever reaches memory.

Sync and async share one body per judgement: a generator that yields the model
calls it needs; :meth:`LLMController._run` performs them with ``invoke`` and
:meth:`LLMController._arun` with ``ainvoke``.

Example:
    >>> from langchain_core.language_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> from langchain_memoryos.schema import MemoryRecord
    >>> reply = AIMessage('{"records": [{"aspect": "personal_profile", "intent": "inform", "personal": true,'
    ...                   ' "entities": ["Denver"], "summary": "The user lives in Denver.", "confidence": 1}]}')
    >>> c = LLMController(GenericFakeChatModel(messages=iter([reply])))
    >>> [r.summary for r in c.parse_records("I live in Denver", "user").records]
    ['The user lives in Denver.']
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast, get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from langchain_memoryos.config import ModelThresholds
from langchain_memoryos.controllers.base import (
    BaseController,
    ControllerUsage,
    FuseResult,
    PageAnalysis,
    ParsedRecords,
    PromotionResult,
    RelationJudgement,
)
from langchain_memoryos.controllers.heuristic import HeuristicController, _slot_value
from langchain_memoryos.controllers.prompts import Prompts
from langchain_memoryos.schema import (
    ASPECTS,
    INTENTS,
    SENTIMENTS,
    DialoguePage,
    FactKind,
    MemoryRecord,
    Persona,
    Relation,
    RelationLabel,
    Segment,
)

__all__ = [
    "FuseOutput",
    "LLMController",
    "PageAnalysisOutput",
    "PromotionOutput",
    "RecordOutput",
    "RecordsOutput",
    "RelationsOutput",
]

logger = logging.getLogger("langchain_memoryos")

_SUMMARY_CHARS = 400
_META_CHARS = 600
_KEYWORD_CHARS = 40


# --------------------------------------------------------------------------- schemas (what the model fills in)


class RecordOutput(BaseModel):
    """One typed record as the model writes it (AMU fields)."""

    aspect: str = Field(description="personal_profile | social_relationship | activity | health | preference | other")
    intent: str = Field(description="inform | request | express | plan | reflect | other")
    personal: bool = Field(description="true if this is reusable information about the user")
    entities: list[str] = Field(default_factory=list, max_length=8, description="names, places, things")
    summary: str = Field(max_length=_SUMMARY_CHARS, description="one third-person, affect-neutral sentence")
    sentiment: str = Field(default="neutral", description="positive | neutral | negative")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, description="rubric score in [0, 1]")
    kind: str = Field(default="user", description="'agent' if it says how the assistant should behave, else 'user'")


class PageAnalysisOutput(BaseModel):
    """The answer for a page leaving short-term memory."""

    linked: bool = Field(description="the page continues the previous page's topic")
    chain_meta: str = Field(max_length=_META_CHARS, description="updated chain summary, at most two sentences")
    keywords: list[str] = Field(default_factory=list, max_length=8, description="topic keywords of the page")
    topic_summary: str = Field(default="", max_length=_SUMMARY_CHARS, description="one line naming the topic")
    records: list[RecordOutput] = Field(default_factory=list, max_length=8, description="facts worth remembering")


class ProfileItem(BaseModel):
    """One static profile attribute."""

    key: str = Field(max_length=40, description="attribute name, e.g. location")
    value: str = Field(max_length=120, description="attribute value")


class TraitItem(BaseModel):
    """One trait dimension and its values."""

    dimension: str = Field(max_length=40, description="e.g. interests, personality, answer_style")
    values: list[str] = Field(default_factory=list, max_length=12)


class PromotionOutput(BaseModel):
    """The answer for a promoted segment."""

    segment_summary: str = Field(max_length=_META_CHARS, description="refreshed summary, at most three sentences")
    segment_keywords: list[str] = Field(default_factory=list, max_length=12)
    user_profile: list[ProfileItem] = Field(default_factory=list, max_length=20)
    user_traits: list[TraitItem] = Field(default_factory=list, max_length=20)
    records: list[RecordOutput] = Field(default_factory=list, max_length=12)


class RecordsOutput(BaseModel):
    """Typed records parsed from a statement."""

    records: list[RecordOutput] = Field(default_factory=list, max_length=8)


class RelationOutput(BaseModel):
    """The label of one candidate."""

    candidate: int = Field(description="the candidate's number as listed")
    label: str = Field(description="duplicate | update | separate")


class RelationsOutput(BaseModel):
    """The labels of all candidates of one record."""

    relations: list[RelationOutput] = Field(default_factory=list, max_length=50)


class FuseOutput(BaseModel):
    """The merged record."""

    summary: str = Field(max_length=_SUMMARY_CHARS, description="one third-person sentence, current state")
    entities: list[str] = Field(default_factory=list, max_length=8)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


S = TypeVar("S", bound=BaseModel)
T = TypeVar("T")


# --------------------------------------------------------------------------- repair and validation


def _repair(schema: type[BaseModel], data: Any) -> Any:
    """Bring model output within the schema's limits: cut texts and lists, clamp numbers."""
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
                value = [_repair(nested, v) for v in value if isinstance(v, dict)]
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


def _vocab(value: Any, allowed: Sequence[str], default: str) -> str:
    """``value`` mapped onto a vocabulary: exact, then case/spacing-insensitive, then a prefix, else ``default``."""
    text = re.sub(r"[\s-]+", "_", str(value).strip().lower())
    if text in allowed:
        return text
    for word in allowed:
        if text.startswith(word[:5]) or word.startswith(text[:5] or "\0"):
            return word
    return default


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def _json_from_text(text: str) -> Any:
    """The JSON object in a model's text: code fences stripped, the outermost braces, trailing commas removed."""
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the model's answer")
    candidate = re.sub(r",\s*([}\]])", r"\1", body[start : end + 1])
    return json.loads(candidate)


def _tokens(message: Any, prompt: Sequence[BaseMessage]) -> int:
    usage = getattr(message, "usage_metadata", None)
    if usage and usage.get("total_tokens"):
        return int(usage["total_tokens"])
    text = sum(len(str(m.content)) for m in prompt) + len(str(getattr(message, "content", "")))
    return max(1, text // 4)


def _record_from(out: RecordOutput, default_kind: str) -> MemoryRecord:
    kind: FactKind = "agent" if _vocab(out.kind, ("user", "agent"), default_kind) == "agent" else "user"
    summary = out.summary.strip()
    slot = _slot_value(summary, kind) if summary else None
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
    )


def _date(value: _dt.datetime | None) -> str:
    return value.date().isoformat() if value is not None else "unknown"


def _describe(record: MemoryRecord) -> str:
    return f"{record.summary} [aspect: {record.aspect}; entities: {', '.join(record.entities) or '-'}]"


# --------------------------------------------------------------------------- the controller


@dataclass(frozen=True)
class _Call:
    """One model call a judgement needs: the runnable, its input and its config."""

    runnable: Any
    messages: list[BaseMessage]
    config: dict[str, Any]
    schema: type[BaseModel]
    structured: bool


Judgement = Generator[_Call, Any, T]


class LLMController(BaseController):
    """Memory judgements by a LangChain chat model, with retries and a heuristic fallback.

    Args:
        model: a ``BaseChatModel``, or a model name for ``init_chat_model``
            (needs the ``agents`` extra) — see :func:`~langchain_memoryos.chat_models.resolve_chat_model`.
        max_retries: further attempts after a failed call (timeout, HTTP error,
            unparsable or invalid output) before the judgement falls back.
        prompts: prompt templates (default :class:`Prompts`).
        fallback: the controller a failed judgement falls back to (default a
            :class:`HeuristicController` with the memory's thresholds).

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> LLMController(GenericFakeChatModel(messages=iter([]))).name
        'llm'
    """

    name = "llm"

    def __init__(
        self,
        model: BaseChatModel | str,
        /,
        *,
        max_retries: int = 2,
        prompts: Prompts | None = None,
        fallback: HeuristicController | None = None,
    ) -> None:
        from langchain_memoryos.chat_models import resolve_chat_model

        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an int >= 0, got {max_retries!r}")
        self.model = resolve_chat_model(model)
        self.max_retries = max_retries
        self.prompts = prompts or Prompts()
        self.fallback = fallback or HeuristicController()
        self._structured: dict[type[BaseModel], Any] = {}
        self._tool_calling: bool | None = None

    def adopt_thresholds(self, thresholds: ModelThresholds) -> None:
        """Pass the memory's thresholds on to the fallback controller.

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> from langchain_memoryos.config import MODEL_THRESHOLDS
            >>> c = LLMController(GenericFakeChatModel(messages=iter([])))
            >>> c.adopt_thresholds(MODEL_THRESHOLDS["default"]); c.fallback.thresholds.chain_similarity
            0.5
        """
        self.fallback.adopt_thresholds(thresholds)

    # -- calls ----------------------------------------------------------------
    def _call(self, judgement: str, schema: type[BaseModel], prompt: str) -> _Call:
        messages: list[BaseMessage] = [SystemMessage(self.prompts.system), HumanMessage(prompt)]
        config = {
            "tags": ["nostream", "memoryos"],
            "metadata": {"lc_source": "memoryos", "memoryos_judgement": judgement},
            "run_name": f"memoryos_{judgement}",
        }
        runnable = self._structured_runnable(schema)
        if runnable is None:
            schema_json = json.dumps(schema.model_json_schema(), ensure_ascii=False)
            messages[-1] = HumanMessage(
                f"{prompt}\n\nAnswer with one JSON object only, matching this JSON schema:\n{schema_json}"
            )
            return _Call(self.model, messages, config, schema, structured=False)
        return _Call(runnable, messages, config, schema, structured=True)

    def _structured_runnable(self, schema: type[BaseModel]) -> Any:
        """``with_structured_output(schema, include_raw=True)``, or ``None`` for a model without tool calling."""
        if self._tool_calling is False:
            return None
        if schema not in self._structured:
            try:
                try:  # tool calling is what OpenAI-compatible servers (vLLM, Ollama …) support most widely
                    runnable = self.model.with_structured_output(schema, include_raw=True, method="function_calling")
                except (TypeError, ValueError):  # a model whose with_structured_output takes no ``method``
                    runnable = self.model.with_structured_output(schema, include_raw=True)
            except NotImplementedError:
                self._tool_calling = False
                return None
            self._structured[schema] = runnable
            self._tool_calling = True
        return self._structured[schema]

    def _parse(self, call: _Call, result: Any) -> tuple[BaseModel, int]:
        """The validated output of one call and its tokens; raises on anything unusable."""
        if call.structured:
            raw = result.get("raw") if isinstance(result, dict) else None
            parsed = result.get("parsed") if isinstance(result, dict) else result
            tokens = _tokens(raw, call.messages)
            if isinstance(parsed, call.schema):
                return call.schema.model_validate(_repair(call.schema, parsed.model_dump())), tokens
            tool_calls = getattr(raw, "tool_calls", None) or []
            data = tool_calls[0]["args"] if tool_calls else _json_from_text(str(getattr(raw, "content", "")))
            return call.schema.model_validate(_repair(call.schema, data)), tokens
        text = result.text if isinstance(result, AIMessage) else str(getattr(result, "content", result))
        return call.schema.model_validate(_repair(call.schema, _json_from_text(text))), _tokens(result, call.messages)

    def _ask(self, call: _Call) -> Judgement[tuple[Any, ControllerUsage]]:
        """Yield the call until it parses (at most ``max_retries + 1`` times); ``None`` when all failed."""
        usage = ControllerUsage()
        errors: list[str] = []
        for _ in range(self.max_retries + 1):
            usage.llm_calls += 1
            try:
                result = yield call
                parsed, tokens = self._parse(call, result)
            except (ValidationError, ValueError, KeyError, TypeError, AttributeError) as exc:
                errors.append(f"unusable output ({type(exc).__name__})")
                usage.llm_tokens += _tokens(None, call.messages)
                continue
            except Exception as exc:  # noqa: BLE001 - timeouts, HTTP and provider errors are retried
                errors.append(f"{type(exc).__name__}: {str(exc)[:120]}")
                continue
            usage.llm_tokens += tokens
            return parsed, usage
        usage.fallback = True
        usage.note = f"model failed {len(errors)} times ({errors[-1] if errors else 'no answer'}); heuristic used"
        return None, usage

    def _run(self, judgement: Judgement[T]) -> T:
        """Drive a judgement with ``invoke``."""
        try:
            call = next(judgement)
            while True:
                try:
                    result = call.runnable.invoke(call.messages, config=call.config)
                except Exception as exc:  # noqa: BLE001 - handed to the judgement, which retries or falls back
                    call = judgement.throw(exc)
                    continue
                call = judgement.send(result)
        except StopIteration as stop:
            return cast(T, stop.value)

    async def _arun(self, judgement: Judgement[T]) -> T:
        """Drive a judgement with ``ainvoke``."""
        try:
            call = next(judgement)
            while True:
                try:
                    result = await call.runnable.ainvoke(call.messages, config=call.config)
                except Exception as exc:  # noqa: BLE001 - handed to the judgement, which retries or falls back
                    call = judgement.throw(exc)
                    continue
                call = judgement.send(result)
        except StopIteration as stop:
            return cast(T, stop.value)

    @staticmethod
    def _fell_back(judgement: str, usage: ControllerUsage, result: T) -> T:
        logger.warning("memoryos: %s fell back to the heuristic controller: %s", judgement, usage.note)
        fallback_usage = getattr(result, "usage", None)
        if fallback_usage is not None:
            result.usage = replace(usage)  # type: ignore[attr-defined]
        return result

    # -- judgements (one body each, shared by sync and async) --------------------
    def _analyze(
        self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None
    ) -> Judgement[PageAnalysis]:
        prompt = self.prompts.analyze_page.format(
            previous=previous.text if previous is not None else "(none)",
            previous_date=_date(previous.timestamp if previous is not None else None),
            meta=(previous.meta if previous is not None else "") or "(none)",
            page=page.text,
            date=_date(page.timestamp),
        )
        out, usage = yield from self._ask(self._call("analyze_page", PageAnalysisOutput, prompt))
        if out is None:
            return self._fell_back("analyze_page", usage, self.fallback.analyze_page(page, previous, similarity))
        linked = bool(out.linked) and previous is not None
        return PageAnalysis(
            linked=linked,
            chain_meta=out.chain_meta.strip() or out.topic_summary.strip(),
            keywords=_keywords(out.keywords),
            topic_summary=out.topic_summary.strip() or out.chain_meta.strip(),
            records=[_record_from(r, "user") for r in out.records if r.summary.strip()],
            usage=usage,
        )

    def _promote(self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona) -> Judgement[PromotionResult]:
        listing = "\n".join(f"[{_date(p.timestamp)}] {p.text}" for p in pages)
        prompt = self.prompts.promote_segment.format(
            summary=segment.summary or "(none)",
            pages=listing,
            profile=json.dumps(persona.user_profile, ensure_ascii=False),
            traits=json.dumps(persona.user_traits, ensure_ascii=False),
        )
        out, usage = yield from self._ask(self._call("promote_segment", PromotionOutput, prompt))
        if out is None:
            return self._fell_back("promote_segment", usage, self.fallback.promote_segment(segment, pages, persona))
        profile = dict(persona.user_profile)
        profile.update({_key(i.key): i.value.strip() for i in out.user_profile if _key(i.key) and i.value.strip()})
        traits = {k: list(v) for k, v in persona.user_traits.items()}
        for item in out.user_traits:
            values = list(dict.fromkeys(v.strip() for v in item.values if v.strip()))
            if _key(item.dimension) and values:
                traits[_key(item.dimension)] = values
        return PromotionResult(
            segment_summary=out.segment_summary.strip() or segment.summary,
            segment_keywords=_keywords(out.segment_keywords),
            user_profile=profile,
            user_traits=traits,
            records=[_record_from(r, "user") for r in out.records if r.summary.strip()],
            usage=usage,
        )

    def _parse_records(self, text: str, kind: str) -> Judgement[ParsedRecords]:
        prompt = self.prompts.parse_records.format(text=text, kind=kind, date=_date(_dt.datetime.now(_dt.UTC)))
        out, usage = yield from self._ask(self._call("parse_records", RecordsOutput, prompt))
        if out is None:
            return self._fell_back("parse_records", usage, self.fallback.parse_records(text, kind))
        records = [_record_from(r, kind) for r in out.records if r.summary.strip()]
        if kind == "agent":
            records = [replace(r, kind="agent") for r in records]
        return ParsedRecords(records, usage=usage)

    def _judge(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> Judgement[RelationJudgement]:
        if not candidates:
            return RelationJudgement([])
        listing = "\n".join(f"{i}. {_describe(c)}" for i, (c, _) in enumerate(candidates, 1))
        prompt = self.prompts.judge_relations.format(
            candidates=listing, record=_describe(record), date=_date(record.created_at)
        )
        out, usage = yield from self._ask(self._call("judge_relations", RelationsOutput, prompt))
        if out is None:
            return self._fell_back("judge_relations", usage, self.fallback.judge_relations(record, candidates))
        labels: dict[int, RelationLabel] = {}
        for item in out.relations:
            if 1 <= item.candidate <= len(candidates):
                labels[item.candidate] = _vocab(item.label, ("duplicate", "update", "separate"), "separate")  # type: ignore[assignment]
        relations = [
            Relation(c.id, labels.get(i, "separate"), float(sim), "model" if i in labels else "model gave no label")
            for i, (c, sim) in enumerate(candidates, 1)
        ]
        return RelationJudgement(relations, usage=usage)

    def _fuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> Judgement[FuseResult]:
        listing = "\n".join(f"- ({_date(u.updated_at)}) {_describe(u)}" for u in updated)
        prompt = self.prompts.fuse.format(updated=listing, record=_describe(record), date=_date(record.created_at))
        out, usage = yield from self._ask(self._call("fuse", FuseOutput, prompt))
        if out is None or not out.summary.strip():
            if out is not None:
                usage.fallback, usage.note = True, "model returned an empty summary; heuristic used"
            return self._fell_back("fuse", usage, self.fallback.fuse(record, updated))
        summary = out.summary.strip()
        slot = _slot_value(summary, record.kind)
        fused = replace(
            record,
            summary=summary,
            entities=[e.strip() for e in out.entities if e.strip()] or list(record.entities),
            confidence=float(out.confidence),
            slot=slot[0] if slot else record.slot,
        )
        return FuseResult(fused, usage=usage)

    # -- the protocol -----------------------------------------------------------
    def analyze_page(self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None) -> PageAnalysis:
        """See :class:`~langchain_memoryos.controllers.base.MemoryController` (one call)."""
        return self._run(self._analyze(page, previous, similarity))

    async def aanalyze_page(
        self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None
    ) -> PageAnalysis:
        """Async twin of :meth:`analyze_page` (``ainvoke``)."""
        return await self._arun(self._analyze(page, previous, similarity))

    def promote_segment(self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona) -> PromotionResult:
        """See :class:`~langchain_memoryos.controllers.base.MemoryController` (one call)."""
        return self._run(self._promote(segment, pages, persona))

    async def apromote_segment(
        self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona
    ) -> PromotionResult:
        """Async twin of :meth:`promote_segment` (``ainvoke``)."""
        return await self._arun(self._promote(segment, pages, persona))

    def parse_records(self, text: str, kind: str) -> ParsedRecords:
        """See :class:`~langchain_memoryos.controllers.base.MemoryController` (one call)."""
        return self._run(self._parse_records(text, kind))

    async def aparse_records(self, text: str, kind: str) -> ParsedRecords:
        """Async twin of :meth:`parse_records` (``ainvoke``)."""
        return await self._arun(self._parse_records(text, kind))

    def judge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """See :class:`~langchain_memoryos.controllers.base.MemoryController` (one call, none without candidates)."""
        return self._run(self._judge(record, candidates))

    async def ajudge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """Async twin of :meth:`judge_relations` (``ainvoke``)."""
        return await self._arun(self._judge(record, candidates))

    def fuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """See :class:`~langchain_memoryos.controllers.base.MemoryController` (one call)."""
        return self._run(self._fuse(record, updated))

    async def afuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """Async twin of :meth:`fuse` (``ainvoke``)."""
        return await self._arun(self._fuse(record, updated))


def _key(text: str) -> str:
    return re.sub(r"[^\w]+", "_", text.strip().lower()).strip("_")[:40]


def _keywords(values: Sequence[str]) -> list[str]:
    out = [" ".join(v.lower().split())[:_KEYWORD_CHARS] for v in values]
    return list(dict.fromkeys(v for v in out if v))
