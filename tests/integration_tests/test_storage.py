"""SQLite persistence read back by another process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from langchain_memoryos import MemoryOS
from tests.unit_tests.test_storage import _fill


def test_sqlite_persistence_survives_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with MemoryOS.from_sqlite(path) as memory:
        _fill(memory)
        expected = memory.stats(user_id="a.b@x.com")
    script = textwrap.dedent(
        f"""
        import json
        from langchain_memoryos import MemoryOS
        with MemoryOS.from_sqlite({str(path)!r}) as m:
            s = m.stats(user_id="a.b@x.com")
            ctx = m.retrieve("What am I allergic to?", user_id="a.b@x.com", thread_id="t.1")
            facts = [f.record.summary for f in ctx.user_facts]
            print(json.dumps({{"stm": s.stm_pages, "mtm": s.mtm_pages, "segments": s.segments,
                              "facts": facts, "sources": sorted(ctx.source_ids())}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert (got["stm"], got["mtm"], got["segments"]) == (expected.stm_pages, expected.mtm_pages, expected.segments)
    assert got["facts"][0] == "The user is allergic to peanuts."
    assert "D1:0" in got["sources"]
