"""RunnableWithMemoryOS and MemoryOSChatMessageHistory: one-line migration from RunnableWithMessageHistory."""

from __future__ import annotations

import asyncio
import datetime as dt
import warnings
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import ConfigurableFieldSpec, RunnableLambda

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.integrations import MemoryOSChatMessageHistory, RunnableWithMemoryOS, pair_messages
from tests.scripted_model import replying

T0 = dt.datetime(2024, 9, 1, 9, tzinfo=dt.UTC)


def _config(user: str = "ana", session: str = "s1") -> dict[str, Any]:
    return {"configurable": {"user_id": user, "session_id": session}}


def _text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def _stm(memory: MemoryOS, user: str = "ana", session: str = "s1") -> list[tuple[str, str]]:
    return [(p.user_input, p.agent_response) for p in memory.get_stm(user_id=user, thread_id=session)]


QA_PROMPT = ChatPromptTemplate.from_messages(
    [("system", "You are helpful.\n{memory}"), MessagesPlaceholder("history"), ("human", "{question}")]
)
MESSAGES_PROMPT = ChatPromptTemplate.from_messages([("system", "Be brief. {memory}"), MessagesPlaceholder("messages")])


# -- key styles ------------------------------------------------------------------------------
def test_messages_in_message_out_a_bare_chat_model() -> None:
    memory = MemoryOS(config=MemoryOSConfig(agent_profile="A friendly assistant."))
    model = replying("Hello Ana!", "You said you live in Oslo.")
    chain = RunnableWithMemoryOS(model, memory)
    assert chain.invoke("Hi, I'm Ana and I live in Oslo.", _config()).content == "Hello Ana!"  # type: ignore[arg-type]
    out = chain.invoke([HumanMessage("Where do I live?")], _config())  # type: ignore[arg-type]
    assert out.content == "You said you live in Oslo."
    second = model.prompts[1]
    assert isinstance(second[0], SystemMessage) and str(second[0].content).startswith("# Memory")
    assert "Recent conversation" not in str(second[0].content)  # STM is the history, not repeated in the memory
    assert [type(m) for m in second[1:]] == [HumanMessage, AIMessage, HumanMessage]  # STM as history, then input
    assert second[1].content == "Hi, I'm Ana and I live in Oslo." and second[2].content == "Hello Ana!"
    assert _stm(memory) == [
        ("Hi, I'm Ana and I live in Oslo.", "Hello Ana!"),
        ("Where do I live?", "You said you live in Oslo."),
    ]
    # a single message works too, and a leading system message of the caller is kept first and merged
    chain.invoke([SystemMessage("Answer in English."), HumanMessage("Thanks!")], _config())  # type: ignore[arg-type]
    third = model.prompts[2]
    assert str(third[0].content).startswith("Answer in English.\n\n# Memory")
    assert sum(isinstance(m, SystemMessage) for m in third) == 1


def test_dict_input_with_input_and_history_keys() -> None:
    memory, model = MemoryOS(), replying("Noted.", "Your cat is Miso.")
    chain = RunnableWithMemoryOS(
        QA_PROMPT | model, memory, input_messages_key="question", history_messages_key="history"
    )
    chain.invoke({"question": "My cat is called Miso."}, _config())  # type: ignore[arg-type]
    chain.invoke({"question": "What is my cat called?"}, _config())  # type: ignore[arg-type]
    second = model.prompts[1]
    assert [m.type for m in second] == ["system", "human", "ai", "human"]
    assert second[1].content == "My cat is called Miso." and second[3].content == "What is my cat called?"
    assert _stm(memory)[-1] == ("What is my cat called?", "Your cat is Miso.")


def test_dict_input_without_history_key_prepends_history_to_the_input_messages() -> None:
    memory, model = MemoryOS(), replying("Sure.", "Done.")
    chain = RunnableWithMemoryOS(MESSAGES_PROMPT | model, memory, input_messages_key="messages")
    chain.invoke({"messages": "Remind me to water the plants."}, _config())  # type: ignore[arg-type]
    chain.invoke({"messages": [HumanMessage("And the cactus?")]}, _config())  # type: ignore[arg-type]
    assert [m.type for m in model.prompts[1]] == ["system", "human", "ai", "human"]
    assert model.prompts[1][1].content == "Remind me to water the plants."
    assert _stm(memory) == [("Remind me to water the plants.", "Sure."), ("And the cactus?", "Done.")]


def test_dict_output_with_output_key_and_memory_rendered_in_the_prompt() -> None:
    memory, model = MemoryOS(), replying("I'll remember.", "Peanuts.")
    inner = QA_PROMPT | model | RunnableLambda(lambda m: {"answer": m, "confidence": 0.9})
    chain = RunnableWithMemoryOS(
        inner, memory, input_messages_key="question", history_messages_key="history", output_messages_key="answer"
    )
    memory.add_fact("I'm allergic to peanuts.", user_id="ana")
    out = chain.invoke({"question": "Can I eat peanuts?"}, _config())  # type: ignore[arg-type]
    assert out["confidence"] == 0.9 and out["answer"].content == "I'll remember."
    assert "peanuts" in str(model.prompts[0][0].content).lower()  # {memory} rendered the MemoryContext
    assert _stm(memory) == [("Can I eat peanuts?", "I'll remember.")]
    no_key = RunnableWithMemoryOS(inner, memory, input_messages_key="question", history_messages_key="history")
    with pytest.raises(ValueError, match="output_messages_key"):
        no_key.invoke({"question": "x"}, _config())  # type: ignore[arg-type]


# -- streaming, async, batch ---------------------------------------------------------------------------
def test_stream_merges_chunks_before_saving() -> None:
    memory, model = MemoryOS(), replying("Oslo is lovely in May.")
    chain = RunnableWithMemoryOS(
        QA_PROMPT | model, memory, input_messages_key="question", history_messages_key="history"
    )
    chunks = list(chain.stream({"question": "When should I visit Oslo?"}, _config()))  # type: ignore[arg-type]
    assert len(chunks) >= 5 and all(isinstance(c, AIMessageChunk) for c in chunks)  # word by word
    assert "".join(str(c.content) for c in chunks) == "Oslo is lovely in May."
    assert _stm(memory) == [("When should I visit Oslo?", "Oslo is lovely in May.")]
    # a stream the caller abandons stores nothing (no half answer)
    partial = chain.stream({"question": "Another one?"}, _config())  # type: ignore[arg-type]
    next(partial)
    partial.close()  # type: ignore[attr-defined]
    assert len(_stm(memory)) == 1


def test_async_invoke_stream_and_batch() -> None:
    memory, model = MemoryOS(), replying("One.", "Two three.", "Four.", "Five.")
    chain = RunnableWithMemoryOS(
        QA_PROMPT | model, memory, input_messages_key="question", history_messages_key="history"
    )

    async def main() -> list[Any]:
        first = await chain.ainvoke({"question": "Count with me."}, _config())  # type: ignore[arg-type]
        chunks = [c async for c in chain.astream({"question": "Go on."}, _config())]  # type: ignore[arg-type]
        batch = await chain.abatch(
            [{"question": "Session two."}, {"question": "Session three."}],
            [_config(session="s2"), _config(session="s3")],  # type: ignore[list-item]
        )
        return [first, chunks, batch]

    first, chunks, batch = asyncio.run(main())
    assert first.content == "One." and "".join(str(c.content) for c in chunks) == "Two three."
    assert _stm(memory) == [("Count with me.", "One."), ("Go on.", "Two three.")]
    assert len(batch) == 2
    assert len(_stm(memory, session="s2")) == 1 and len(_stm(memory, session="s3")) == 1
    sync_batch = chain.batch([{"question": "Sync batch."}], [_config(session="s4")])  # type: ignore[list-item]
    assert len(sync_batch) == 1 and len(_stm(memory, session="s4")) == 1


# -- sessions --------------------------------------------------------------------------------------
FILLER = [
    "The weather was rainy today.",
    "I watched a documentary about volcanoes.",
    "I cooked lentil soup for dinner.",
    "My neighbour's cat visited the garden.",
    "I fixed the squeaky hallway door.",
    "I'm reading a novel about a lighthouse keeper.",
]


def test_two_sessions_share_mtm_and_lpm_not_stm() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=3))
    model = replying("Okay.")
    chain = RunnableWithMemoryOS(
        QA_PROMPT | model, memory, input_messages_key="question", history_messages_key="history"
    )
    chain.invoke({"question": "My sister's name is Ingrid and she lives in Bergen."}, _config(session="a"))  # type: ignore[arg-type]
    for text in FILLER:
        chain.invoke({"question": text}, _config(session="a"))  # type: ignore[arg-type]
    assert all("Ingrid" not in u for u, _ in _stm(memory, session="a"))  # it left STM for MTM
    chain.invoke({"question": "What is my sister's name?"}, _config(session="b"))  # type: ignore[arg-type]
    last = model.prompts[-1]
    assert [m.type for m in last] == ["system", "human"]  # session b has no history of its own yet
    assert "Ingrid" in str(last[0].content)  # recalled from session a through MTM/LPM
    other = RunnableWithMemoryOS(
        QA_PROMPT | model, memory, input_messages_key="question", history_messages_key="history"
    )
    other.invoke({"question": "What is my sister's name?"}, _config(user="bob", session="b"))  # type: ignore[arg-type]
    assert "Ingrid" not in _text(model.prompts[-1])  # another user sees nothing of Ana's


# -- configuration ---------------------------------------------------------------------------------------
def test_missing_ids_and_bad_input_are_clear_errors() -> None:
    chain = RunnableWithMemoryOS(replying("Got it, thanks."), MemoryOS())
    with pytest.raises(ValueError, match=r"configurable.*user_id"):
        chain.invoke("hi", {"configurable": {"session_id": "s"}})
    with pytest.raises(ValueError, match="session_id"):
        chain.invoke("hi", {"configurable": {"user_id": "u"}})
    with pytest.raises(ValueError, match="Expected a string, a message or a list of messages"):
        chain.invoke(42, _config())  # type: ignore[arg-type]
    keyed = RunnableWithMemoryOS(QA_PROMPT | replying("Got it, thanks."), MemoryOS(), input_messages_key="question")
    with pytest.raises(ValueError, match="input_messages_key"):
        keyed.invoke({"q": "hi"}, _config())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Runnable"):
        RunnableWithMemoryOS("not a chain", MemoryOS())  # type: ignore[arg-type]


def test_history_factory_config_renames_and_adds_fields() -> None:
    memory, model = MemoryOS(), replying("Hi.")
    specs = [
        ConfigurableFieldSpec(id="customer", annotation=str, default=""),
        ConfigurableFieldSpec(id="conversation", annotation=str, default=""),
        ConfigurableFieldSpec(id="channel", annotation=str, default="web"),
    ]
    chain = RunnableWithMemoryOS(model, memory, history_factory_config=specs)
    assert {"customer", "conversation", "channel"} <= {s.id for s in chain.config_specs}
    chain.invoke("Hello!", {"configurable": {"customer": "c-42", "conversation": "chat-7", "channel": "sms"}})
    (page,) = memory.get_stm(user_id="c-42", thread_id="chat-7")
    assert page.metadata["channel"] == "sms"
    with pytest.raises(ValueError, match="customer"):
        chain.invoke("Hello!", {"configurable": {"conversation": "chat-7"}})


# -- the chat message history -----------------------------------------------------------------------------
def test_chat_history_pairs_messages_into_turns() -> None:
    memory = MemoryOS()
    history = MemoryOSChatMessageHistory(memory, user_id="ana", session_id="s1")
    call = {"name": "weather", "args": {"city": "Oslo"}, "id": "c1", "type": "tool_call"}
    history.add_messages(
        [
            SystemMessage("You are helpful."),  # ignored
            HumanMessage("What's the weather in Oslo?"),
            AIMessage("", tool_calls=[call]),
            ToolMessage("12°C and rain", tool_call_id="c1", name="weather"),
            AIMessage("12°C and rain: take an umbrella."),
            HumanMessage("Thanks!"),  # waits for its answer
        ]
    )
    (page,) = memory.get_stm(user_id="ana", thread_id="s1")
    assert (page.user_input, page.agent_response) == ("What's the weather in Oslo?", "12°C and rain: take an umbrella.")
    assert page.metadata["tool_calls"][0]["name"] == "weather"
    assert page.metadata["tool_results"][0]["content"] == "12°C and rain"
    assert [m.type for m in history.messages] == ["human", "ai", "human"]  # the pending question is shown
    # another history object of the same session (as RunnableWithMessageHistory makes per call) completes it
    MemoryOSChatMessageHistory(memory, user_id="ana", session_id="s1").add_ai_message("You're welcome!")
    assert _stm(memory)[-1] == ("Thanks!", "You're welcome!")
    # consecutive human messages form one turn; saying the same thing twice is two turns
    history.add_messages([HumanMessage("Hi"), HumanMessage("again"), AIMessage("Hello!")])
    history.add_messages([HumanMessage("Hi"), HumanMessage("again"), AIMessage("Hello!")])
    assert _stm(memory)[-2:] == [("Hi\nagain", "Hello!"), ("Hi\nagain", "Hello!")]


def test_pair_messages_keeps_unanswered_tool_turns_and_stray_answers() -> None:
    call = {"name": "search", "args": {}, "id": "c1", "type": "tool_call"}
    turns, pending = pair_messages(
        [],
        [
            AIMessage("Welcome back!"),  # an answer with no question: a turn of its own
            HumanMessage("Find my notes."),
            AIMessage("", tool_calls=[call]),
            ToolMessage("no notes", tool_call_id="c1"),
            HumanMessage("Never mind."),  # the tool turn got no final answer: it is kept, not lost
        ],
    )
    assert [(t.user_input, t.agent_response) for t in turns] == [("", "Welcome back!"), ("Find my notes.", "")]
    assert turns[1].metadata["tool_results"][0]["content"] == "no notes"
    assert [m.content for m in pending] == ["Never mind."]


def test_chat_history_clear_is_per_session_and_async_twins() -> None:
    memory = MemoryOS()
    a = MemoryOSChatMessageHistory(memory, user_id="ana", session_id="a")
    b = MemoryOSChatMessageHistory(memory, user_id="ana", session_id="b")

    async def main() -> tuple[list[BaseMessage], list[BaseMessage]]:
        await a.aadd_messages([HumanMessage("I like tea."), AIMessage("Noted.")])
        await b.aadd_messages([HumanMessage("I like coffee."), AIMessage("Noted too.")])
        await a.aclear()
        return await a.aget_messages(), await b.aget_messages()

    got_a, got_b = asyncio.run(main())
    assert got_a == [] and [m.content for m in got_b] == ["I like coffee.", "Noted too."]
    b.clear()
    assert b.messages == []
    with pytest.raises(ValueError, match="user_id"):
        MemoryOSChatMessageHistory(memory, user_id="", session_id="s")


def test_chat_history_under_the_original_runnable_with_message_history() -> None:
    from langchain_core.runnables.history import RunnableWithMessageHistory

    memory, model = MemoryOS(), replying("Nice to meet you, Ana.", "You are Ana.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the original class is deprecated in LangChain 1.x; ours are not
        chain = RunnableWithMessageHistory(
            QA_PROMPT.partial(memory="") | model,
            lambda session_id: MemoryOSChatMessageHistory(memory, user_id="ana", session_id=session_id),
            input_messages_key="question",
            history_messages_key="history",
        )
    chain.invoke({"question": "I'm Ana."}, {"configurable": {"session_id": "s1"}})
    chain.invoke({"question": "Who am I?"}, {"configurable": {"session_id": "s1"}})
    assert [m.type for m in model.prompts[1]] == ["system", "human", "ai", "human"]
    assert model.prompts[1][1].content == "I'm Ana."
    assert _stm(memory) == [("I'm Ana.", "Nice to meet you, Ana."), ("Who am I?", "You are Ana.")]


def test_our_classes_raise_no_deprecation_warning() -> None:
    memory, model = MemoryOS(), replying("Fine.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chain = RunnableWithMemoryOS(
            QA_PROMPT | model, memory, input_messages_key="question", history_messages_key="history"
        )
        chain.invoke({"question": "Hello"}, _config())  # type: ignore[arg-type]
        list(chain.stream({"question": "Hello again"}, _config()))  # type: ignore[arg-type]
        history = MemoryOSChatMessageHistory(memory, user_id="ana", session_id="s9")
        history.add_messages([HumanMessage("x"), AIMessage("y")])
        assert len(history.messages) == 2
        history.clear()
    deprecations = [w for w in caught if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    deprecations += [w for w in caught if "deprecat" in str(w.message).lower()]
    assert deprecations == []
