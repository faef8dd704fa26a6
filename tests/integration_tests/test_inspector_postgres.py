"""The inspector over PostgreSQL: every view, the users counted in the store, nothing written."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytest.importorskip("starlette", reason="the inspector extra (langchain-memoryos[inspector]) is not installed")

from starlette.testclient import TestClient  # noqa: E402

from langchain_memoryos import MemoryOS, create_inspector_app  # noqa: E402
from langchain_memoryos.inspector.opening import open_postgres_read_only  # noqa: E402
from tests.conftest import postgres_url  # noqa: E402
from tests.inspector_memory import CONFIG, build  # noqa: E402


def _rows(url: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return sorted(conn.execute("SELECT prefix, key, value::text, updated_at FROM store").fetchall())


def test_every_view_over_postgres_writes_nothing(make_memory: Callable[..., MemoryOS]) -> None:
    writer = make_memory(CONFIG)
    ids = build(writer)
    stats = writer.stats(user_id="ana")
    before = _rows(postgres_url())
    with open_postgres_read_only(postgres_url(), config=CONFIG) as memory:
        client = TestClient(create_inspector_app(memory, token="t", port=8765), base_url="http://127.0.0.1:8765")
        client.get("/?token=t")
        users = client.get("/").text
        row = users[users.index('u=ana">ana</a>') :].split("</tr>")[0]
        assert f"<td>{stats.stm_pages}</td><td>{stats.mtm_pages}</td><td>{stats.segments}</td>" in row
        seg = writer.list_segments(user_id="ana")[0].id
        for url in (
            "/user?u=ana",
            "/user/thread?u=ana&t=t1",
            f"/user/segment?u=ana&s={seg}",
            f"/user/fact?u=ana&f={ids['fact']}",
            "/user/log?u=ana&action=edited",
            "/user/ask?u=ana&q=Which+instrument+do+I+play%3F",
        ):
            res = client.get(url)
            assert res.status_code == 200, (url, res.text[:300])
        assert "Ana lives in Bergen." in client.get("/user?u=ana").text
    assert _rows(postgres_url()) == before
