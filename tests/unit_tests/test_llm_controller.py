"""LLMController with scripted chat models: parsing, retries, fallback, repair, accounting, nostream."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
from typing import Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langgraph.graph import END, START, StateGraph

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.controllers.llm import LLMController
from langchain_memoryos.schema import DialoguePage, MemoryRecord
from tests.scripted_model import ScriptedToolModel, dumps, page_answer, replying

T0 = dt.datetime(2024, 5, 1, 9, tzinfo=dt.UTC)


def _turns(memory: MemoryOS, turns: list[tuple[str, str]], user: str = "u") -> None:
    for i, (a, b) in enumerate(turns):
        memory.add_turn(a, b, user_id=user, thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))


def _stored_texts(memory: MemoryOS, user: str = "u") -> str:
    parts = [p.text + " " + p.meta + " " + " ".join(p.keywords) for p in memory.list_pages(user_id=user)]
    parts += [s.summary + " " + " ".join(s.keywords) for s in memory.list_segments(user_id=user)]
    parts += [f.summary for f in memory.list_facts(user_id=user)]
    parts += [e.reason for e in memory.write_log(user_id=user)]
    return "\n".join(parts)


def test_one_call_per_page_added_parsed_into_records() -> None:
    model = ScriptedToolModel(script={"PageAnalysisOutput": [page_answer("The user lives in Lisbon."), page_answer()]})
    memory = MemoryOS(model=model, config=MemoryOSConfig(stm_capacity=1, promotion_heat=100.0))
    _turns(memory, [("I live in Lisbon.", "Nice!")])
    # the page is analysed as it is added: its record is read off it, and judged by the write gate, now
    assert [r.summary for r in memory.get_stm(user_id="u", thread_id="t")[0].candidates] == [
        "The user lives in Lisbon."
    ]
    assert [e.record.summary for e in memory.write_log(user_id="u")] == ["The user lives in Lisbon."]
    _turns(memory, [("ok", "ok"), ("cool", "cool")])
    pages = sorted(memory.list_pages(user_id="u"), key=lambda p: p.timestamp)
    assert len(pages) == 2 and model.count("PageAnalysisOutput") == 3  # one call per page added, none as it leaves
    first = pages[0]
    assert first.keywords == ["topic", "chat"] and first.meta == "Talking about The user lives in Lisbon."
    assert [r.summary for r in first.candidates] == ["The user lives in Lisbon."]
    assert first.candidates[0].slot == "location" and first.candidates[0].aspect == "personal_profile"
    segment = memory.list_segments(user_id="u")[0]
    assert segment.summary.startswith("Topic:")
    stats = memory.stats(user_id="u")
    assert stats.llm_usage["analyze_page"] == {"calls": 3, "tokens": 360, "fallbacks": 0}
    assert stats.llm_calls == 3
    # the prompt carries the page's date, for relative times
    assert "2024-05-01" in model.calls[0][1]
    # retrieval makes no model call
    memory.retrieve("Where do I live?", user_id="u", thread_id="t")
    assert len(model.calls) == 3


def test_a_failed_call_is_retried_then_succeeds() -> None:
    model = ScriptedToolModel(
        script={"PageAnalysisOutput": [TimeoutError("read timed out"), "{not json", page_answer("The user runs.")]}
    )
    memory = MemoryOS(model=model, config=MemoryOSConfig(stm_capacity=1, promotion_heat=100.0))
    _turns(memory, [("I run every morning.", "Great"), ("ok", "ok")])
    assert model.count("PageAnalysisOutput") == 4  # the first page: a timeout, malformed JSON, an answer; the second: 1
    usage = memory.stats(user_id="u").llm_usage["analyze_page"]
    assert usage["calls"] == 4 and usage["fallbacks"] == 0
    assert [r.summary for r in memory.list_pages(user_id="u")[0].candidates] == ["The user runs."]


def test_repeated_failure_falls_back_stores_the_turn_and_writes_no_error_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    boom = RuntimeError("HTTP 500 Internal Server Error: upstream exploded")
    model = ScriptedToolModel(script={"*": [boom]})
    controller = LLMController(model, max_retries=1)
    memory = MemoryOS(controller=controller, config=MemoryOSConfig(stm_capacity=1, promotion_heat=2.0))
    turns = [("I live in Porto and I work as a nurse.", "Nice!")] + [(f"I love surfing {i}.", "Cool") for i in range(8)]
    with caplog.at_level(logging.WARNING, logger="langchain_memoryos"):
        _turns(memory, turns)
    assert memory.stats(user_id="u").mtm_pages + memory.stats(user_id="u").stm_pages == len(turns)  # every turn stored
    usage = memory.stats(user_id="u").llm_usage
    assert usage["analyze_page"]["fallbacks"] == usage["analyze_page"]["calls"] // 2 > 0  # 2 attempts each
    assert "fell back to the heuristic controller" in caplog.text
    # the heuristic did the work: keywords and facts exist, and no error text is in memory
    assert all(p.keywords for p in memory.list_pages(user_id="u"))
    text = _stored_texts(memory)
    assert "exploded" not in text and "HTTP 500" not in text and "RuntimeError" not in text
    # promotions fell back too; a page's facts are judged offline as the page is added (no model call),
    # and their write events say the records came from a fallback
    assert usage["promote_segment"]["fallbacks"] > 0
    assert usage.get("judge_relations", {"calls": 0})["calls"] == 0
    assert any(e.fallback for e in memory.write_log(user_id="u"))


def test_invalid_vocabulary_and_limits_are_repaired() -> None:
    answer = page_answer("x")
    answer["records"][0].update(
        {
            "aspect": "Personal Profile",
            "intent": "telling",
            "sentiment": "very happy",
            "confidence": 1.7,
            "summary": "The user " + "really " * 200 + "likes tea.",
            "kind": "AGENT",
        }
    )
    answer["keywords"] = ["  Tea  Time ", "tea time", ""] + [f"k{i}" for i in range(20)]
    model = ScriptedToolModel(script={"PageAnalysisOutput": [answer]})
    analysis = LLMController(model).analyze_page(DialoguePage(id="p", user_input="tea", agent_response=""), None, None)
    record = analysis.records[0]
    assert (record.aspect, record.intent, record.sentiment, record.kind) == (
        "personal_profile",
        "inform",
        "neutral",
        "agent",
    )
    assert record.confidence == 1.0 and len(record.summary) <= 400
    assert analysis.keywords[0] == "tea time" and len(analysis.keywords) <= 8 and "" not in analysis.keywords
    assert analysis.linked is False  # no previous page: never linked


def test_json_mode_for_a_model_without_tool_calling() -> None:
    fenced = "```json\n" + dumps(page_answer("The user has a cat named Miso.", aspect="social_relationship")) + ",\n```"
    fake = replying(fenced.replace("]\n}", "],\n}"), tool_calling=False, tokens_per_call=None)
    analysis = LLMController(fake).analyze_page(
        DialoguePage(id="p", user_input="My cat Miso", agent_response=""), None, None
    )
    assert [r.summary for r in analysis.records] == ["The user has a cat named Miso."]
    assert analysis.usage.llm_calls == 1 and analysis.usage.llm_tokens > 0  # estimated: no usage metadata


def test_relations_for_all_candidates_in_one_call_and_fuse() -> None:
    model = ScriptedToolModel(
        script={
            "RelationsOutput": [
                {
                    "relations": [
                        {"candidate": 2, "label": "Update"},
                        {"candidate": 1, "label": " Separate"},
                        {"candidate": 9, "label": "x"},  # no such candidate: ignored
                    ]
                }
            ],
            "FuseOutput": [{"summary": "The user lives in Denver.", "entities": ["Denver"], "confidence": 0.9}],
        }
    )
    controller = LLMController(model)
    new = MemoryRecord(summary="The user moved to Denver.", aspect="personal_profile", entities=["Denver"])
    old = [
        MemoryRecord(id="f1", summary="The user likes hiking."),
        MemoryRecord(id="f2", summary="The user lives in Portland."),
    ]
    judged = controller.judge_relations(new, [(old[0], 0.4), (old[1], 0.7)])
    assert [(r.candidate_id, r.label) for r in judged.relations] == [("f1", "separate"), ("f2", "update")]
    assert judged.usage.llm_calls == 1
    assert controller.judge_relations(new, []).relations == [] and model.count("RelationsOutput") == 1  # no call
    fused = controller.fuse(new, [old[1]])
    assert fused.record.summary == "The user lives in Denver." and fused.record.slot == "location"
    assert "Portland" in model.calls[-1][1] and "Denver" in model.calls[-1][1]


def test_an_end_to_end_update_through_the_amu_path() -> None:
    model = ScriptedToolModel(
        script={
            "RecordsOutput": [
                {
                    "records": [
                        {
                            "aspect": "personal_profile",
                            "intent": "inform",
                            "personal": True,
                            "entities": ["Portland"],
                            "summary": "The user lives in Portland.",
                            "confidence": 1,
                        }
                    ]
                },
                {
                    "records": [
                        {
                            "aspect": "personal_profile",
                            "intent": "inform",
                            "personal": True,
                            "entities": ["Denver"],
                            "summary": "The user lives in Denver.",
                            "confidence": 1,
                        }
                    ]
                },
            ],
            "RelationsOutput": [{"relations": [{"candidate": 1, "label": "update"}]}],
            "FuseOutput": [{"summary": "The user lives in Denver (moved from Portland).", "entities": ["Denver"]}],
        }
    )
    memory = MemoryOS(model=model)
    memory.add_fact("I live in Portland.", user_id="u")
    events = memory.add_fact("I moved to Denver.", user_id="u")
    assert [e.action for e in events] == ["updated"]
    assert [f.summary for f in memory.list_facts(user_id="u")] == ["The user lives in Denver (moved from Portland)."]
    usage = memory.stats(user_id="u").llm_usage
    assert (
        usage["parse_records"]["calls"] == 2 and usage["judge_relations"]["calls"] == 1 and usage["fuse"]["calls"] == 1
    )


def test_async_path_uses_the_same_judgements() -> None:
    model = ScriptedToolModel(script={"PageAnalysisOutput": [page_answer("The user swims.")]})
    memory = MemoryOS(model=model, config=MemoryOSConfig(stm_capacity=1, promotion_heat=100.0))

    async def main() -> None:
        for i, text in enumerate(["I swim on Sundays.", "ok"]):
            await memory.aadd_turn(text, "Nice", user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))

    asyncio.run(main())
    assert [r.summary for r in memory.list_pages(user_id="u")[0].candidates] == ["The user swims."]


class _State(TypedDict):
    messages: list[Any]


def test_internal_calls_never_reach_the_message_stream() -> None:
    model = ScriptedToolModel(script={"PageAnalysisOutput": [page_answer("The user skis.")]})
    memory = MemoryOS(model=model, config=MemoryOSConfig(stm_capacity=1, promotion_heat=100.0))
    chat = replying("Hello there friend")

    def respond(state: _State) -> dict[str, Any]:
        reply = chat.invoke(state["messages"])
        memory.add_turn("I ski every winter.", str(reply.content), user_id="u", thread_id="t", timestamp=T0)
        memory.add_turn("ok", "ok", user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=1))
        return {"messages": [*state["messages"], reply]}

    graph = StateGraph(_State)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    graph.add_edge("respond", END)
    chunks = list(graph.compile().stream({"messages": [HumanMessage("hi")]}, stream_mode="messages"))
    assert model.count("PageAnalysisOutput") == 2  # the memory did call its model (once per page) …
    texts = [c.content for c, _ in chunks if isinstance(c, (AIMessage, AIMessageChunk))]
    assert "".join(texts).replace(" ", "") == "Hellotherefriend"  # type: ignore[arg-type]  # … but only the agent's tokens were streamed
    assert all(meta.get("lc_source") != "memoryos" for _, meta in chunks)  # type: ignore[union-attr]


def test_constructor_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        LLMController(ScriptedToolModel(script={}), max_retries=-1)
    with pytest.raises(ValueError, match="not both"):
        MemoryOS(model=ScriptedToolModel(script={}), controller=LLMController(ScriptedToolModel(script={})))
    with pytest.raises(TypeError, match="BaseChatModel"):
        LLMController(42)  # type: ignore[arg-type]


def test_model_names_resolve_or_name_the_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from langchain_openai import ChatOpenAI

    from langchain_memoryos.controllers.chat_models import resolve_chat_model

    local = resolve_chat_model("openai:qwen2.5", base_url="http://127.0.0.1:8000/v1")
    assert isinstance(local, ChatOpenAI) and local.model_name == "qwen2.5"
    assert str(local.openai_api_base) == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert isinstance(resolve_chat_model("llama3"), ChatOpenAI)
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setitem(sys.modules, "langchain.chat_models", None)
    with pytest.raises(ImportError, match="'agents' extra"):
        LLMController("openai:gpt-4o-mini")
    monkeypatch.setitem(sys.modules, "langchain_openai", None)
    with pytest.raises(ImportError, match="'openai' extra"):
        resolve_chat_model("m", base_url="http://127.0.0.1:1/v1")


class SlowScriptedModel(ScriptedToolModel):
    """Async calls take a while; records the most calls in flight at once."""

    active: int = 0
    peak: int = 0

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(0.05)
            return self._generate(messages, stop, None, **kwargs)
        finally:
            self.active -= 1


def _record(summary: str, entity: str) -> dict[str, Any]:
    return {
        "aspect": "personal_profile",
        "intent": "inform",
        "personal": True,
        "entities": [entity],
        "summary": summary,
        "confidence": 1,
    }


def _promotion_memory() -> tuple[MemoryOS, SlowScriptedModel]:
    """Two agent traits given first; a promotion finds both changed (two independent relation judgements)."""

    def trait(summary: str, entity: str) -> dict[str, Any]:
        return {**_record(summary, entity), "aspect": "preference", "intent": "request", "kind": "agent"}

    model = SlowScriptedModel(
        script={
            "RecordsOutput": [
                {"records": [trait("The assistant should answer in English.", "English")]},
                {"records": [trait("The assistant should call the user Sam.", "Sam")]},
            ],
            "PageAnalysisOutput": [page_answer()],
            "PromotionOutput": [
                {
                    "segment_summary": "Language and address.",
                    "records": [
                        trait("The assistant should answer in Portuguese.", "Portuguese"),
                        trait("The assistant should call the user Samuel.", "Samuel"),
                    ],
                }
            ],
            "RelationsOutput": [{"relations": [{"candidate": 1, "label": "update"}]}],
            "FuseOutput": [
                lambda m: {
                    "summary": "The assistant should answer in Portuguese."
                    if "Portuguese" in str(m[-1].content)
                    else "The assistant should call the user Samuel."
                }
            ],
        }
    )
    memory = MemoryOS(model=model, config=MemoryOSConfig(stm_capacity=1, promotion_heat=3.0, segment_threshold=0.0))
    return memory, model


TURNS = [("Answer in Portuguese.", "Ok"), ("Call me Samuel.", "Ok"), ("ok", "ok"), ("fine", "fine")]
TRAITS = ["The assistant should answer in Portuguese.", "The assistant should call the user Samuel."]


def test_independent_relation_judgements_run_concurrently_in_async() -> None:
    memory, model = _promotion_memory()

    async def main() -> None:
        await memory.aadd_fact("Answer in English.", user_id="u", kind="agent")
        await memory.aadd_fact("Call me Sam.", user_id="u", kind="agent")
        for i, (a, b) in enumerate(TURNS):
            await memory.aadd_turn(a, b, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))

    asyncio.run(main())
    assert sorted(f.summary for f in memory.list_facts(user_id="u", kind="agent")) == TRAITS
    assert model.count("RelationsOutput") == 2  # one per record, judged ahead together …
    assert model.peak == 2  # … and in flight at the same time


def test_sync_path_gives_the_same_result_one_call_at_a_time() -> None:
    memory, model = _promotion_memory()
    memory.add_fact("Answer in English.", user_id="u", kind="agent")
    memory.add_fact("Call me Sam.", user_id="u", kind="agent")
    for i, (a, b) in enumerate(TURNS):
        memory.add_turn(a, b, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))
    assert sorted(f.summary for f in memory.list_facts(user_id="u", kind="agent")) == TRAITS
    assert model.count("RelationsOutput") == 2 and model.peak == 0


# ------------------------------------------------------------- a model's wrong shapes, junk output, deadlines

VEGAN = _record("The user is vegan.", "vegan")


def _facts(memory: MemoryOS) -> list[str]:
    return sorted(f.summary for f in memory.list_facts(user_id="u"))


def test_an_answer_without_what_was_asked_falls_back_and_the_fact_is_kept() -> None:
    model = ScriptedToolModel(script={"*": [{"foo": 1}]})  # schema-shaped nowhere: every field is missing
    memory = MemoryOS(model=model)
    events = memory.add_fact("I'm vegan.", user_id="u")
    offline = MemoryOS()
    offline.add_fact("I'm vegan.", user_id="u")
    assert _facts(memory) == _facts(offline) and len(_facts(memory)) == 1  # stored, as the offline default does
    usage = memory.stats(user_id="u").llm_usage["parse_records"]
    assert usage["calls"] == 3 and usage["fallbacks"] == 1  # retried twice, then the heuristic parsed it
    assert [e.action for e in events] == ["stored"] and events[0].fallback
    assert memory.write_log(user_id="u")[-1].fallback


def test_a_junk_relation_judge_does_not_pile_up_duplicates() -> None:
    junk: list[Any] = [{"foo": 1}, {"relations": []}, {"relations": [{"candidate": 1, "label": "maybe"}]}]
    model = ScriptedToolModel(script={"RecordsOutput": [{"records": [VEGAN]}], "RelationsOutput": junk})
    memory, offline = MemoryOS(model=model), MemoryOS()
    for _ in range(5):
        memory.add_fact("I'm vegan.", user_id="u")
        offline.add_fact("I'm vegan.", user_id="u")
    assert len(_facts(memory)) == len(_facts(offline)) == 1  # not 5
    usage = memory.stats(user_id="u").llm_usage["judge_relations"]
    assert usage["fallbacks"] == 4 and usage["calls"] == 12  # 4 judgements with a candidate, 3 attempts each
    assert [e.action for e in memory.write_log(user_id="u")][-4:] == ["discarded"] * 4
    assert all(e.fallback for e in memory.write_log(user_id="u")[-4:])


def test_a_relation_judge_that_misses_a_candidate_is_retried() -> None:
    model = ScriptedToolModel(
        script={
            "RelationsOutput": [
                {"relations": [{"candidate": 2, "label": "update"}]},  # candidate 1 has no label
                {"relations": [{"candidate": 1, "label": "separate"}, {"candidate": 2, "label": "update"}]},
            ]
        }
    )
    new = MemoryRecord(summary="The user moved to Denver.", aspect="personal_profile", entities=["Denver"])
    olds = [(MemoryRecord(id="f1", summary="The user hikes."), 0.6), (MemoryRecord(id="f2", summary="x"), 0.7)]
    judged = LLMController(model).judge_relations(new, olds)
    assert [r.label for r in judged.relations] == ["separate", "update"]
    assert (judged.usage.llm_calls, judged.usage.fallback) == (2, False)


@pytest.mark.parametrize("tool_calling", [True, False])
def test_a_json_array_is_not_taken_as_its_first_object(tool_calling: bool) -> None:
    array = "[" + dumps({"records": [_record("The user lives on Mars.", "Mars")]}) + "]"  # one good object, in a list
    model: Any = (
        ScriptedToolModel(script={"RecordsOutput": [array]})  # a text answer instead of a tool call
        if tool_calling
        else replying(array, tool_calling=False, tokens_per_call=None)  # JSON mode
    )
    parsed = LLMController(model).parse_records("I'm vegan.", "user")
    assert "Mars" not in " ".join(r.summary for r in parsed.records)
    assert parsed.usage.fallback and parsed.usage.llm_calls == 3
    assert "JSON list" in parsed.usage.note
    assert [r.summary for r in parsed.records] == [
        r.summary for r in LLMController(model).fallback.parse_records("I'm vegan.", "user").records
    ]


def test_model_junk_never_enters_the_persona() -> None:
    garbage = "zzgarbagezzgarbage" * 4
    promotion = {
        "segment_summary": "Moves and hobbies.",
        "segment_keywords": ["moves"],
        "user_profile": [
            {"key": garbage, "value": "ZZGARBAGE" * 20},
            {"key": "Location", "value": "Lisbon"},
            {"key": "favourite colour of the neighbour's cat", "value": "blue"},
            {"key": "name", "value": "ZZGARBAGE" * 10},
            {"key": "occupation", "value": "x" * 100},
        ],
        "user_traits": [
            {"dimension": garbage, "values": ["chess"]},
            {"dimension": "Interests", "values": ["chess", "QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ", "  "]},
            {"dimension": "Need for Autonomy", "values": ["high"]},
        ],
        "records": [],
    }
    model = ScriptedToolModel(script={"PageAnalysisOutput": [page_answer()], "PromotionOutput": [promotion]})
    config = MemoryOSConfig(stm_capacity=1, promotion_heat=3.0, segment_threshold=0.0)
    memory = MemoryOS(model=model, config=config)
    _turns(memory, TURNS)
    assert model.count("PromotionOutput") >= 1
    persona = memory.get_persona(user_id="u")
    assert persona.user_profile == {"location": "Lisbon"}
    assert persona.user_traits == {"interests": ["chess"], "need_for_autonomy": ["high"]}
    assert "ZZGARBAGE" not in memory.retrieve("hobbies", user_id="u", thread_id="t").to_prompt()
    assert memory.stats(user_id="u").llm_usage["promote_segment"]["fallbacks"] == 0  # the answer was used, junk dropped


def _hanging_model(release: threading.Event) -> ScriptedToolModel:
    def hang(messages: list[Any]) -> dict[str, Any]:
        release.wait()  # a call that never returns until the test tears down
        return page_answer("The user has a hanging model.")

    return ScriptedToolModel(script={"PageAnalysisOutput": [hang]})


def _check_deadline_fallback(memory: MemoryOS, model: ScriptedToolModel) -> None:
    stats = memory.stats(user_id="u")
    assert stats.stm_pages + stats.mtm_pages == 2  # both turns stored
    page = memory.list_pages(user_id="u")[0]
    assert page.keywords and "hanging model" not in " ".join(r.summary for r in page.candidates)  # the heuristic's
    assert any("porto" in r.summary.lower() for r in page.candidates)
    usage = stats.llm_usage["analyze_page"]
    assert (usage["calls"], usage["fallbacks"]) == (2, 2)  # the hung call of each page, counted as a fallback
    assert model.count("PageAnalysisOutput") == 2  # no retry after the deadline


def test_a_hung_model_call_gives_way_to_the_heuristic_at_the_deadline(caplog: pytest.LogCaptureFixture) -> None:
    release, done, errors = threading.Event(), threading.Event(), []
    model = _hanging_model(release)
    config = MemoryOSConfig(stm_capacity=1, promotion_heat=100.0, judgement_timeout_seconds=0.5)
    memory = MemoryOS(model=model, config=config)
    assert memory.controller.judgement_timeout_seconds == 0.5  # type: ignore[attr-defined]

    def run() -> None:
        try:
            _turns(memory, [("I live in Porto.", "Nice!"), ("ok", "ok")])
            done.set()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    try:
        with caplog.at_level(logging.WARNING, logger="langchain_memoryos"):
            worker.start()
            worker.join(timeout=120)  # generous: only so that a regression cannot hang the suite
        assert not errors and done.is_set()  # add_turn returned while the model call still hangs
    finally:
        release.set()
    assert "judgement_timeout_seconds" in caplog.text
    _check_deadline_fallback(memory, model)


def test_a_hung_model_call_gives_way_to_the_heuristic_at_the_deadline_async() -> None:
    release, done, errors = threading.Event(), threading.Event(), []
    model = _hanging_model(release)
    config = MemoryOSConfig(stm_capacity=1, promotion_heat=100.0)  # the controller brings its own deadline
    memory = MemoryOS(controller=LLMController(model, judgement_timeout_seconds=0.5), config=config)

    async def main() -> None:
        for i, (a, b) in enumerate([("I live in Porto.", "Nice!"), ("ok", "ok")]):
            await memory.aadd_turn(a, b, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))
        done.set()
        release.set()  # lets the abandoned executor thread end, so asyncio.run can shut down

    def run() -> None:
        try:
            asyncio.run(main())
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    try:
        worker.start()
        done.wait(timeout=120)  # generous: only so that a regression cannot hang the suite
        assert not errors and done.is_set()
    finally:
        release.set()
        worker.join(timeout=120)
    _check_deadline_fallback(memory, model)


def test_the_deadline_setting_is_validated() -> None:
    assert MemoryOSConfig().judgement_timeout_seconds is not None
    assert 0 < MemoryOSConfig().judgement_timeout_seconds <= 30  # type: ignore[operator]
    assert MemoryOSConfig(judgement_timeout_seconds=None).judgement_timeout_seconds is None
    for bad in (0, -1.0, float("nan"), "5", True):
        with pytest.raises(ValueError, match="judgement_timeout_seconds"):
            MemoryOSConfig(judgement_timeout_seconds=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="judgement_timeout_seconds"):
            LLMController(ScriptedToolModel(script={}), judgement_timeout_seconds=bad)  # type: ignore[arg-type]
