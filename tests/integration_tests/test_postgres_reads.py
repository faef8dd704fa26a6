"""Reading a large user from PostgreSQL loses no row (LangGraph's search pages by offset over a non-unique order)."""

from __future__ import annotations

from langchain_memoryos import MemoryOS
from tests.conftest import bulky_export, postgres_url, wipe_postgres


def test_a_user_of_thousands_of_rows_written_in_one_transaction_reads_back_whole() -> None:
    url = postgres_url()
    wipe_postgres(url)
    data = bulky_export(6000, "hive")
    with MemoryOS.from_postgres(url) as memory:
        memory.import_user(data)  # one batch: every row gets the same updated_at
        exported = memory.export_user(user_id="bulky")
        keys = [(tuple(r["namespace"]), r["key"]) for r in exported["items"]]
        assert len(keys) == len(set(keys)) == 6000  # no row missing, none twice
        memory.repository.invalidate("bulky")
        pages = memory.list_pages(user_id="bulky")
    with MemoryOS.from_postgres(url) as fresh:  # a new process's load sees every page
        assert len(fresh.list_pages(user_id="bulky")) == len(pages) == sum(1 for ns, _ in keys if ns == ("pages",))
        assert fresh.check(user_id="bulky") == []
