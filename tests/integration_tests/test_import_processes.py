"""An import seen by every cache of the user: another memory on PostgreSQL, and another process (SQLite, PostgreSQL)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from tests.conftest import postgres_url, wipe_postgres
from tests.unit_tests.test_import_modes import TURNS, _fill, cached_memory_sees_the_import

CONFIG = MemoryOSConfig(stm_capacity=3)

#: the other process: import the export file over the user, as `memoryos import --mode replace` does
IMPORTER = """
import json, sys
from langchain_memoryos import MemoryOS, MemoryOSConfig
where, path = sys.argv[1], sys.argv[2]
config = MemoryOSConfig(stm_capacity=3)
opener = MemoryOS.from_postgres if where.startswith("postgresql") else MemoryOS.from_sqlite
memory = opener(where, config=config)
with memory:
    print(memory.import_user(json.load(open(path, encoding="utf-8")), mode="replace"))
"""


def test_a_memory_with_the_user_cached_sees_an_import_on_postgres() -> None:
    url = postgres_url()
    wipe_postgres(url)
    with MemoryOS.from_postgres(url, config=CONFIG) as a, MemoryOS.from_postgres(url, config=CONFIG) as b:
        cached_memory_sees_the_import(a, b)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_process_with_the_user_cached_sees_an_import_by_another_process(tmp_path: Path, backend: str) -> None:
    if backend == "postgres":
        where = postgres_url()
        wipe_postgres(where)
        memory = MemoryOS.from_postgres(where, config=CONFIG)
    else:
        where = str(tmp_path / "m.db")
        memory = MemoryOS.from_sqlite(where, config=CONFIG)
    with memory:
        _fill(memory, "ana", TURNS[:5])
        data = memory.export_user(user_id="ana")
        _fill(memory, "ana", TURNS[5:], start=5)
        assert len(memory.list_pages(user_id="ana")) == 5  # this process caches the user at its newest version
        edited = copy.deepcopy(data)
        for row in edited["items"]:
            if row["namespace"] == ["pages"]:
                row["value"]["user_input"] = "Imported page."
        dump = tmp_path / "ana.json"
        dump.write_text(json.dumps(edited), encoding="utf-8")
        out = subprocess.run(
            [sys.executable, "-c", IMPORTER, where, str(dump)], capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        assert int(out.stdout.strip()) == len(data["items"])
        assert {p.user_input for p in memory.list_pages(user_id="ana")} == {"Imported page."}
        assert {p.user_input for p in memory.get_stm(user_id="ana", thread_id="t")} == {
            row["value"]["user_input"] for row in data["items"] if row["namespace"] == ["stm", "t"]
        }
        memory.add_turn("I bought a bicycle.", "Enjoy it.", user_id="ana", thread_id="t")
        assert memory.check(user_id="ana") == []
