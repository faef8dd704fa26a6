"""``import_user``: modes, an export checked whole before any write, a new version stamp; ids every backend stores.

The tests that take ``make_memory`` run on InMemoryStore and SQLite here, and on PostgreSQL in
tests/integration_tests/test_postgres_backend.py; the two-memories test runs on PostgreSQL in
tests/integration_tests/test_import_processes.py, with a second process.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from tests.conftest import at

MakeMemory = Callable[..., MemoryOS]

TURNS = [
    ("I moved to Lisbon last spring.", "Lisbon is lovely."),
    ("I adopted a beagle called Pim.", "Pim is a great name."),
    ("I work as a nurse at the city hospital.", "That is demanding work."),
    ("My sister Ana lives in Porto.", "Porto is close by."),
    ("I am learning to play the cello.", "The cello sounds warm."),
    ("I started running marathons this year.", "Impressive!"),
    ("I am allergic to peanuts.", "I will remember that."),
    ("My favourite food is grilled sardines.", "A Lisbon classic."),
]


def _fill(memory: MemoryOS, user: str, turns: list[tuple[str, str]], *, start: int = 0, thread: str = "t") -> None:
    for i, (said, answer) in enumerate(turns):
        memory.add_turn(said, answer, user_id=user, thread_id=thread, timestamp=at(0, start + i))


def _items(data: dict[str, Any], *namespace: str) -> list[dict[str, Any]]:
    return [row for row in data["items"] if row["namespace"][: len(namespace)] == list(namespace)]


def _random_id(rng: random.Random, size: int) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(size))


# -- modes ------------------------------------------------------------------------------------------------


def test_import_refuses_an_existing_user_and_replace_restores_the_export(make_memory: MakeMemory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=3))
    _fill(memory, "ana", TURNS[:5])
    data = memory.export_user(user_id="ana")
    assert not _items(data, "version")  # the version stamp is never exported
    _fill(memory, "ana", TURNS[5:], start=5)
    after = memory.export_user(user_id="ana")
    with pytest.raises(ValueError, match=r'already has a memory; nothing was imported\. Pass mode="replace".*"merge"'):
        memory.import_user(data)
    assert memory.export_user(user_id="ana") == after  # nothing written
    with pytest.raises(ValueError, match=r"mode must be one of 'refuse', 'replace', 'merge', got 'overwrite'"):
        memory.import_user(data, mode="overwrite")  # type: ignore[arg-type]
    assert memory.import_user(data, mode="replace") == len(data["items"])
    assert memory.export_user(user_id="ana") == data  # exactly the export: nothing of the later turns is left
    assert memory.check(user_id="ana") == []
    ctx = memory.retrieve("Where does my sister live?", user_id="ana", thread_id="t")
    assert "Porto" in ctx.to_prompt()


def test_an_older_export_merged_into_its_user_leaves_a_consistent_user(make_memory: MakeMemory) -> None:
    """The older export's pages have moved to MTM since: a merge keeps what the user has and adds nothing twice."""
    memory = make_memory(MemoryOSConfig(stm_capacity=3))
    _fill(memory, "ana", TURNS[:4])
    old = memory.export_user(user_id="ana")
    _fill(memory, "ana", TURNS[4:], start=4)
    before = {p.id: p.user_input for p in memory.list_pages(user_id="ana")}
    stm = [p.user_input for p in memory.get_stm(user_id="ana", thread_id="t")]
    assert memory.import_user(old, mode="merge") == 0  # every item of the older export is there already
    assert memory.check(user_id="ana") == []
    assert {p.id: p.user_input for p in memory.list_pages(user_id="ana")} == before
    assert [p.user_input for p in memory.get_stm(user_id="ana", thread_id="t")] == stm
    # a merge adds what the user does not have: another thread's pages and a fact
    other = MemoryOS(config=MemoryOSConfig(stm_capacity=3))  # another store: the export's source
    _fill(other, "ana", [("I collect vinyl records.", "Nice hobby."), ("I play chess.", "Great.")], thread="u")
    other.add_fact("I'm vegan.", user_id="ana", timestamp=at(0, 30))
    extra = other.export_user(user_id="ana")
    written = memory.import_user(extra, mode="merge")
    assert written > 0
    assert memory.check(user_id="ana") == []
    assert [p.user_input for p in memory.get_stm(user_id="ana", thread_id="u")] == [
        "I collect vinyl records.",
        "I play chess.",
    ]
    assert "The user is vegan." in [f.summary for f in memory.list_facts(user_id="ana")]
    assert {p.id for p in memory.list_pages(user_id="ana")} >= set(before)
    # the clock is the later of the two: a new turn is stored after both histories, and every id stays unique
    memory.add_turn("I bought a bicycle.", "Enjoy it.", user_id="ana", thread_id="u", timestamp=at(0, 40))
    assert memory.check(user_id="ana") == []


def test_a_merge_over_an_stm_capacity_moves_the_oldest_pages_to_mtm(make_memory: MakeMemory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=3))
    _fill(memory, "ana", TURNS[:3])
    other = MemoryOS(config=MemoryOSConfig(stm_capacity=3))  # another store: the export's source
    _fill(other, "ana", TURNS[5:8], start=5)
    memory.import_user(other.export_user(user_id="ana"), mode="merge")
    assert memory.check(user_id="ana") == []
    assert len(memory.get_stm(user_id="ana", thread_id="t")) == 3
    assert len(memory.list_pages(user_id="ana")) == 3  # six pages: the three oldest moved to MTM


def test_a_merge_over_a_fact_capacity_is_refused_before_any_write(make_memory: MakeMemory) -> None:
    memory = make_memory(MemoryOSConfig(user_kb_capacity=2))
    memory.add_fact("I'm vegan.", user_id="ana", timestamp=at(0, 1))
    memory.add_fact("I live in Lisbon.", user_id="ana", timestamp=at(0, 2))
    other = MemoryOS(config=MemoryOSConfig(user_kb_capacity=2))  # another store: the export's source
    other.add_fact("I play the cello.", user_id="ana", timestamp=at(0, 3))
    before = memory.export_user(user_id="ana")
    with pytest.raises(ValueError, match="3 user facts, more than user_kb_capacity=2"):
        memory.import_user(other.export_user(user_id="ana"), mode="merge")
    assert memory.export_user(user_id="ana") == before


# -- an export checked whole ------------------------------------------------------------------------------


def _tamper(data: dict[str, Any], namespace: list[str], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    bad = copy.deepcopy(data)
    edit(next(row for row in bad["items"] if row["namespace"][: len(namespace)] == namespace))
    return bad


TAMPERED: list[tuple[str, list[str], Callable[[dict[str, Any]], None], str]] = [
    (
        "page without id",
        ["pages"],
        lambda r: r["value"].pop("id"),
        r"item \d+ \(page 'p_\w+'\) field 'id': missing \(a required key\)",
    ),
    (
        "keywords 5",
        ["pages"],
        lambda r: r["value"].update(keywords=5),
        r"item \d+ \(page 'p_\w+'\) field 'keywords': Input should be a valid list \(got 5\)",
    ),
    (
        "seq abc",
        ["stm"],
        lambda r: r["value"].update(seq="abc"),
        r"item \d+ \(STM page 'p_\w+'\) field 'seq': Input should be a valid integer \(got 'abc'\)",
    ),
    (
        "no key",
        ["segments"],
        lambda r: r.pop("key"),
        r"item \d+ \(segment\): 'key' must be a non-empty string, got None",
    ),
    (
        "namespace a string",
        ["pages"],
        lambda r: r.update(namespace="pages"),
        r"item \d+: 'namespace' must be a list of non-empty strings .* got 'pages'",
    ),
    (
        "short vector",
        ["facts", "user"],
        lambda r: r["value"].update(vector=r["value"]["vector"][:16]),
        r"item \d+ \(user fact 'f_\d+'\) field 'vector': a vector of \d+ numbers, but this memory's embeddings have",
    ),
    (
        "candidate aspect",
        ["pages"],
        lambda r: r["value"]["candidates"].append({"aspect": "astrology"}),
        r"item \d+ \(page 'p_\w+'\) field 'candidates\[\d+\]\.aspect': Input should be 'personal_profile'",
    ),
    (
        "segment id not its key",
        ["segments"],
        lambda r: r["value"].update(id="s_other"),
        r"item \d+ \(segment 's_\w+'\) field 'id': 's_other' is not the item's key",
    ),
    (
        "unknown namespace",
        ["pages"],
        lambda r: r.update(namespace=["pagez"]),
        r"item \d+: unknown namespace \['pagez'\]",
    ),
]


@pytest.mark.parametrize(("edit", "match"), [(t[1:3], t[3]) for t in TAMPERED], ids=[t[0] for t in TAMPERED])
def test_a_tampered_export_is_refused_whole_naming_the_item_and_field(
    make_memory: MakeMemory, edit: tuple[list[str], Callable[[dict[str, Any]], None]], match: str
) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=3))
    _fill(memory, "ana", TURNS[:6])
    memory.add_fact("I'm vegan.", user_id="ana", timestamp=at(0, 9))
    data = memory.export_user(user_id="ana")
    assert _items(data, "pages") and _items(data, "stm") and _items(data, "segments")
    bad = _tamper(data, *edit)
    with pytest.raises(ValueError, match=match):
        memory.import_user(bad, user_id="bob")
    assert memory.export_user(user_id="bob")["items"] == []  # nothing written
    # the user stays usable: every operation works
    memory.add_turn("I live in Oslo.", "Nice.", user_id="bob", timestamp=at(1))
    assert "Oslo" in memory.retrieve("Where do I live?", user_id="bob").to_prompt()
    assert memory.check(user_id="bob") == [] and memory.repair(user_id="bob") == []


def test_an_import_over_the_memorys_capacities_is_refused(make_memory: MakeMemory) -> None:
    big = MemoryOS(config=MemoryOSConfig(stm_capacity=5, mtm_max_segments=50))  # the export's source
    _fill(big, "ana", TURNS)
    data = big.export_user(user_id="ana")
    segments = len(_items(data, "segments"))
    assert segments >= 2
    small = make_memory(MemoryOSConfig(stm_capacity=4))
    with pytest.raises(ValueError, match=r"STM thread 't' holds 5 pages, more than stm_capacity=4"):
        small.import_user(data)
    few = make_memory(MemoryOSConfig(stm_capacity=5, mtm_max_segments=1))
    with pytest.raises(ValueError, match=rf"{segments} segments, more than mtm_max_segments=1"):
        few.import_user(data)
    assert small.export_user(user_id="ana")["items"] == [] and few.export_user(user_id="ana")["items"] == []


# -- a new version stamp: every cache reloads -------------------------------------------------------------


def cached_memory_sees_the_import(a: MemoryOS, b: MemoryOS) -> None:
    """``a`` holds the user in its cache; ``b`` (another memory on the same store) imports over it."""
    _fill(a, "ana", TURNS[:5])
    data = a.export_user(user_id="ana")  # at the version ``a`` caches
    assert len(a.list_pages(user_id="ana")) > 0
    _fill(b, "ana", TURNS[5:], start=5)  # another version
    edited = copy.deepcopy(data)
    for row in _items(edited, "pages"):
        row["value"]["user_input"] = "Imported page."
    b.delete_user(user_id="ana")
    b.import_user(edited)  # the export carried the version ``a`` caches: a stamp written back would be trusted
    assert {p.user_input for p in a.list_pages(user_id="ana")} == {"Imported page."}
    assert len(a.get_stm(user_id="ana", thread_id="t")) == len(_items(data, "stm"))
    a.add_turn("I bought a bicycle.", "Enjoy it.", user_id="ana", thread_id="t", timestamp=at(0, 20))
    assert a.check(user_id="ana") == [] and b.check(user_id="ana") == []
    assert a.export_user(user_id="ana") == b.export_user(user_id="ana")


def test_a_memory_with_the_user_cached_sees_an_import_by_another(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    config = MemoryOSConfig(stm_capacity=3)
    with MemoryOS.from_sqlite(path, config=config) as a, MemoryOS.from_sqlite(path, config=config) as b:
        cached_memory_sees_the_import(a, b)


# -- ids that every backend stores ------------------------------------------------------------------------


def test_long_ids_and_nul_in_a_thread_id_work_and_round_trip(make_memory: MakeMemory) -> None:
    rng = random.Random(7)
    long_user, long_thread, nul_thread = _random_id(rng, 3000), _random_id(rng, 10_000), "chat\x00room"
    memory = make_memory(MemoryOSConfig(stm_capacity=2))
    pairs = ((long_user, "t"), ("bob", long_thread), ("carl", nul_thread), (long_user, nul_thread), ("d\x00n", "t"))
    for user, thread in pairs:
        _fill(memory, user, TURNS[:4], thread=thread)
        ctx = memory.retrieve("Where does my sister live?", user_id=user, thread_id=thread)
        assert "Porto" in ctx.to_prompt()
        assert [p.thread_id for p in memory.get_stm(user_id=user, thread_id=thread)] == [thread, thread]
        assert thread in memory.list_threads(user_id=user)
        assert memory.check(user_id=user) == []
    assert memory.list_users() == sorted([long_user, "bob", "carl", "d\x00n"])
    assert sorted(memory.list_threads(user_id=long_user)) == sorted(["t", nul_thread])
    for user in (long_user, "bob", "carl", "d\x00n"):
        data = memory.export_user(user_id=user)
        threads = {row["namespace"][1] for row in _items(data, "stm")}
        assert threads <= {"t", long_thread, nul_thread} and threads
        memory.delete_user(user_id=user)
        assert user not in memory.list_users()
        memory.import_user(data)
        assert memory.export_user(user_id=user) == data  # the round trip is exact
        assert memory.check(user_id=user) == []
        memory.import_user(data, user_id=user + "-copy")
        assert memory.check(user_id=user + "-copy") == []
        memory.add_turn("I bought a bicycle.", "Enjoy.", user_id=user, thread_id=sorted(threads)[0], timestamp=at(1))
        assert memory.check(user_id=user) == []
    assert long_user + "-copy" in memory.list_users()


def test_ordinary_ids_keep_their_labels_and_a_long_prefix_is_one_clear_error() -> None:
    from langchain_memoryos.schema.layout import MAX_PREFIX_BYTES, encode_label

    assert encode_label("a.b@x.com") == "a%2Eb@x%2Ecom" and encode_label("ü" * 256) == "ü" * 256
    assert encode_label("ü" * 257).startswith("%h") and len(encode_label("x" * 513)) == 66
    with pytest.raises(ValueError, match=rf"more than {MAX_PREFIX_BYTES}: .* PostgreSQL's index entry limit"):
        MemoryOS(namespace_prefix=("app", "x" * 600))
