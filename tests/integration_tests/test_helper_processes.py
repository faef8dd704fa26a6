"""A killed process leaves no helper process behind, and no user locked (PostgreSQL): real processes, real kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from tests.conftest import postgres_url, wipe_postgres

HOLDER = Path(__file__).with_name("holder.py")
ROOT = Path(__file__).resolve().parents[2]
#: generous: the machine may be busy; a test that would hang fails after it instead
TIMEOUT = 300.0
#: generous for one add_turn in a new process (normally a few seconds)
WRITE_TIMEOUT = 180.0

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2,
    reason="reads /proc; the bulk write's helper runs with two cores or more",
)


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _holder(backend: str, target: str, user: str) -> tuple[subprocess.Popen[str], list[int]]:
    """The holder process, once it holds ``user``'s lock, and its children then."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(HOLDER), backend, target, user],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(2)]  # the holder blocks after "locked": no timeout needed here
    assert lines == ["bulk 80\n", "locked\n"], (lines, proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
    return proc, _children(proc.pid)


def _kill(proc: subprocess.Popen[str], children: list[int], how: signal.Signals) -> list[int]:
    """Kill the holder with ``how``; its children still alive after a generous wait."""
    proc.send_signal(how)
    proc.wait(TIMEOUT)
    deadline = time.monotonic() + 60
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [c for c in children if _alive(c)]


def _reap(pids: list[int]) -> None:
    """Kill what a test left behind (the old code's orphans), so no test leaves a process running."""
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_a_killed_process_leaves_no_helper_process_alive(tmp_path: Path, how: signal.Signals) -> None:
    proc, children = _holder("sqlite", str(tmp_path / "memory.db"), "ana")
    try:
        assert children  # the bulk write's page analyser, started by the large add_turns
        assert _kill(proc, children, how) == []  # it exits with its parent, however the parent died
    finally:
        proc.kill()
        _reap(children)


def test_a_user_locked_by_a_killed_process_is_written_by_another_process(tmp_path: Path) -> None:
    pg = postgres_url()
    wipe_postgres(pg)
    proc, children = _holder("postgres", pg, "ana")
    try:
        _add_turn_elsewhere(pg, proc, children)
    finally:
        proc.kill()
        _reap(children)
    with MemoryOS.from_postgres(pg) as memory:
        assert memory.stats(user_id="ana").stm_pages == 7 and memory.check(user_id="ana") == []


def _add_turn_elsewhere(pg: str, proc: subprocess.Popen[str], children: list[int]) -> None:
    _kill(proc, children, signal.SIGKILL)  # killed while it holds ana's advisory lock
    code = (
        "import sys; from langchain_memoryos import MemoryOS\n"
        "with MemoryOS.from_postgres(sys.argv[1]) as m:\n"
        "    print(m.add_turn('I moved to Bergen.', 'Nice!', user_id='ana').added, flush=True)\n"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", code, pg],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        out, err = other.communicate(timeout=WRITE_TIMEOUT)  # blocked for ever while a leftover holds the lock
    except subprocess.TimeoutExpired:
        other.kill()
        other.communicate()
        pytest.fail(f"another process's add_turn did not complete in {WRITE_TIMEOUT:g} s: the user is locked")
    assert other.returncode == 0, err[-2000:]
    assert out.strip() == "True"
