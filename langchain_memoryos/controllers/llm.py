"""``LLMController``: every memory judgement by any LangChain chat model, one call each.

* one call per page, when it is added (chain link, chain meta, keywords, topic
  summary, candidate typed records, written with the turn and judged offline);
* one call per promotion (segment summary and keywords, persona, records);
* one call per admitted record that has candidates (all candidates at once);
* one call per update (fuse); retrieval makes none.

The call path is LangChain's own: ``with_structured_output(schema,
include_raw=True)`` (tool calling), or for a model without tool calling a JSON
answer parsed with ``parse_json_markdown``; then a check that the answer
carries what was asked; the whole wrapped in ``with_retry``. Every field is
checked: texts and lists are cut to their limits, numbers clamped, vocabulary
values mapped to the closest allowed value or to a default. An answer that does
not carry what was asked is a failed answer, like a timeout or an HTTP error:
the fields a judgement needs must be in the model's own answer (never filled
in by defaults: ``{"foo": 1}`` is no answer), a JSON array is not an object,
the relation judge must label every candidate and a fuse must give a summary.
A failed call is retried ``max_retries`` times; then that one judgement falls
back to :class:`HeuristicController`, a warning is logged and the usage says so
(``fallbacks`` in ``MemoryOS.stats().llm_usage``; an AMU write event carries
``fallback=True``). So does a judgement that has no answer within
``judgement_timeout_seconds``, retries included: a hung model never hangs a
turn. The turn is always stored and no error text ever reaches memory.

Persona updates keep only profile keys from :data:`~langchain_memoryos.schema.PROFILE_KEYS`
and trait dimensions from :data:`~langchain_memoryos.schema.TRAIT_DIMENSIONS`,
with values that look like text (see :func:`~langchain_memoryos.schema.persona_value`).

Sync and async share one body per judgement: a generator that yields the model
call it needs; :meth:`LLMController._run` performs it with ``invoke`` (in a
worker thread, so that the deadline holds) and :meth:`LLMController._arun` with
``ainvoke``.

Example:
    >>> from langchain_core.language_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> reply = AIMessage('{"records": [{"aspect": "personal_profile", "intent": "inform", "personal": true,'
    ...                   ' "entities": ["Denver"], "summary": "The user lives in Denver.", "confidence": 1}]}')
    >>> c = LLMController(GenericFakeChatModel(messages=iter([reply])))
    >>> [r.summary for r in c.parse_records("I live in Denver", "user").records]
    ['The user lives in Denver.']
"""

import asyncio
import contextvars
import datetime as _dt
import json
import logging
import math
import threading
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import ensure_config, merge_configs
from pydantic import BaseModel, ValidationError

from langchain_memoryos.config import MemoryOSConfig, ModelThresholds
from langchain_memoryos.controllers.dates import format_date
from langchain_memoryos.controllers.heuristic import HeuristicController, _slot_value
from langchain_memoryos.controllers.llm_schemas import (
    FuseOutput,
    PageAnalysisOutput,
    PromotionOutput,
    RecordOutput,
    RecordsOutput,
    RelationsOutput,
    S,
    _answer,
    _keywords,
    _match,
    _persona_update,
    _record_from,
    _requests_from,
    _Unusable,
)
from langchain_memoryos.controllers.prompts import Prompts
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.kernel.controller import (
    BaseController,
    ControllerUsage,
    FuseResult,
    PageAnalysis,
    ParsedRecords,
    PromotionResult,
    QueryPlan,
    RelationJudgement,
)
from langchain_memoryos.schema import (
    PROFILE_KEYS,
    TRAIT_DIMENSIONS,
    DialoguePage,
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

T = TypeVar("T")


class _Deadline(TimeoutError):
    """A judgement that had no answer within its deadline."""


def _estimate(texts: Sequence[str]) -> int:
    return max(1, sum(len(t) for t in texts) // 4)


class _UsageCounter(BaseCallbackHandler):
    """Counts one judgement's model calls and tokens, retries included (a callback of its runs)."""

    run_inline = True

    def __init__(self, prompt: Sequence[BaseMessage]) -> None:
        self.calls = 0
        self.tokens = 0
        self._prompt = [str(m.content) for m in prompt]

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.calls += 1

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        total, texts = 0, []
        for generations in response.generations:
            for generation in generations:
                message = getattr(generation, "message", None)
                usage = getattr(message, "usage_metadata", None)
                total += int(usage.get("total_tokens") or 0) if usage else 0
                texts.append(generation.text)
        self.tokens += total or _estimate([*self._prompt, *texts])

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        self.tokens += _estimate(self._prompt)

    def usage(self) -> ControllerUsage:
        return ControllerUsage(llm_calls=self.calls, llm_tokens=self.tokens)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, (_Unusable, _Deadline)):
        return str(exc)
    if isinstance(exc, (ValidationError, ValueError, KeyError, TypeError, AttributeError)):
        return f"unusable output ({type(exc).__name__})"
    return f"{type(exc).__name__}: {str(exc)[:120]}"


def _date(value: _dt.datetime | None) -> str:
    return value.date().isoformat() if value is not None else "unknown"


def _said_on(value: _dt.datetime) -> str:
    """A page's date as the analyze_page prompt gives it: weekday, the memory's format, ISO."""
    return f"{value:%A}, {format_date(value.date())} ({value.date().isoformat()})"


def _describe(record: MemoryRecord) -> str:
    return f"{record.summary} [aspect: {record.aspect}; entities: {', '.join(record.entities) or '-'}]"


def _known_names(page: DialoguePage) -> str:
    """The names the page's metadata gives (the prompt's ``names``)."""
    meta = page.metadata or {}
    user = meta.get("user_name") or meta.get("persona_name")
    parts = [f"the user is {user}" if user else "the user's name is unknown (use the names before each side)"]
    if meta.get("agent_name"):
        parts.append(f"the assistant is {meta['agent_name']}")
    if meta.get("user_name"):
        parts.append(f"keep only facts about {meta['user_name']}")
    return "; ".join(parts)


def _page_records(records: list[MemoryRecord], page: DialoguePage) -> list[MemoryRecord]:
    """A page's records as kept: no questions, only the known user's facts, at most 3 per person."""
    user = (page.metadata or {}).get("user_name")
    kept: list[MemoryRecord] = []
    per_person: dict[str, int] = {}
    for r in records:
        if r.kind == "user" and (r.summary.rstrip().endswith("?") or (user and r.subject and r.subject != user)):
            continue
        per_person[r.subject] = per_person.get(r.subject, 0) + (r.kind == "user")
        if per_person[r.subject] <= 3:
            kept.append(r)
    return kept


def _check_timeout(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{name} must be a number of seconds > 0 or None (no deadline), got {value!r}")
    return float(value)


# --------------------------------------------------------------------------- the controller


@dataclass(frozen=True)
class _Call:
    """The model call a judgement needs: the runnable (retries included), its input, config and usage counter."""

    runnable: Runnable[list[BaseMessage], Any]
    messages: list[BaseMessage]
    config: RunnableConfig
    counter: _UsageCounter


Judgement = Generator[_Call, Any, T]


class LLMController(BaseController):
    """Memory judgements by a LangChain chat model, with retries, a deadline and a heuristic fallback.

    Args:
        model: a ``BaseChatModel``, or a model name for ``init_chat_model``
            (needs the ``agents`` extra) — see :func:`~langchain_memoryos.controllers.chat_models.resolve_chat_model`.
        max_retries: further attempts after a failed call (timeout, HTTP error,
            unparsable output, or an answer that does not carry what was asked)
            before the judgement falls back.
        prompts: prompt templates (default :class:`Prompts`).
        fallback: the controller a failed judgement falls back to (default a
            :class:`HeuristicController` with the memory's thresholds).
        judgement_timeout_seconds: the deadline of one judgement, retries
            included, after which the fallback decides (``None``: no deadline).
            ``MemoryOS(model=...)`` passes ``MemoryOSConfig.judgement_timeout_seconds``.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> c = LLMController(GenericFakeChatModel(messages=iter([])), judgement_timeout_seconds=5)
        >>> c.name, c.judgement_timeout_seconds
        ('llm', 5.0)
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
        judgement_timeout_seconds: float | None = MemoryOSConfig.judgement_timeout_seconds,
    ) -> None:
        from langchain_memoryos.controllers.chat_models import resolve_chat_model

        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InvalidInputError(f"max_retries must be an int >= 0, got {max_retries!r}")
        self.judgement_timeout_seconds = _check_timeout(judgement_timeout_seconds, "judgement_timeout_seconds")
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
    def _call(self, judgement: str, schema: type[S], prompt: str, check: Callable[[S], None] | None = None) -> _Call:
        """The call of one judgement: ``schema``'s runnable, checked and retried, with its prompt and config."""
        structured = self._structured_runnable(schema)
        if structured is None:
            schema_json = json.dumps(schema.model_json_schema(), ensure_ascii=False)
            prompt = f"{prompt}\n\nAnswer with one JSON object only, matching this JSON schema:\n{schema_json}"

        def checked(result: Any) -> S:
            return _answer(schema, result, check)

        runnable = (structured if structured is not None else self.model) | RunnableLambda(
            checked, name=f"memoryos_check_{judgement}"
        )
        retried = runnable.with_retry(
            retry_if_exception_type=(Exception,),
            wait_exponential_jitter=False,
            stop_after_attempt=self.max_retries + 1,
        )
        messages: list[BaseMessage] = [SystemMessage(self.prompts.system), HumanMessage(prompt)]
        counter = _UsageCounter(messages)
        own: RunnableConfig = {
            "tags": ["nostream", "memoryos"],
            "metadata": {"lc_source": "memoryos", "memoryos_judgement": judgement},
            "run_name": f"memoryos_{judgement}",
            "callbacks": [counter],
        }
        # the caller's config (a LangGraph node's callbacks, tracing) is kept; the counter is added to it
        return _Call(retried, messages, merge_configs(ensure_config(), own), counter)

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

    def _ask(self, call: _Call) -> Judgement[tuple[Any, ControllerUsage]]:
        """Yield the call; its checked answer and usage, or ``None`` and a fallback usage when it failed."""
        try:
            out = yield call
        except Exception as exc:  # noqa: BLE001 - every failure falls back, with its reason in the note
            usage = call.counter.usage()
            usage.fallback = True
            usage.note = f"model failed ({usage.llm_calls} calls; last: {_failure(exc)}); heuristic used"
            return None, usage
        return out, call.counter.usage()

    def _deadline(self) -> _Deadline:
        return _Deadline(
            f"no answer within {self.judgement_timeout_seconds} s "
            "(MemoryOSConfig.judgement_timeout_seconds / LLMController(judgement_timeout_seconds=...))"
        )

    def _invoke(self, call: _Call) -> Any:
        """``invoke`` within the deadline: in a worker thread that is abandoned (its result ignored) at the deadline."""
        if self.judgement_timeout_seconds is None:
            return call.runnable.invoke(call.messages, config=call.config)
        future: Future[Any] = Future()
        context = contextvars.copy_context()

        def work() -> None:
            try:
                future.set_result(context.run(call.runnable.invoke, call.messages, call.config))
            except BaseException as exc:  # noqa: BLE001 - handed over to the waiting judgement
                future.set_exception(exc)

        threading.Thread(target=work, name="memoryos-judgement", daemon=True).start()
        try:
            return future.result(timeout=self.judgement_timeout_seconds)
        except TimeoutError:
            if not future.done():
                raise self._deadline() from None
            raise

    async def _ainvoke(self, call: _Call) -> Any:
        """``ainvoke`` within the deadline (cancelled at the deadline)."""
        deadline = asyncio.timeout(self.judgement_timeout_seconds)
        try:
            async with deadline:
                return await call.runnable.ainvoke(call.messages, config=call.config)
        except TimeoutError:
            if deadline.expired():
                raise self._deadline() from None
            raise

    def _run(self, judgement: Judgement[T]) -> T:
        """Drive a judgement with ``invoke``."""
        try:
            call = next(judgement)
            while True:
                try:
                    result = self._invoke(call)
                except Exception as exc:  # noqa: BLE001 - handed to the judgement, which falls back
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
                    result = await self._ainvoke(call)
                except Exception as exc:  # noqa: BLE001 - handed to the judgement, which falls back
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
            date=_said_on(page.timestamp),
            names=_known_names(page),
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
            records=_page_records([_record_from(r, "user") for r in out.records], page),
            usage=usage,
            requests=_requests_from(out.requests),
        )

    def _promote(self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona) -> Judgement[PromotionResult]:
        listing = "\n".join(f"[{_date(p.timestamp)}] {p.text}" for p in pages)
        prompt = self.prompts.promote_segment.format(
            summary=segment.summary or "(none)",
            pages=listing,
            profile=json.dumps(persona.user_profile, ensure_ascii=False),
            traits=json.dumps(persona.user_traits, ensure_ascii=False),
            profile_keys=", ".join(PROFILE_KEYS),
            trait_dimensions="; ".join(f"{group}: {', '.join(dims)}" for group, dims in TRAIT_DIMENSIONS.items()),
        )
        out, usage = yield from self._ask(self._call("promote_segment", PromotionOutput, prompt))
        if out is None:
            return self._fell_back("promote_segment", usage, self.fallback.promote_segment(segment, pages, persona))
        profile, traits, refused = _persona_update(persona, out)
        if refused:
            logger.info("memoryos: promote_segment: %d persona entries refused (%s)", len(refused), ", ".join(refused))
        return PromotionResult(
            segment_summary=out.segment_summary.strip() or segment.summary,
            segment_keywords=_keywords(out.segment_keywords),
            user_profile=profile,
            user_traits=traits,
            records=[_record_from(r, "user") for r in out.records],
            usage=usage,
        )

    def _parse_records(self, text: str, kind: str) -> Judgement[ParsedRecords]:
        prompt = self.prompts.parse_records.format(text=text, kind=kind, date=_date(_dt.datetime.now(_dt.UTC)))
        out, usage = yield from self._ask(self._call("parse_records", RecordsOutput, prompt))
        if out is None:
            return self._fell_back("parse_records", usage, self.fallback.parse_records(text, kind))
        records = [_record_from(r, kind) for r in out.records]
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

        def labels_of(out: RelationsOutput) -> dict[int, RelationLabel]:
            found = {item.candidate: _match(item.label, ("duplicate", "update", "separate")) for item in out.relations}
            return {i: cast(RelationLabel, label) for i, label in found.items() if label and 1 <= i <= len(candidates)}

        def every_candidate(out: RelationsOutput) -> None:
            missing = sorted(set(range(1, len(candidates) + 1)) - set(labels_of(out)))
            if missing:
                raise _Unusable(f"no duplicate/update/separate label for candidate(s) {missing}")

        out, usage = yield from self._ask(self._call("judge_relations", RelationsOutput, prompt, every_candidate))
        if out is None:
            return self._fell_back("judge_relations", usage, self.fallback.judge_relations(record, candidates))
        labels = labels_of(out)
        relations = [Relation(c.id, labels[i], float(sim), "model") for i, (c, sim) in enumerate(candidates, 1)]
        return RelationJudgement(relations, usage=usage)

    def _fuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> Judgement[FuseResult]:
        listing = "\n".join(f"- ({_date(u.updated_at)}) {_describe(u)}" for u in updated)
        prompt = self.prompts.fuse.format(updated=listing, record=_describe(record), date=_date(record.created_at))
        out, usage = yield from self._ask(self._call("fuse", FuseOutput, prompt))
        if out is None:
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
        """See :class:`~langchain_memoryos.kernel.controller.MemoryController` (one call)."""
        return self._run(self._analyze(page, previous, similarity))

    async def aanalyze_page(
        self, page: DialoguePage, previous: DialoguePage | None, similarity: float | None
    ) -> PageAnalysis:
        """Async twin of :meth:`analyze_page` (``ainvoke``)."""
        return await self._arun(self._analyze(page, previous, similarity))

    def promote_segment(self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona) -> PromotionResult:
        """See :class:`~langchain_memoryos.kernel.controller.MemoryController` (one call)."""
        return self._run(self._promote(segment, pages, persona))

    async def apromote_segment(
        self, segment: Segment, pages: Sequence[DialoguePage], persona: Persona
    ) -> PromotionResult:
        """Async twin of :meth:`promote_segment` (``ainvoke``)."""
        return await self._arun(self._promote(segment, pages, persona))

    def parse_records(self, text: str, kind: str) -> ParsedRecords:
        """See :class:`~langchain_memoryos.kernel.controller.MemoryController` (one call)."""
        return self._run(self._parse_records(text, kind))

    async def aparse_records(self, text: str, kind: str) -> ParsedRecords:
        """Async twin of :meth:`parse_records` (``ainvoke``)."""
        return await self._arun(self._parse_records(text, kind))

    def judge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """See :class:`~langchain_memoryos.kernel.controller.MemoryController` (one call, none without candidates)."""
        return self._run(self._judge(record, candidates))

    async def ajudge_relations(
        self, record: MemoryRecord, candidates: Sequence[tuple[MemoryRecord, float]]
    ) -> RelationJudgement:
        """Async twin of :meth:`judge_relations` (``ainvoke``)."""
        return await self._arun(self._judge(record, candidates))

    def plan_query(self, query: str) -> QueryPlan:
        """How the read path matches a query against facts: the fallback's rules (retrieval makes no model call).

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> LLMController(GenericFakeChatModel(messages=iter([]))).plan_query("Do I have a dog?").fact_query
            'Do the user has a dog.'
        """
        return self.fallback.plan_query(query)

    def fuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """See :class:`~langchain_memoryos.kernel.controller.MemoryController` (one call)."""
        return self._run(self._fuse(record, updated))

    async def afuse(self, record: MemoryRecord, updated: Sequence[MemoryRecord]) -> FuseResult:
        """Async twin of :meth:`fuse` (``ainvoke``)."""
        return await self._arun(self._fuse(record, updated))
