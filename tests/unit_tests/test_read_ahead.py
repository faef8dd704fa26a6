"""add_turn reads its page ahead (while it is embedded) and uses the reading for the page's analysis right after.

The memory is the same with and without the readings (a new process, or a memory opened per turn, has none):
the same pages, segments, facts and write events (real SQLite, offline embeddings).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.controllers import HeuristicController
from langchain_memoryos.operations import bulk, reader
from langchain_memoryos.schema import DialoguePage
from tests.unit_tests.test_bulk_write import CONFIG, _memory_of, _turns

USER = "ana"


@pytest.fixture(autouse=True)
def _read_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages read ahead by the reader thread (the default; the reader process has its own test below)."""
    monkeypatch.setenv("MEMORYOS_READER_PROCESS", "0")


def _fields(turn: dict[str, Any]) -> dict[str, Any]:
    fields = bulk.turn_fields(turn)
    fields.setdefault("thread_id", "default")
    fields.setdefault("agent_response", "")
    return fields


def _counted(memory: MemoryOS, reads: list[str]) -> None:
    """Count the pages the memory's controller reads (its ``page_content`` calls), by page id."""
    controller = memory._runtime.services.controller
    assert isinstance(controller, HeuristicController)
    content = controller.page_content

    def page_content(page: DialoguePage) -> Any:
        reads.append(page.id)
        return content(page)

    controller.page_content = page_content  # type: ignore[method-assign]


def _page_texts(turn: dict[str, Any]) -> dict[str, str]:
    fields = _fields(turn)
    return {"user_input": fields["user_input"], "agent_response": fields["agent_response"]}


def _memory(tmp_path: Path, name: str, controller: HeuristicController | None = None) -> MemoryOS:
    kwargs: dict[str, Any] = {"config": MemoryOSConfig(**CONFIG)}  # type: ignore[arg-type]
    if controller is not None:
        kwargs["controller"] = controller
    return MemoryOS.from_sqlite(tmp_path / f"{name}.db", **kwargs)


def test_a_page_read_ahead_is_read_once_and_the_memory_is_the_same_as_without(tmp_path: Path) -> None:
    turns = _turns()
    ahead = _memory(tmp_path, "ahead")
    reads: list[str] = []
    _counted(ahead, reads)
    reports = [ahead.add_turn(user_id=USER, **_fields(t)) for t in turns]
    embedded = [r.page_id for r in reports]  # a turn added again is embedded (and read) before it is found
    assert len(embedded) > len({r.page_id for r in reports if r.added})
    moved = [p for r in reports for p in r.moved_to_mtm]
    assert len(moved) > 20  # most pages left STM (analysed when they were added)
    assert sorted(reads) == sorted(embedded)  # every page read once, as it was embedded; never again as it left
    state = ahead.repository.cached(USER)
    assert state is not None
    assert all(p.topic is not None and p.keywords for pages in state.stm.values() for p in pages)  # analysed

    # a cache miss every turn: each turn in a new memory on the same file (as a new process would)
    path = tmp_path / "fresh.db"
    fresh_reads: list[str] = []
    for t in turns:
        with MemoryOS.from_sqlite(path, config=MemoryOSConfig(**CONFIG)) as fresh:  # type: ignore[arg-type]
            _counted(fresh, fresh_reads)
            fresh.add_turn(user_id=USER, **_fields(t))
    assert sorted(fresh_reads) == sorted(embedded)  # read as it arrived, never again: its analysis is stored with it

    # and a controller that reads nothing ahead (its analysis redefined) analyses each page as it is added
    class Redefined(HeuristicController):
        def analyze_page(self, page: DialoguePage, *args: Any, **kwargs: Any) -> Any:
            return super().analyze_page(page, *args, **kwargs)

    plain = _memory(tmp_path, "plain", Redefined())
    plain_reads: list[str] = []
    _counted(plain, plain_reads)
    for t in turns:
        plain.add_turn(user_id=USER, **_fields(t))
    assert sorted(plain_reads) == sorted(r.page_id for r in reports if r.added)

    with MemoryOS.from_sqlite(path, config=MemoryOSConfig(**CONFIG)) as fresh:  # type: ignore[arg-type]
        expected = _memory_of(fresh, USER)
    assert _memory_of(ahead, USER) == expected
    assert _memory_of(plain, USER) == expected
    ahead.close()
    plain.close()


def test_aadd_turn_reads_ahead_and_stores_the_same(tmp_path: Path) -> None:
    turns = _turns()[:20]
    sync, concurrent = _memory(tmp_path, "sync"), _memory(tmp_path, "async")
    for t in turns:
        sync.add_turn(user_id=USER, **_fields(t))
    reads: list[str] = []
    _counted(concurrent, reads)

    async def run() -> list[Any]:
        return [await concurrent.aadd_turn(user_id=USER, **_fields(t)) for t in turns]

    reports = asyncio.run(run())
    assert sorted(reads) == sorted(r.page_id for r in reports)  # each turn read once (as it was embedded)
    assert _memory_of(concurrent, USER) == _memory_of(sync, USER)
    sync.close()
    concurrent.close()


def test_a_reading_of_a_changed_page_is_not_used() -> None:
    controller = HeuristicController()
    page = DialoguePage(id="p", user_input="I live in Lyon.", agent_response="Nice!", metadata={"user_name": "Ana"})
    reading = controller.read_ahead(page)
    assert reading is not None and reading.content_for(page, controller) == controller.page_content(page)
    page.metadata["user_name"] = "Ben"  # who speaks changes whose facts they are
    assert reading.content_for(page, controller) is None
    page.metadata["user_name"] = "Ana"
    assert reading.content_for(page, HeuristicController(page_keywords=3)) is None  # another controller


@pytest.mark.parametrize("redefined", ["page_content", "analyze_page"])
def test_a_controller_with_its_own_analysis_reads_nothing_ahead(redefined: str) -> None:
    def own(self: HeuristicController, *args: Any, **kwargs: Any) -> Any:
        return getattr(HeuristicController, redefined)(self, *args, **kwargs)

    custom = type("Custom", (HeuristicController,), {redefined: own})()
    assert custom.read_ahead(DialoguePage(id="p", user_input="I'm vegan.", agent_response="")) is None


def test_the_facts_read_off_a_page_are_embedded_beside_it_and_a_turn_makes_one_encoder_pass_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_memoryos.embeddings import MiniLMEmbeddings

    calls: list[tuple[str, tuple[str, ...]]] = []
    encode = MiniLMEmbeddings.encode

    def counted(self: MiniLMEmbeddings, texts: Any, *, threads: int = 1) -> Any:
        calls.append((threading.current_thread().name, tuple(texts)))
        return encode(self, texts, threads=threads)

    monkeypatch.setattr(MiniLMEmbeddings, "encode", counted)
    memory = _memory(tmp_path, "ahead")
    turns = _turns()
    for t in turns:
        memory.add_turn(user_id=USER, **_fields(t))
    facts = {f.summary for f in memory.list_facts(user_id=USER)}
    assert facts  # the pages sent their facts through AMU as they were added
    pages = {DialoguePage(id="p", **_page_texts(t)).embedding_text for t in turns}  # type: ignore[arg-type]
    own = [texts for name, texts in calls if not name.startswith("memoryos-side")]
    beside = [texts for name, texts in calls if name.startswith("memoryos-side")]
    assert len([texts for texts in own if len(texts) == 1 and texts[0] in pages]) == len(turns)
    own_facts = [texts for texts in own if texts[0] not in pages]
    # a turn's own pass is its page's; facts are embedded beside their page (on the reader thread), except
    # when a summary is stored already: AMU then embeds the others, a batch the reader did not embed
    assert facts <= {s for texts in beside for s in texts}
    assert all(any(set(texts) < set(b) for b in beside) for texts in own_facts)
    assert len(own_facts) < len(beside) / 2
    memory.close()


def test_the_reader_process_reads_pages_ahead_and_the_memory_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORYOS_READER_PROCESS", "1")
    assert reader.ready(120)  # started in the background, the encoder loaded there
    turns = _turns()
    there = _memory(tmp_path, "there")
    reads: list[str] = []
    _counted(there, reads)
    for t in turns:
        there.add_turn(user_id=USER, **_fields(t))
    assert reads == []  # every page was read (and its facts embedded) in the reader process
    monkeypatch.setenv("MEMORYOS_READER_PROCESS", "0")
    here = _memory(tmp_path, "here")
    for t in turns:
        here.add_turn(user_id=USER, **_fields(t))
    assert _memory_of(there, USER) == _memory_of(here, USER)  # the same rows, fact vectors included
    there.close()
    here.close()
