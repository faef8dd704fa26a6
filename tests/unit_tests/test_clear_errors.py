"""Python errors as clear as the CLI's: one line that names the fix, before anything is written.

Offline, through the public API, on real stores (InMemoryStore and SQLite files).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langchain_memoryos import MemoryOS, MiniLMEmbeddings, resolve_embeddings
from langchain_memoryos.cli import app

MakeMemory = Callable[..., MemoryOS]


def one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message, message
    return message


# -- the SQLite path -----------------------------------------------------------------------


def test_from_sqlite_in_a_missing_directory_names_it(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "m.db"
    with pytest.raises(FileNotFoundError) as info:
        MemoryOS.from_sqlite(path)
    message = one_line(info)
    assert f"the directory {path.parent} does not exist; create it or pass another path" in message
    assert not (tmp_path / "no").exists()  # nothing created, no lock file either
    path.parent.mkdir(parents=True)
    with MemoryOS.from_sqlite(path) as memory:  # the fix the message names works
        memory.add_turn("I moved to Denver.", "Nice!", user_id="ana")
        assert memory.stats(user_id="ana").stm_pages == 1


def test_from_sqlite_on_a_directory_or_a_file_that_is_no_database(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as info:
        MemoryOS.from_sqlite(tmp_path)
    assert f"pass a file path such as {tmp_path / 'memory.db'}" in one_line(info)
    parent_file = tmp_path / "notes.txt"
    parent_file.write_text("a file")
    with pytest.raises(NotADirectoryError) as info:  # type: ignore[assignment]
        MemoryOS.from_sqlite(parent_file / "m.db")
    assert f"{parent_file} is a file, not a directory" in one_line(info)
    with pytest.raises(sqlite3.DatabaseError) as db_info:
        MemoryOS.from_sqlite(parent_file)
    message = one_line(db_info)
    assert str(parent_file) in message and "not an SQLite database; pass another path" in message
    assert parent_file.read_text() == "a file"
    assert not Path(f"{parent_file}.locks").exists()


# -- embeddings ------------------------------------------------------------------------------------


def test_embeddings_by_the_offline_model_name() -> None:
    memory = MemoryOS(embeddings="all-MiniLM-L6-v2")
    assert isinstance(memory.embeddings, MiniLMEmbeddings)
    assert memory.embeddings is resolve_embeddings() is resolve_embeddings("sentence-transformers/all-MiniLM-L6-v2")
    memory.add_turn("I moved to Denver.", "Nice!", user_id="ana")
    assert "Denver" in memory.retrieve("Where do I live?", user_id="ana").to_prompt()


def test_embeddings_of_another_kind_name_what_to_pass() -> None:
    with pytest.raises(ValueError) as info:
        MemoryOS(embeddings="text-embedding-3-small")
    message = one_line(info)
    assert "not a model the offline encoder knows (all-MiniLM-L6-v2" in message
    assert "pass a LangChain Embeddings object" in message
    with pytest.raises(TypeError) as type_info:
        MemoryOS(embeddings=384)  # type: ignore[arg-type]
    message = one_line(type_info)
    assert "embeddings must be a LangChain Embeddings object" in message and "got int" in message


# -- the query ---------------------------------------------------------------------------------------


def test_retrieve_refuses_none_sync_async_and_graph(make_memory: MakeMemory) -> None:
    memory = make_memory()
    memory.add_turn("I moved to Denver.", "Nice!", user_id="ana")
    before = memory.write_log(user_id="ana")
    with pytest.raises(TypeError) as info:
        memory.retrieve(None, user_id="ana")  # type: ignore[arg-type]
    assert "query must be a string (the user's message), got None" in one_line(info)
    with pytest.raises(TypeError, match="got None"):
        asyncio.run(memory.aretrieve(None, user_id="ana"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got None"):
        memory.read_graph.invoke({"query": None, "user_id": "ana"})
    assert memory.write_log(user_id="ana") == before
    # '' still asks for the context without a search (the thread's recent turns)
    assert "Denver" in memory.retrieve("", user_id="ana").to_prompt()


# -- a model name -------------------------------------------------------------------------------------


def test_a_model_name_without_credentials_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langchain.chat_models")
    pytest.importorskip("langchain_openai")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError) as info:
        MemoryOS(model="gpt-5-nonexistent")
    message = one_line(info)
    assert message.startswith("cannot create the chat model 'gpt-5-nonexistent': no API key for its provider")
    assert "set OPENAI_API_KEY" in message and "OPENAI_BASE_URL" in message


def test_a_model_name_without_a_provider_names_the_form() -> None:
    pytest.importorskip("langchain.chat_models")
    with pytest.raises(ValueError) as info:
        MemoryOS(model="my-local-model")
    assert "name it as 'provider:model' (e.g. 'openai:gpt-4o-mini'" in one_line(info)


# -- memoryos recall ---------------------------------------------------------------------------------

ENV: dict[str, str | None] = {"COLUMNS": "200", "NO_COLOR": "1", "MEMORYOS_MODEL": None, "OPENAI_BASE_URL": None}


def test_recall_with_an_empty_question_names_the_fix(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with MemoryOS.from_sqlite(db) as memory:
        memory.add_turn("I moved to Denver.", "Nice!", user_id="ana")
    for question in ("", "   "):
        result = CliRunner().invoke(app, ["recall", question, "--user", "ana", "--db", str(db)], env=ENV)
        assert result.exit_code == 2, result.output
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "memory is empty" not in result.output
        assert "the question is empty; pass what to recall" in errors[0]
        assert "memoryos inspect --user ana" in errors[0]
