"""The memory inspector (``memoryos serve`` / ``create_inspector_app``) through Starlette's test client.

Every view on a real memory (InMemoryStore and SQLite files), the token and ``Host`` rules, the read-only
rules (an SQLite file byte-identical after every view; a half-deleted user left as it is; a record without a
usable vector healed for display only) and the edits of ``--allow-edit``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the inspector extra (langchain-memoryos[inspector]) is not installed")

from starlette.testclient import TestClient  # noqa: E402

from langchain_memoryos import MemoryOS, MemoryOSConfig, create_inspector_app  # noqa: E402
from langchain_memoryos.inspector.opening import open_sqlite_read_only  # noqa: E402
from langchain_memoryos.schema.layout import _DELETING, _TOMBSTONE  # noqa: E402
from tests.conftest import at  # noqa: E402
from tests.inspector_memory import build  # noqa: E402

PORT = 8765
TOKEN = "test-token-0123456789"
CONFIG = MemoryOSConfig(stm_capacity=2)


def client_for(app: Any, host: str = f"127.0.0.1:{PORT}") -> TestClient:
    return TestClient(app, base_url=f"http://{host}", follow_redirects=False)


def with_cookie(app: Any, host: str, value: str = TOKEN) -> TestClient:
    client = client_for(app, host)
    client.cookies.set("memoryos_inspector", value)
    return client


def logged_in(app: Any) -> TestClient:
    client = client_for(app)
    assert client.get(f"/?token={TOKEN}").status_code == 303
    return client


@pytest.fixture
def memory() -> Iterator[MemoryOS]:
    mem = MemoryOS(config=CONFIG)
    yield mem
    mem.close()


def every_view(client: TestClient, ids: dict[str, str], memory: MemoryOS) -> dict[str, str]:
    """GET every view of the inspector; their HTML by name (each must answer 200)."""
    seg = memory.list_segments(user_id="ana")[0].id
    pages = {
        "users": "/",
        "users page 2": "/?page=2",
        "user": "/user?u=ana",
        "user pages": "/user?u=ana&tp=2&sp=2&fp=2",
        "thread": "/user/thread?u=ana&t=t1",
        "segment": f"/user/segment?u=ana&s={seg}",
        "fact": f"/user/fact?u=ana&f={ids['fact']}",
        "log": "/user/log?u=ana",
        "log stored": "/user/log?u=ana&action=stored",
        "ask form": "/user/ask?u=ana",
        "ask": "/user/ask?u=ana&q=Which+instrument+do+I+play%3F&t=t9",
        "ask agent": "/user/ask?u=ana&q=cello&agent=coach",
        "unknown user": "/user?u=nobody",
    }
    out = {}
    for name, url in pages.items():
        res = client.get(url)
        assert res.status_code == 200, (name, res.status_code, res.text[:300])
        out[name] = res.text
    return out


# -- views ------------------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def any_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryOS]:
    mem = (
        MemoryOS(config=CONFIG) if request.param == "memory" else MemoryOS.from_sqlite(tmp_path / "m.db", config=CONFIG)
    )
    yield mem
    mem.close()


def test_every_view_shows_what_the_memory_holds(any_memory: MemoryOS) -> None:
    memory = any_memory
    ids = build(memory)
    memory.add_turn("I am An, not Ana.", "Hello An.", user_id="an", timestamp=at(0))  # a label that starts another
    client = logged_in(create_inspector_app(memory, token=TOKEN, port=PORT))
    html = every_view(client, ids, memory)
    # users: both, with their counts (read from the store)
    users = html["users"]
    assert 'href="/user?u=ana"' in users and 'href="/user?u=bob"' in users
    stats = memory.stats(user_id="ana")
    row = re.search(r'u=ana">ana</a></td>(.*?)</tr>', users, re.S)
    assert row is not None
    assert [int(n) for n in re.findall(r"<td>(\d+)</td>", row.group(1))] == [
        stats.stm_pages,
        stats.mtm_pages,
        stats.segments,
        stats.user_facts + stats.agent_facts,
    ]
    row = re.search(r'u=an">an</a></td>(.*?)</tr>', users, re.S)
    an = memory.stats(user_id="an")
    assert row is not None and [int(n) for n in re.findall(r"<td>(\d+)</td>", row.group(1))] == [
        1,
        0,
        0,
        an.user_facts,
    ]
    # a user: STM newest first per thread, segments with heat and a bar against tau, facts with their history
    user = html["user"]
    t1 = user[user.index('data-thread="t1"') :]
    assert t1.index("Miso loves sleeping on the piano.") < t1.index("I adopted a cat called Miso.")
    assert "I am planning a trip to Kyoto." in user
    segments = memory.list_segments(user_id="ana")
    assert segments and all(f'data-segment="{s.id}"' in user for s in segments)
    assert f"{segments[0].heat:.2f}" in user and 'class="bar"' in user and "&tau; = 5.0" in user
    fact = user[user.index(f'data-fact="{ids["fact"]}"') :]
    fact = fact[: fact.index("<h2>Write log")]
    assert "Ana lives in Bergen." in fact and "history (2 write events)" in fact
    assert "act act-stored" in fact and "act act-edited" in fact and "was: The user lives in Oslo." in fact
    assert "discarded" in user  # the write log: the duplicate
    # a thread, a segment's pages, a fact, the log filtered by action
    assert "Miso loves sleeping on the piano." in html["thread"]
    seg = memory.list_segments(user_id="ana")[0]
    first = memory.list_pages(user_id="ana", segment_id=seg.id)[0]
    assert first.user_input in html["segment"] and ", ".join(seg.keywords[:1]) in html["segment"]
    assert "Ana lives in Bergen." in html["fact"] and "act act-edited" in html["fact"]
    assert "act act-discarded" in html["log"] and "act act-discarded" not in html["log stored"]
    assert "act act-stored" in html["log stored"]
    assert "No thread has short-term pages." in html["unknown user"]


def test_ask_shows_exactly_what_retrieve_would_inject_and_changes_no_heat(memory: MemoryOS) -> None:
    build(memory)
    before = [(s.id, s.n_visit, s.last_access) for s in memory.list_segments(user_id="ana")]
    client = logged_in(create_inspector_app(memory, token=TOKEN, port=PORT))
    question = "Which instrument do I play?"
    html = client.get("/user/ask", params={"u": "ana", "q": question, "t": "t9"}).text
    ctx = memory.retrieve(question, user_id="ana", thread_id="t9", touch=False)
    import html as html_lib

    prompt = re.search(r'<pre class="prompt">(.*?)</pre>', html, re.S)
    assert prompt is not None and html_lib.unescape(prompt.group(1)) == ctx.to_prompt()
    assert f"{ctx.word_count} words" in html
    assert html.count('<tr class="item">') == len(ctx.stm) + len(ctx.segments) + len(ctx.pages) + len(
        ctx.user_facts
    ) + len(ctx.agent_facts)
    assert ctx.pages and "MTM page" in html and "cosine:" in html
    assert f"{ctx.pages[0].score:.4f}" in html
    assert [(s.id, s.n_visit, s.last_access) for s in memory.list_segments(user_id="ana")] == before


def test_lists_are_paged(memory: MemoryOS) -> None:
    facts = ["I live in Oslo.", "I'm allergic to peanuts.", "I work as a nurse.", "I play the cello."]
    facts.append("I speak Spanish.")
    for i in range(7):
        memory.add_turn(f"hello {i}", "hi", user_id=f"user{i}", timestamp=at(i))
    for fact in facts:
        memory.add_fact(fact, user_id="user0")
    assert len(memory.list_facts(user_id="user0")) == 5
    app = create_inspector_app(memory, token=TOKEN, port=PORT, page_size=3)
    client = logged_in(app)
    first, last = client.get("/").text, client.get("/?page=3").text
    assert "page 1 of 3 (7 rows)" in first and "u=user0" in first and "u=user6" not in first
    assert "u=user6" in last and "u=user0" not in last
    facts_page = client.get("/user?u=user0&fp=2").text
    assert "page 2 of 2" in facts_page and facts_page.count('<tr class="fact"') == 2


# -- the token and the Host ----------------------------------------------------------------------------


def test_every_request_needs_the_token(memory: MemoryOS) -> None:
    ids = build(memory)
    app = create_inspector_app(memory, token=TOKEN, port=PORT)
    anonymous = client_for(app)
    for url in ("/", "/user?u=ana", "/user/log?u=ana", "/user/ask?u=ana&q=cello", f"/user/fact?u=ana&f={ids['fact']}"):
        res = anonymous.get(url)
        assert res.status_code == 403 and "Ana" not in res.text and "cello" not in res.text.replace(url, "")
    assert anonymous.get("/?token=wrong").status_code == 403
    assert with_cookie(app, f"127.0.0.1:{PORT}", "wrong").get("/").status_code == 403
    # the printed URL: a redirect that drops the token from the address and keeps it in a strict cookie
    res = anonymous.get(f"/user?u=ana&token={TOKEN}")
    assert res.status_code == 303 and res.headers["location"] == "/user?u=ana"
    cookie = res.headers["set-cookie"]
    assert f"memoryos_inspector={TOKEN}" in cookie and "SameSite=Strict" in cookie and "HttpOnly" in cookie
    page = anonymous.get("/user?u=ana")  # the cookie from now on
    assert page.status_code == 200
    # never framed by another site, nothing loaded from the network, not cached
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text)
    # a fresh token per app
    other = create_inspector_app(memory, port=PORT)
    assert other.state.token != TOKEN and len(other.state.token) >= 32
    assert client_for(other).get(f"/?token={TOKEN}").status_code == 403


def test_the_host_header_must_name_the_loopback_address(memory: MemoryOS) -> None:
    build(memory)
    app = create_inspector_app(memory, token=TOKEN, port=PORT)
    for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1:9999", f"192.168.1.2:{PORT}", "localhost.evil:80"):
        client = client_for(app, host)
        res = client.get(f"/user?u=ana&token={TOKEN}")
        assert res.status_code == 400 and "cello" not in res.text, host
        assert with_cookie(app, host).get("/").status_code == 400
    for host in (f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}"):
        assert with_cookie(app, host).get("/").status_code == 200, host
    # mounted in another server (no port given): any loopback port, still no other name
    mounted = create_inspector_app(memory, token=TOKEN)
    assert with_cookie(mounted, "localhost:5000").get("/").status_code == 200
    assert with_cookie(mounted, "evil.example:5000").get("/").status_code == 400


# -- read-only -----------------------------------------------------------------------------------------


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def sqlite_file(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "memory.db"
    with MemoryOS.from_sqlite(path, config=CONFIG) as writer:
        ids = build(writer)
    return path, ids


def test_browsing_every_view_leaves_the_sqlite_file_byte_identical(sqlite_file: tuple[Path, dict[str, str]]) -> None:
    path, ids = sqlite_file
    before = digest(path)
    with open_sqlite_read_only(path, config=CONFIG) as memory:
        client = logged_in(create_inspector_app(memory, token=TOKEN, port=PORT))
        html = every_view(client, ids, memory)
        assert "Ana lives in Bergen." in html["user"]
        # edits are refused, and a write through this memory could not happen anyway (the file is opened read-only)
        for url, form in (
            ("/user/forget", {"u": "ana", "fact": ids["fact"]}),
            ("/user/correct", {"u": "ana", "f": ids["fact"], "text": "Ana lives in Rome."}),
        ):
            res = client.post(url, data={**form, "token": TOKEN})
            assert res.status_code == 403 and "--allow-edit" in res.text
        with pytest.raises(Exception, match="readonly"):
            memory.add_turn("I moved to Rome.", "ok", user_id="ana")
    assert digest(path) == before
    wal = Path(f"{path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    with MemoryOS.from_sqlite(path, config=CONFIG) as after:
        assert after.get_fact(ids["fact"], user_id="ana").fact.summary == "Ana lives in Bergen."


def test_a_half_deleted_user_is_shown_as_such_and_left_as_it_is(sqlite_file: tuple[Path, dict[str, str]]) -> None:
    path, ids = sqlite_file
    with MemoryOS.from_sqlite(path, config=CONFIG) as writer:  # an interrupted deletion: its tombstone is stored
        writer.store.put(writer.repository.namespace("ana", _DELETING), _TOMBSTONE, {"since": "2024-01-01"})
    before = digest(path)
    with open_sqlite_read_only(path, config=CONFIG) as memory:
        client = logged_in(create_inspector_app(memory, token=TOKEN, port=PORT))
        user = client.get("/user?u=ana").text
        assert "deletion was interrupted" in user and "Bergen" not in user and "cello" not in user
        log = client.get("/user/log?u=ana").text
        assert "Bergen" not in log and "act act-stored" not in log
        assert "cello" not in client.get("/user/ask?u=ana&q=Which+instrument%3F").text.split("<h2>Items")[-1]
    assert digest(path) == before
    with MemoryOS.from_sqlite(path, config=CONFIG) as writer:  # a memory that may write finishes the deletion
        assert writer.get_stm(user_id="ana", thread_id="t1") == []
        assert writer.store.search(writer.repository.namespace("ana"), limit=5) == []


def test_a_record_without_a_usable_vector_is_healed_for_display_only(sqlite_file: tuple[Path, dict[str, str]]) -> None:
    path, _ = sqlite_file
    with MemoryOS.from_sqlite(path, config=CONFIG) as writer:
        ns = writer.repository.namespace("ana", "pages")
        item = writer.store.search(ns, limit=1)[0]
        writer.store.put(ns, item.key, {**item.value, "vector": "not a vector"})
    before = digest(path)
    with open_sqlite_read_only(path, config=CONFIG) as memory:
        client = logged_in(create_inspector_app(memory, token=TOKEN, port=PORT))
        ask = client.get("/user/ask", params={"u": "ana", "q": item.value["user_input"], "t": "t9"}).text
        items = ask.split("<h2>Items")[-1].split("<h2>The prompt")[0]
        assert "MTM page" in items and item.value["user_input"] in items  # re-embedded in memory: found
        client.get("/user?u=ana")
    assert digest(path) == before
    with MemoryOS.from_sqlite(path, config=CONFIG) as writer:  # still to repair: nothing was rewritten
        assert any("without a usable vector" in problem for problem in writer.check(user_id="ana"))


def test_a_program_s_memory_is_read_through_a_read_only_twin(memory: MemoryOS) -> None:
    build(memory)
    memory.store.put(memory.repository.namespace("bob", _DELETING), _TOMBSTONE, {"since": "2024-01-01"})
    memory.repository.invalidate("bob")  # rows written by hand: the cache is told (as after an import)
    client = logged_in(create_inspector_app(memory, token=TOKEN, port=PORT))
    assert "deletion was interrupted" in client.get("/user?u=bob").text
    assert memory.store.get(memory.repository.namespace("bob", _DELETING), _TOMBSTONE) is not None  # left as it was
    assert not memory.repository.read_only  # the program's own memory is unchanged
    memory.get_stm(user_id="bob")  # ... and finishes the deletion at its own next access
    assert memory.store.get(memory.repository.namespace("bob", _DELETING), _TOMBSTONE) is None


# -- edits ------------------------------------------------------------------------------------------------


def test_allow_edit_forgets_and_corrects_with_the_form_token(memory: MemoryOS) -> None:
    ids = build(memory)
    client = logged_in(create_inspector_app(memory, token=TOKEN, port=PORT, allow_edit=True))
    user = client.get("/user?u=ana").text
    assert 'action="/user/forget"' in user and 'action="/user/correct"' in user
    # without the form's token (another site's form carries no token): refused, nothing changed
    res = client.post("/user/correct", data={"u": "ana", "f": ids["fact"], "text": "Ana lives in Rome."})
    assert res.status_code == 403
    assert memory.get_fact(ids["fact"], user_id="ana").fact.summary == "Ana lives in Bergen."
    # correct a fact
    form = {"u": "ana", "f": ids["fact"], "text": "Ana lives in Rome.", "token": TOKEN}
    res = client.post("/user/correct", data=form)
    assert res.status_code == 303 and res.headers["location"] == "/user?u=ana"
    found = memory.get_fact(ids["fact"], user_id="ana")
    assert found.fact.summary == "Ana lives in Rome." and found.history[-1].action == "edited"
    # forget a fact, then a page
    peanuts = next(f for f in memory.list_facts(user_id="ana") if "peanuts" in f.summary)
    assert client.post("/user/forget", data={"u": "ana", "fact": peanuts.id, "token": TOKEN}).status_code == 303
    assert all("peanuts" not in f.summary for f in memory.list_facts(user_id="ana"))
    page = memory.get_stm(user_id="ana", thread_id="t2")[0]
    assert client.post("/user/forget", data={"u": "ana", "page": page.id, "token": TOKEN}).status_code == 303
    assert memory.get_stm(user_id="ana", thread_id="t2") == []
    assert "Kyoto" not in client.get("/user?u=ana").text
    assert client.post("/user/forget", data={"u": "ana", "fact": "f_999999", "token": TOKEN}).status_code == 404


# -- the command ---------------------------------------------------------------------------------------


def test_serve_refuses_what_it_cannot_open(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from langchain_memoryos.cli import app

    runner = CliRunner()
    missing = runner.invoke(app, ["serve", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 2 and "no such database" in missing.output
    assert not (tmp_path / "none.db").exists()  # nothing created
    both = runner.invoke(app, ["serve", "--db", "x.db", "--postgres", "postgresql://x"])
    assert both.exit_code == 2 and "either --db or --postgres" in both.output
    (tmp_path / "not.db").write_text("not a database")
    bad = runner.invoke(app, ["serve", "--db", str(tmp_path / "not.db")])
    assert bad.exit_code == 2 and bad.output.startswith("error:")
    assert (tmp_path / "not.db").read_text() == "not a database"
    import socket

    with MemoryOS.from_sqlite(tmp_path / "m.db"):
        pass
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = runner.invoke(app, ["serve", "--db", str(tmp_path / "m.db"), "--port", str(taken.getsockname()[1])])
    assert busy.exit_code == 1 and "pass another --port" in busy.output and "token=" not in busy.output


def test_mounted_in_another_app_under_a_path(memory: MemoryOS) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    build(memory)
    outer = Starlette(routes=[Mount("/memory", app=create_inspector_app(memory, token=TOKEN))])
    client = TestClient(outer, base_url="http://localhost:8000", follow_redirects=False)
    res = client.get(f"/memory/user?u=ana&token={TOKEN}")
    assert res.status_code == 303 and res.headers["location"] == "/memory/user?u=ana"
    assert "Path=/memory" in res.headers["set-cookie"]
    page = client.get("/memory/user?u=ana")
    assert page.status_code == 200 and "Miso loves sleeping on the piano." in page.text
    links = re.findall(r'(?:href|action)="([^"]+)"', page.text)
    assert links and all(link.startswith("/memory/") for link in links)
    assert client.get(links[0].replace("&amp;", "&")).status_code == 200
