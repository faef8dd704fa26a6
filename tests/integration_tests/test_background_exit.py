"""Background writes at interpreter exit: a process that ends without ``close()`` stores every queued turn."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import postgres_url, wipe_postgres

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 600.0  # generous: the machine may be busy; a hung exit fails instead of hanging the suite

OPEN = {
    "sqlite": "MemoryOS.from_sqlite(TARGET, write_mode='background')",
    "postgres": "MemoryOS.from_postgres(TARGET, write_mode='background')",
}
TURNS = textwrap.dedent(
    """
    for i in range(60):
        memory.add_turn(f"Day {i}: I walked {i} km by the river.", "Nice!", user_id="ana", turn_id=f"ana:{i}")
    """
)


def _script(backend: str, target: str, body: str) -> list[str]:
    """A script that opens a background-mode memory, runs ``body`` and ends without closing it."""
    script = f"import atexit, sys\nfrom langchain_memoryos import MemoryOS\nTARGET = {target!r}\n"
    return [sys.executable, "-c", script + f"memory = {OPEN[backend]}\n" + textwrap.dedent(body)]


def _run(backend: str, target: str, body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _script(backend, target, body),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "postgres":
        url = postgres_url()
        wipe_postgres(url)
        return "postgres", url
    return "sqlite", str(tmp_path / "memory.db")


def _stored(backend: str, target: str) -> list[str]:
    with MemoryOS.from_postgres(target) if backend == "postgres" else MemoryOS.from_sqlite(target) as memory:
        assert memory.check(user_id="ana") == []
        pages = memory.list_pages(user_id="ana") + memory.get_stm(user_id="ana")
        return sorted(str(p.metadata.get("turn_id")) for p in pages)


EVERY_TURN = sorted(f"ana:{i}" for i in range(60))


def test_sys_exit_without_close_stores_every_queued_turn(target: tuple[str, str]) -> None:
    done = _run(*target, TURNS + "sys.exit(0)\n")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "background write" not in done.stderr, done.stderr[-3000:]
    assert _stored(*target) == EVERY_TURN


def test_an_exception_escaping_the_script_still_stores_every_queued_turn(target: tuple[str, str]) -> None:
    done = _run(*target, TURNS + "raise KeyError('the application failed')\n")
    assert done.returncode == 1 and "KeyError: 'the application failed'" in done.stderr
    assert "background write" not in done.stderr, done.stderr[-3000:]
    assert _stored(*target) == EVERY_TURN


def test_turns_queued_by_an_atexit_hook_are_written_inline(tmp_path: Path) -> None:
    # atexit hooks run after concurrent.futures has shut its thread pools: these writes cannot use them
    body = """
    def last_words():
        memory.add_turn("I am leaving now.", "Bye!", user_id="ana", turn_id="ana:exit")
        memory.add_turns([(f"Note {i}: buy {i} apples.", "Noted.") for i in range(40)], user_id="bob")
    atexit.register(last_words)
    """
    target = str(tmp_path / "memory.db")
    done = _run("sqlite", target, body)
    assert done.returncode == 0 and "background write" not in done.stderr, done.stderr[-3000:]
    assert _stored("sqlite", target) == ["ana:exit"]
    with MemoryOS.from_sqlite(target) as memory:
        bob = memory.stats(user_id="bob")
        assert bob.stm_pages + bob.mtm_pages == 40 and memory.check(user_id="bob") == []


def test_sigterm_with_the_documented_line_stores_every_queued_turn(tmp_path: Path) -> None:
    # Python's default SIGTERM ends the process without exit hooks; the one line of docs/architecture.md
    # ("Background writes") makes SIGTERM end it as sys.exit() does
    body = TURNS + textwrap.dedent(
        """
        import signal, threading
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        print("queued", flush=True)
        threading.Event().wait(600)
        """
    )
    target = str(tmp_path / "memory.db")
    proc = subprocess.Popen(
        _script("sqlite", target, body),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "queued\n"
    proc.terminate()
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0 and "background write" not in err, err[-3000:]
    assert _stored("sqlite", target) == EVERY_TURN
