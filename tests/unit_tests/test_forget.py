"""Forget means forgotten: a fact, a page or a query goes from every tier, the log, exports and the files.

Every test runs on InMemoryStore and SQLite here, and on PostgreSQL through
tests/integration_tests/test_postgres_backend.py. A canary word stands for what was asked to be forgotten:
after the forget it is in no context, search hit, fact, profile, export or write-log event, and turns later
it has not come back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from langchain_memoryos import FactNotFoundError, MemoryOS, MemoryOSConfig, PageNotFoundError
from tests.conftest import at

MakeMemory = Callable[..., MemoryOS]
CANARY = "zorblax"
SAID = f"I'm allergic to {CANARY}. I also like hiking in the hills."
FILLER = [f"Today I read chapter {i} of a long novel about ships." for i in range(10)]


def everything(memory: MemoryOS, user: str = "u", thread: str = "t") -> str:
    """Every text the memory gives back about the user, lower-cased."""
    parts = [
        memory.retrieve(f"What am I allergic to? {CANARY}", user_id=user, thread_id=thread, touch=False).to_prompt(),
        memory.retrieve(f"allergy {CANARY}", user_id=user, thread_id="elsewhere", touch=False).to_prompt(),
        json.dumps([h.text for h in memory.search(f"allergic {CANARY}", user_id=user, limit=50)]),
        json.dumps([f.summary for f in memory.list_facts(user_id=user)]),
        json.dumps(memory.get_persona(user_id=user).to_dict()),
        json.dumps(memory.export_user(user_id=user), default=str),
        json.dumps([e.to_dict() for e in memory.write_log(user_id=user)], default=str),
    ]
    return "\n".join(parts).lower()


def tell(memory: MemoryOS, *, fillers: int = 10, user: str = "u", thread: str = "t") -> None:
    memory.add_turn(SAID, f"Noted: no {CANARY} for you.", user_id=user, thread_id=thread, timestamp=at(0))
    for i, text in enumerate(FILLER[:fillers]):
        memory.add_turn(text, "Sounds good.", user_id=user, thread_id=thread, timestamp=at(0, i + 1))


def allergy_fact(memory: MemoryOS, user: str = "u") -> str:
    facts = [f for f in memory.list_facts(user_id=user) if CANARY in f.summary.lower()]
    assert facts, f"no fact about the canary: {[f.summary for f in memory.list_facts(user_id=user)]}"
    return facts[0].id


def test_forgetting_a_fact_takes_its_sentences_from_mtm_and_keeps_the_rest(make_memory: MakeMemory) -> None:
    memory = make_memory()
    tell(memory)  # the page is in MTM now, its fact stored
    assert CANARY in everything(memory)
    report = memory.forget(user_id="u", fact_id=allergy_fact(memory))
    assert report.facts and report.redacted and not report.dry_run
    assert any(CANARY in t.lower() for t in report.texts)
    assert CANARY not in everything(memory)
    pages = memory.search("hiking in the hills", user_id="u", limit=5)
    assert any("hiking" in h.text for h in pages)  # the page's other sentence stays, still found
    assert [e.action for e in memory.write_log(user_id="u")].count("deleted") >= 1
    assert memory.check(user_id="u") == []
    for text in ["More about ships.", "And more."] + FILLER:
        memory.add_turn(text, "Ok.", user_id="u", thread_id="t", timestamp=at(1))
    assert CANARY not in everything(memory)  # it has not come back


def test_a_fact_forgotten_while_its_page_is_in_stm_never_comes_back(make_memory: MakeMemory) -> None:
    memory = make_memory()
    tell(memory, fillers=0)
    memory.add_fact(f"I'm allergic to {CANARY}.", user_id="u")
    memory.forget(user_id="u", query=CANARY)
    assert CANARY not in everything(memory)
    assert [p.user_input for p in memory.get_stm(user_id="u", thread_id="t")] == ["I also like hiking in the hills."]
    for i, text in enumerate(FILLER):  # the page leaves STM: no fact of what was cut is written then
        memory.add_turn(text, "Sounds good.", user_id="u", thread_id="t", timestamp=at(0, i + 1))
    assert CANARY not in everything(memory)
    assert memory.check(user_id="u") == []


def test_a_dry_run_changes_nothing_and_a_query_matches_only_all_its_words(make_memory: MakeMemory) -> None:
    memory = make_memory()
    tell(memory)
    before = memory.export_user(user_id="u")
    preview = memory.forget(user_id="u", query=f"allergic {CANARY}", dry_run=True)
    assert preview.dry_run and preview.removed and not preview.events
    assert memory.export_user(user_id="u") == before
    nothing = memory.forget(user_id="u", query=f"{CANARY} submarine")  # not every word is there: nothing goes
    assert not nothing.removed and memory.export_user(user_id="u") == before
    done = memory.forget(user_id="u", query=f"allergic {CANARY}")
    assert done.facts == preview.facts and done.redacted == preview.redacted
    assert CANARY not in everything(memory)
    with pytest.raises(ValueError, match="exactly one"):
        memory.forget(user_id="u", fact_id="f:1", query="x")
    with pytest.raises(ValueError, match="content words"):
        memory.forget(user_id="u", query="the my")
    with pytest.raises(FactNotFoundError):
        memory.forget(user_id="u", fact_id="f:999")
    with pytest.raises(PageNotFoundError):
        memory.forget(user_id="u", page_id="p:999")


def test_forgetting_a_page_by_the_id_search_shows(make_memory: MakeMemory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=2))
    tell(memory, fillers=4)
    hit = next(h for h in memory.search(CANARY, user_id="u", kinds=("page",)))
    seq = hit.page.metadata["_seq"] if hit.page else None
    report = memory.forget(user_id="u", page_id=f"p:{seq}")
    assert report.pages == [hit.id]
    assert CANARY not in everything(memory) and "hiking" not in everything(memory)
    assert memory.check(user_id="u") == []
    assert not [s for s in memory.list_segments(user_id="u") if hit.id in s.page_ids]


def test_edited_and_fused_text_leaves_the_log_with_the_fact(make_memory: MakeMemory) -> None:
    memory = make_memory()
    fid = memory.add_fact("I live in Portland.", user_id="u")[0].record.id
    memory.update_fact(fid, "The user lives in Zorblaxville.", user_id="u")
    memory.add_fact("I moved to Denver.", user_id="u")  # an update of the location: fused
    current = [f for f in memory.list_facts(user_id="u") if "Denver" in f.summary]
    assert current
    memory.forget(user_id="u", fact_id=current[0].id)
    log = json.dumps([e.to_dict() for e in memory.write_log(user_id="u")], default=str).lower()
    exported = json.dumps(memory.export_user(user_id="u"), default=str).lower()
    for word in ("portland", "zorblaxville", "denver"):
        assert word not in log and word not in exported
    assert memory.write_log(user_id="u")  # the events stay, scrubbed


def test_a_forgotten_turn_is_not_stored_again_by_add_turn_or_a_resend(make_memory: MakeMemory) -> None:
    memory = make_memory()
    history = [
        {"role": "user", "content": f"My secret word is {CANARY}."},
        {"role": "assistant", "content": "I'll keep it."},
        {"role": "user", "content": "I like tea."},
        {"role": "assistant", "content": "Tea is nice."},
    ]
    memory.add_messages(history, user_id="u", thread_id="t")
    memory.add_turn(f"Same turn by id: {CANARY}.", "Ok.", user_id="u", thread_id="t2", turn_id="x1")
    memory.forget(user_id="u", query=CANARY)
    assert CANARY not in everything(memory)
    again = memory.add_messages(
        [*history, {"role": "user", "content": "Bye."}, {"role": "assistant", "content": "Bye!"}],
        user_id="u",
        thread_id="t",
    )
    assert [r.added for r in again] == [False, False, True]
    assert not memory.add_turn(f"Same turn by id: {CANARY}.", "Ok.", user_id="u", thread_id="t2", turn_id="x1").added
    assert CANARY not in everything(memory)


def test_a_resend_that_no_longer_lines_up_does_not_bring_back_what_was_forgotten(make_memory: MakeMemory) -> None:
    memory = make_memory()
    history = [
        {"role": "user", "content": f"My secret word is {CANARY}."},
        {"role": "assistant", "content": "I'll keep it."},
        {"role": "user", "content": f"I'm allergic to {CANARY}. I like tea."},
        {"role": "assistant", "content": "Tea is nice."},
        {"role": "user", "content": "I live in Oslo."},
        {"role": "assistant", "content": "Nice city."},
    ]
    memory.add_messages(history, user_id="u", thread_id="t")
    memory.forget(user_id="u", query=CANARY)  # one page deleted, one cut ("I like tea." stays)
    assert CANARY not in everything(memory) and "i like tea." in everything(memory)  # the cut page stays
    edited = [*history[:-1], {"role": "assistant", "content": "Oslo is a nice city."}]  # a reply the caller changed
    reports = memory.add_messages(edited, user_id="u", thread_id="t")
    assert [r.added for r in reports][:2] == [False, False]  # the forgotten turns are not written again
    assert CANARY not in everything(memory)
    assert asyncio.run(memory.aadd_messages(edited, user_id="u", thread_id="t"))
    assert CANARY not in everything(memory)


def test_forgetting_takes_the_profile_traits_and_segment_words_a_promotion_made(make_memory: MakeMemory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=1, promotion_heat=2))
    for i in range(6):
        memory.add_turn(
            f"I love {CANARY} climbing, it is my hobby number {i}.", "Nice.", user_id="u", timestamp=at(0, i)
        )
    assert CANARY in json.dumps(memory.get_persona(user_id="u").to_dict())  # a promotion made it a trait
    assert any(CANARY in " ".join(s.keywords) + s.summary for s in memory.list_segments(user_id="u"))
    memory.forget(user_id="u", query=CANARY)
    assert CANARY not in json.dumps(memory.get_persona(user_id="u").to_dict())
    assert not any(CANARY in " ".join(s.keywords) + s.summary for s in memory.list_segments(user_id="u"))
    assert CANARY not in everything(memory) and memory.check(user_id="u") == []


def test_async_forget(make_memory: MakeMemory) -> None:
    memory = make_memory()
    tell(memory, fillers=3)
    report = asyncio.run(memory.aforget(user_id="u", query=CANARY))
    assert report.removed and CANARY not in everything(memory)


def test_the_canary_is_in_no_byte_of_the_sqlite_file_and_its_wal(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    memory = MemoryOS.from_sqlite(path)
    try:
        tell(memory)
        memory.add_fact(f"My locker code is {CANARY}.", user_id="u")
        raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("m.db"))
        assert CANARY.encode() in raw
        memory.forget(user_id="u", query=CANARY)
        raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("m.db") and p.is_file())
        assert CANARY.encode() not in raw
        assert CANARY[:6].encode() not in raw  # nor its stem (the BM25 bags of the index snapshot)
    finally:
        memory.close()
    reopened = MemoryOS.from_sqlite(path)
    try:
        assert CANARY not in everything(reopened)
        assert reopened.check(user_id="u") == []
    finally:
        reopened.close()


@pytest.mark.parametrize("build", ["prebuilt", "middleware"])
@pytest.mark.parametrize("saver_kind", ["memory", "sqlite"])
def test_an_agent_asked_to_forget_forgets_end_to_end(tmp_path: Path, build: str, saver_kind: str) -> None:
    """Tell the agent, let 10 turns pass, ask it to forget, ask from another thread, resend the whole talk."""
    from dataclasses import dataclass

    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    from langchain_memoryos.graph import MemoryOSMiddleware, create_memoryos_agent
    from tests.scripted_model import replying

    @dataclass
    class Ctx:
        user_id: str

    path = tmp_path / "memory.db"
    memory = MemoryOS.from_sqlite(path)
    model = replying(lambda messages: "Noted." if "forget" not in str(messages[-1].content).lower() else "Done.")
    with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.db")) as sqlite_saver:
        saver = InMemorySaver() if saver_kind == "memory" else sqlite_saver
        if build == "prebuilt":
            agent = create_memoryos_agent(model, memory=memory, checkpointer=saver)
        else:
            agent = create_agent(model, middleware=[MemoryOSMiddleware(memory)], context_schema=Ctx, checkpointer=saver)

        def say(text: str, thread: str = "t") -> None:
            config = {"configurable": {"thread_id": thread, "user_id": "ana"}}
            if build == "prebuilt":
                agent.invoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[call-overload]
            else:
                agent.invoke({"messages": [HumanMessage(text)]}, config, context=Ctx("ana"))  # type: ignore[call-overload]

        said = [f"I'm allergic to {CANARY}, so no {CANARY} ever.", *FILLER]
        for text in said:
            say(text)
        assert any(CANARY in f.summary.lower() for f in memory.list_facts(user_id="ana"))  # the fact is stored
        assert memory.list_pages(user_id="ana")  # its page is in MTM
        say(f"Please forget that I'm allergic to {CANARY}.")
        say("What am I allergic to?", thread="other")
        assert CANARY not in _system_text(model)
        history = []
        for text in [*said, f"Please forget that I'm allergic to {CANARY}."]:
            reply = "Done." if "forget" in text.lower() else "Noted."
            history += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
        memory.add_messages(history, user_id="ana", thread_id="t")  # the whole conversation, resent without ids
        for text in FILLER:
            say(text, thread="later")
        say("What am I allergic to?", thread="later")
        assert CANARY not in _system_text(model)
    assert CANARY not in everything(memory, user="ana")
    memory.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("memory.db") and p.is_file())
    assert CANARY.encode() not in raw and CANARY[:6].encode() not in raw


def _system_text(model: object) -> str:
    prompts = model.prompts  # type: ignore[attr-defined]
    first = prompts[-1][0]
    return str(first.content).lower() if first.type == "system" else ""


ASKED = [
    "Please forget that I'm allergic to peanuts.",
    "Forget: I am allergic to peanuts.",
    "Forget what I said about my ex.",
    "Can you forget that I mentioned my salary?",
    "Please don't store my address.",
    "Delete what you know about my health.",
    "Oh, and don't remember my home address, please.",
    "Forget it, never mind.",
    "Don't forget to call me.",
    "I forgot my keys.",
    "Remove the onions from the recipe.",
]


def test_the_turn_and_its_analysis_read_a_forget_request_alike() -> None:
    """One reading of a request: what the page's analysis marks is what the write path carries out."""
    from langchain_memoryos.amu.forgetting import forget_request
    from langchain_memoryos.controllers import HeuristicController
    from langchain_memoryos.schema import DialoguePage

    controller = HeuristicController()
    for text in ASKED:
        marked = controller.analyze_page(DialoguePage(id="p", user_input=text, agent_response="Ok."), None, None)
        assert bool(marked.requests) == (forget_request(text) is not None), text
    assert [forget_request(t) for t in ASKED[1:5]] == ["I am allergic to peanuts", "my ex", "my salary", "my address"]
    assert forget_request("Forget it, never mind.") is None and forget_request("Remove the onions.") is None


def test_every_request_the_analysis_marks_is_carried_out(make_memory: MakeMemory) -> None:
    memory = make_memory()
    memory.add_turn(f"My salary is 90000 {CANARY} a year.", "Ok.", user_id="u", thread_id="t", timestamp=at(0))
    memory.add_turn("My address is 12 Elm Street.", "Ok.", user_id="u", thread_id="t", timestamp=at(0, 1))
    memory.add_turn("I mind the noise of the trains at night.", "Earplugs help.", user_id="u", thread_id="t")
    memory.add_turn("Forget it, never mind.", "Sure.", user_id="u", thread_id="t")  # no request: nothing goes
    assert any("mind" in f.summary for f in memory.list_facts(user_id="u"))
    memory.add_turn("Can you forget that I mentioned my salary?", "Done.", user_id="u", thread_id="t")
    kept = json.dumps(memory.export_user(user_id="u"), default=str).lower()
    assert CANARY not in kept and "90000" not in kept and "elm street" in kept
    memory.add_turn("Please don't store my address.", "Done.", user_id="u", thread_id="t")
    kept = json.dumps(memory.export_user(user_id="u"), default=str).lower()
    assert "elm street" not in kept and "trains" in kept


def _stored_text(memory: MemoryOS) -> str:
    """Every row the memory's store holds, in every namespace (index snapshots and journals too), lower-cased."""
    out: list[str] = []
    for namespace in memory.store.list_namespaces(prefix=("memoryos",), limit=100_000):
        offset = 0
        while True:
            items = memory.store.search(namespace, limit=500, offset=offset)
            out += [f"{item.namespace} {item.key} {json.dumps(item.value, default=str)}" for item in items]
            if len(items) < 500:
                break
            offset += 500
    return "\n".join(out).lower()


def _memory_files(memory: MemoryOS) -> bytes:
    """The bytes of the memory's SQLite file and its WAL (b"" for another store)."""
    from langgraph.store.sqlite import SqliteStore

    if not isinstance(memory.store, SqliteStore):
        return b""
    path = Path(memory.store.conn.execute("PRAGMA database_list").fetchone()[2])
    return b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name) and p.is_file())


@pytest.mark.parametrize("build", ["prebuilt", "middleware"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_canary_scenario_on_every_backend_sync_and_async(make_memory: MakeMemory, build: str, mode: str) -> None:
    """Issue 32's scenario: tell, 10 turns, forget, ask from another thread, resend all, 10 turns; no canary left.

    On InMemoryStore, SQLite and (through test_postgres_backend) PostgreSQL, with the prebuilt agent and
    ``create_agent`` + ``MemoryOSMiddleware``, ``invoke`` and ``ainvoke`` (the checkpointer: ``InMemorySaver``;
    ``SqliteSaver`` in the test above). Every model prompt after the forget is checked, not only the last.
    """
    from dataclasses import dataclass

    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_memoryos.graph import MemoryOSMiddleware, create_memoryos_agent
    from tests.scripted_model import replying

    @dataclass
    class Ctx:
        user_id: str

    memory = make_memory()
    model = replying(lambda messages: "Done." if "forget" in str(messages[-1].content).lower() else "Noted.")
    saver = InMemorySaver()
    if build == "prebuilt":
        agent = create_memoryos_agent(model, memory=memory, checkpointer=saver)
    else:
        agent = create_agent(model, middleware=[MemoryOSMiddleware(memory)], context_schema=Ctx, checkpointer=saver)

    async def asay(text: str, thread: str) -> None:
        config: RunnableConfig = {"configurable": {"thread_id": thread, "user_id": "ana"}}
        if build == "prebuilt":
            await agent.ainvoke({"messages": [HumanMessage(text)]}, config)
        else:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, config, context=Ctx("ana"))

    def say(text: str, thread: str = "t") -> None:
        if mode == "async":
            asyncio.run(asay(text, thread))
        elif build == "prebuilt":
            agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread, "user_id": "ana"}})
        else:
            config: RunnableConfig = {"configurable": {"thread_id": thread}}
            agent.invoke({"messages": [HumanMessage(text)]}, config, context=Ctx("ana"))

    said = [f"I'm allergic to {CANARY}, so no {CANARY} ever.", *FILLER]
    for text in said:
        say(text)
    assert any(CANARY in f.summary.lower() for f in memory.list_facts(user_id="ana"))  # its fact is stored
    mtm = json.dumps(memory.list_pages(user_id="ana"), default=lambda p: p.user_input)
    assert CANARY in mtm.lower()  # its page left STM for MTM
    asked = f"Please forget that I'm allergic to {CANARY}."
    say(asked)
    after = len(model.prompts)
    say("What am I allergic to?", thread="other")
    hits = memory.search(f"allergic {CANARY}", user_id="ana", limit=50)
    assert all(CANARY not in h.text.lower() for h in hits)
    history = []
    for text in [*said, asked]:  # the conversation as it was, the agent's replies included
        reply = "Done." if text == asked else "Noted."
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
    if mode == "async":
        asyncio.run(memory.aadd_messages(history, user_id="ana", thread_id="t"))  # the whole talk, resent
    else:
        memory.add_messages(history, user_id="ana", thread_id="t")
    for text in FILLER:
        say(text, thread="later")
    say("What am I allergic to?", thread="later")
    say("What am I allergic to?", thread="t")
    # no memory block the model got after the forget holds it (the thread's own messages are LangGraph's state)
    for prompt in model.prompts[after:]:
        system = str(prompt[0].content).lower() if prompt[0].type == "system" else ""
        assert CANARY not in system
    assert CANARY not in everything(memory, user="ana")
    assert CANARY not in _stored_text(memory)  # no row of any namespace: snapshot and journal included
    raw = _memory_files(memory)
    assert CANARY.encode() not in raw and CANARY[:6].encode() not in raw
    assert memory.check(user_id="ana") == []
