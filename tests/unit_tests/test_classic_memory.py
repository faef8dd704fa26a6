"""MemoryOSMemory, a langchain-classic BaseMemory, over a real MemoryOS (offline embeddings; only the model is fake).

No deprecation warning from our class in a fresh interpreter: tests/integration_tests/test_classic_memory.py.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_classic.chains import ConversationChain, LLMChain
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import PromptTemplate
from pydantic import ValidationError

import langchain_memoryos.integrations.classic as classic_module
from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.integrations import MemoryOSMemory as LazyMemoryOSMemory
from langchain_memoryos.integrations.classic import MemoryOSMemory
from tests.scripted_model import ScriptedToolModel, replying

MakeMemory = Callable[..., MemoryOS]
CLASSIC_FILE = str(Path(classic_module.__file__).resolve())


def _prompts(model: ScriptedToolModel) -> list[str]:
    """The prompt text of every call of the model."""
    return [text for _, text in model.calls]


def _stm(memory: MemoryOS, user: str, session: str) -> list[tuple[str, str]]:
    return [(p.user_input, p.agent_response) for p in memory.get_stm(user_id=user, thread_id=session)]


def _ours(caught: list[warnings.WarningMessage]) -> list[str]:
    """Deprecation warnings raised by our module or about our class (or the BaseMemory it extends)."""
    out = []
    for w in caught:
        if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)):
            continue
        text = str(w.message)
        if str(Path(w.filename).resolve()) == CLASSIC_FILE or "MemoryOSMemory" in text or "BaseMemory" in text:
            out.append(f"{w.category.__name__}: {text}")
    return out


# -- 1. variables, empty memory ---------------------------------------------------------
def test_memory_variables_and_an_empty_load() -> None:
    memory = MemoryOS(config=MemoryOSConfig(agent_profile=""))
    chat = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1")
    assert chat.memory_variables == ["history", "memory"]
    assert MemoryOSMemory(memory=memory, user_id="ana", history_key="h", memory_key="m").memory_variables == ["h", "m"]
    assert chat.load_memory_variables({"input": "Hello there"}) == {"history": "", "memory": ""}
    assert chat.load_memory_variables({}) == {"history": "", "memory": ""}  # no input: an empty query
    as_messages = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1", return_messages=True)
    assert as_messages.load_memory_variables({"input": "Hello"}) == {"history": [], "memory": ""}
    assert LazyMemoryOSMemory is MemoryOSMemory  # the package's lazy export
    assert chat.session_id == "s1" and MemoryOSMemory(memory=memory, user_id="x").session_id == "default"


def test_a_configured_agent_profile_is_memory_but_not_history() -> None:
    assert MemoryOSMemory(memory=MemoryOS(), user_id="ana").load_memory_variables({"input": "Hello"}) == {
        "history": "",
        "memory": "",  # no agent invented: nothing configured, nothing learned, no words spent
    }
    chat = MemoryOSMemory(memory=MemoryOS(config=MemoryOSConfig(agent_profile="A chess coach.")), user_id="ana")
    out = chat.load_memory_variables({"input": "Hello"})
    assert out["history"] == ""
    assert out["memory"].startswith("# Memory\n") and "\n## Agent traits\nProfile: A chess coach." in out["memory"]
    assert "Relevant past conversation" not in out["memory"]


# -- 2. save then load: the session's STM is the history --------------------------------
def test_saved_turns_come_back_as_history(make_memory: MakeMemory) -> None:
    memory = make_memory()
    chat = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1")
    chat.save_context({"input": "I moved to Oslo."}, {"output": "Nice city!"})
    chat.save_context({"input": HumanMessage("I play the cello.")}, {"text": AIMessage("Lovely instrument.")})  # type: ignore[dict-item]
    chat.save_context({"question": "Do you like jazz?"}, {"response": "I do."})
    assert _stm(memory, "ana", "s1") == [
        ("I moved to Oslo.", "Nice city!"),
        ("I play the cello.", "Lovely instrument."),
        ("Do you like jazz?", "I do."),
    ]

    out = chat.load_memory_variables({"input": "Where do I live?"})
    assert out["history"] == (
        "Human: I moved to Oslo.\nAI: Nice city!\n"
        "Human: I play the cello.\nAI: Lovely instrument.\n"
        "Human: Do you like jazz?\nAI: I do."
    )
    assert "Recent conversation" not in out["memory"]  # the STM is the history, not repeated in memory

    named = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1", human_prefix="Ana", ai_prefix="Bot")
    assert named.load_memory_variables({"input": "hi"})["history"].splitlines()[:2] == [
        "Ana: I moved to Oslo.",
        "Bot: Nice city!",
    ]

    msgs = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1", return_messages=True)
    history = msgs.load_memory_variables({"input": "hi"})["history"]
    assert [type(m) for m in history] == [HumanMessage, AIMessage] * 3
    assert [m.content for m in history[:2]] == ["I moved to Oslo.", "Nice city!"]

    # another session of the same user has its own (empty) history
    other = MemoryOSMemory(memory=memory, user_id="ana", session_id="s2")
    assert other.load_memory_variables({"input": "x"})["history"] == ""


def test_empty_turns_are_not_stored() -> None:
    memory = MemoryOS()
    chat = MemoryOSMemory(memory=memory, user_id="ana")
    chat.save_context({"input": "   "}, {"output": ""})
    assert memory.get_stm(user_id="ana") == []
    chat.save_context({"input": "Only a question?"}, {"output": ""})
    assert _stm(memory, "ana", "default") == [("Only a question?", "")]


# -- 3. long-term recall across sessions, private to the user -----------------------------
def test_a_fact_from_another_session_is_in_the_memory_variable(make_memory: MakeMemory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=3))
    a = MemoryOSMemory(memory=memory, user_id="ana", session_id="A")
    a.save_context({"input": "My sister's name is Ingrid."}, {"output": "Lovely name!"})
    for i in range(8):
        a.save_context({"input": f"Filler chat number {i} about the weather and traffic."}, {"output": "Okay."})
    assert all("Ingrid" not in user for user, _ in _stm(memory, "ana", "A"))  # it left the STM

    b = MemoryOSMemory(memory=memory, user_id="ana", session_id="B")
    out = b.load_memory_variables({"input": "What is my sister's name?"})
    assert out["history"] == ""
    assert "Ingrid" in out["memory"]

    ben = MemoryOSMemory(memory=memory, user_id="ben", session_id="B")
    assert "Ingrid" not in ben.load_memory_variables({"input": "What is my sister's name?"})["memory"]


# -- 4. inside a classic chain ------------------------------------------------------------
@pytest.mark.parametrize("chain_cls", [ConversationChain, LLMChain])
def test_inside_a_classic_chain(chain_cls: type[LLMChain]) -> None:
    memory = MemoryOS()
    model = replying("Hi Ana!", "You are Ana.")
    prompt = PromptTemplate.from_template("Memory:\n{memory}\nHistory:\n{history}\nHuman: {input}\nAI:")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chat = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1")
        chain = chain_cls(llm=model, prompt=prompt, memory=chat)
        first = chain.invoke({"input": "Hi, I'm Ana."})
        second = chain.invoke({"input": "Who am I?"})
    assert _ours(caught) == []

    answer_key = chain.output_key
    assert first[answer_key] == "Hi Ana!" and second[answer_key] == "You are Ana."
    prompts = _prompts(model)
    assert len(prompts) == 2
    assert "Hi, I'm Ana." in prompts[0] and "Hi Ana!" not in prompts[0]
    assert "Human: Hi, I'm Ana.\nAI: Hi Ana!\nHuman: Who am I?" in prompts[1]
    assert second["history"] == "Human: Hi, I'm Ana.\nAI: Hi Ana!"
    assert _stm(memory, "ana", "s1") == [("Hi, I'm Ana.", "Hi Ana!"), ("Who am I?", "You are Ana.")]


def test_a_classic_chain_async() -> None:
    memory = MemoryOS()
    model = replying("Noted.", "Oslo.")
    prompt = PromptTemplate.from_template("{memory}\n{history}\nHuman: {input}\nAI:")
    chain = ConversationChain(
        llm=model, prompt=prompt, memory=MemoryOSMemory(memory=memory, user_id="ana", session_id="s1")
    )

    async def run() -> None:
        await chain.ainvoke({"input": "I live in Oslo."})
        await chain.ainvoke({"input": "Where do I live?"})

    asyncio.run(run())
    assert "Human: I live in Oslo.\nAI: Noted." in _prompts(model)[1]
    assert _stm(memory, "ana", "s1") == [("I live in Oslo.", "Noted."), ("Where do I live?", "Oslo.")]


# -- 5. async twins -------------------------------------------------------------------------
def test_async_twins() -> None:
    memory = MemoryOS(config=MemoryOSConfig(agent_profile=""))
    chat = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1", return_messages=True)

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        await chat.asave_context({"input": "I moved to Oslo."}, {"output": "Nice city!"})
        await chat.asave_context({"input": ""}, {"output": " "})  # empty: skipped
        loaded = await chat.aload_memory_variables({"input": "Where do I live?"})
        await chat.aclear()
        return loaded, await chat.aload_memory_variables({"input": "Where do I live?"})

    loaded, after = asyncio.run(run())
    assert [(type(m), m.content) for m in loaded["history"]] == [
        (HumanMessage, "I moved to Oslo."),
        (AIMessage, "Nice city!"),
    ]
    assert "## User facts\n- [f:2] The user lives in Oslo. (said " in loaded["memory"]  # written with its turn
    assert after["history"] == [] and memory.get_stm(user_id="ana", thread_id="s1") == []


# -- 6. clear ---------------------------------------------------------------------------------
def test_clear_empties_only_its_session(make_memory: MakeMemory) -> None:
    memory = make_memory()
    s1 = MemoryOSMemory(memory=memory, user_id="ana", session_id="s1")
    s2 = MemoryOSMemory(memory=memory, user_id="ana", session_id="s2")
    ben = MemoryOSMemory(memory=memory, user_id="ben", session_id="s1")
    s1.save_context({"input": "hi from s1"}, {"output": "hello"})
    s2.save_context({"input": "hi from s2"}, {"output": "hello"})
    ben.save_context({"input": "hi from ben"}, {"output": "hello"})
    s1.clear()
    assert memory.get_stm(user_id="ana", thread_id="s1") == []
    assert s1.load_memory_variables({"input": "hi"})["history"] == ""
    assert _stm(memory, "ana", "s2") == [("hi from s2", "hello")]
    assert _stm(memory, "ben", "s1") == [("hi from ben", "hello")]


# -- 7. bad input -------------------------------------------------------------------------------
def test_bad_construction_arguments() -> None:
    memory = MemoryOS()
    with pytest.raises(ValidationError, match="user_id must be a non-empty string"):
        MemoryOSMemory(memory=memory, user_id="")
    with pytest.raises(ValidationError, match="session_id must be a non-empty string"):
        MemoryOSMemory(memory=memory, user_id="ana", session_id="  ")
    with pytest.raises(ValidationError, match="memory must be a langchain_memoryos.MemoryOS, got dict"):
        MemoryOSMemory(memory={}, user_id="ana")  # type: ignore[arg-type]


def test_ambiguous_or_missing_keys() -> None:
    memory = MemoryOS()
    chat = MemoryOSMemory(memory=memory, user_id="ana")
    two_inputs = {"input": "hi", "topic": "music"}
    with pytest.raises(ValueError, match=r"\['input', 'topic'\].*input_key="):
        chat.load_memory_variables(two_inputs)
    with pytest.raises(ValueError, match="input_key="):
        chat.save_context(two_inputs, {"output": "hello"})
    with pytest.raises(ValueError, match="output_key="):
        chat.save_context({"input": "hi"}, {"answer": "hello", "score": "1"})
    with pytest.raises(ValueError, match="input_key="):
        chat.save_context({}, {"output": "hello"})
    with pytest.raises(TypeError, match="input 'input' must be a string or a message, got int"):
        chat.save_context({"input": 3}, {"output": "hello"})
    assert memory.get_stm(user_id="ana") == []

    keyed = MemoryOSMemory(memory=memory, user_id="ana", input_key="input", output_key="answer")
    with pytest.raises(ValueError, match="no key 'input'"):
        keyed.save_context({"question": "hi"}, {"answer": "hello"})
    with pytest.raises(ValueError, match="no key 'answer'"):
        keyed.save_context({"input": "hi"}, {"output": "hello"})
    # named keys settle it; memory variables and "stop" never count as the input
    keyed.save_context({**two_inputs, "history": "old", "memory": "ctx"}, {"answer": "hello", "score": "1"})
    chat.save_context({"input": "again", "history": "", "memory": "", "stop": ["\n"]}, {"x": "y", "text": "hey"})
    assert _stm(memory, "ana", "default") == [("hi", "hello"), ("again", "hey")]


# -- 8. the import guard ------------------------------------------------------------------------
def test_import_guard_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import langchain_memoryos.integrations as integrations

    # as if langchain-classic were not installed (its loaded submodules would be found in sys.modules otherwise)
    for name in [n for n in sys.modules if n == "langchain_classic" or n.startswith("langchain_classic.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "langchain_memoryos.integrations.classic")
    monkeypatch.setattr(integrations, "classic", classic_module)  # restored afterwards
    with pytest.raises(ImportError, match=re.escape("pip install 'langchain-memoryos[classic]'")):
        importlib.import_module("langchain_memoryos.integrations.classic")
    with pytest.raises(ImportError, match=re.escape("langchain-memoryos[classic]")):
        integrations.MemoryOSMemory  # noqa: B018 - the lazy export imports it too
