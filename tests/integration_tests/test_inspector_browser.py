"""End to end: ``memoryos serve`` in a subprocess over an SQLite memory, driven in headless Chromium.

The browser is the system's (the Debian packages ``chromium`` and ``chromium-driver``, which ``.ci/run``
installs), driven by selenium with the driver's path given, so selenium-manager never runs and nothing is
downloaded. The test is skipped, saying why, only on a machine without them.

The README's screenshot is this test's capture: run it with ``MEMORYOS_INSPECTOR_SCREENSHOT=1`` to write
``docs/images/inspector.png`` (or set the variable to another path).
"""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_memoryos import MemoryOS
from tests.inspector_memory import CONFIG, build

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "inspector.png"


def _browser_missing() -> str | None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    if missing:
        return f"no {', '.join(missing)}: install the Debian packages chromium and chromium-driver (.ci/run does)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


pytestmark = pytest.mark.skipif(_browser_missing() is not None, reason=str(_browser_missing()))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """``memoryos serve --db <a memory the test built> --port <free>``: its printed URL, the file, the ids."""
    db = tmp_path / "memory.db"
    with MemoryOS.from_sqlite(db, config=CONFIG) as memory:
        ids = build(memory)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "langchain_memoryos.cli", "serve", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    out = proc.stdout

    def pump() -> None:
        for line in out:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    url = ""
    try:
        while not url:
            try:
                line = lines.get(timeout=120)  # a generous guard, not a speed limit
            except queue.Empty:
                pytest.fail(f"memoryos serve printed no URL: {seen}")
            seen.append(line)
            if line.startswith("open http://"):
                url = line.split(" ", 1)[1].strip()
        assert url.startswith(f"http://127.0.0.1:{port}/?token=")
        _wait_listening(port, proc)
        yield url, db, ids
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def _wait_listening(port: int, proc: subprocess.Popen[str]) -> None:
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, "memoryos serve exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail("memoryos serve is not listening")


def chromium() -> Any:
    """Headless Debian Chromium through its own chromedriver (selenium-manager is skipped: the path is given)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,1500")
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(120)
    return driver


def capture(driver: Any, tmp_path: Path) -> Path:
    """A PNG of the page; also written to the README's screenshot when ``MEMORYOS_INSPECTOR_SCREENSHOT`` is set."""
    shot = tmp_path / "inspector.png"
    driver.save_screenshot(str(shot))
    target = os.environ.get("MEMORYOS_INSPECTOR_SCREENSHOT", "")
    if target:
        dest = SCREENSHOT if target == "1" else Path(target)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, dest)
    return shot


def test_the_user_page_and_ask_in_a_real_browser(served: tuple[str, Path, dict[str, str]], tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url, db, ids = served
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    driver = chromium()
    try:
        driver.get(url)  # the printed URL: the token moves to a cookie, the address bar loses it
        assert "token=" not in driver.current_url
        assert driver.find_element(By.TAG_NAME, "h1").text == "Users"
        driver.find_element(By.LINK_TEXT, "ana").click()
        # an STM turn, a segment with its heat, a fact with its history
        stm = driver.find_element(By.CSS_SELECTOR, '.stm[data-thread="t1"] .turn')
        assert "Miso loves sleeping on the piano." in stm.text
        segment = driver.find_element(By.CSS_SELECTOR, "tr.segment")
        heat = float(segment.find_element(By.CSS_SELECTOR, "td.heat").text.split()[0])
        assert heat > 0
        bar = segment.find_element(By.CSS_SELECTOR, ".bar span")
        assert bar.size["width"] > 0  # drawn, as a share of tau
        fact = driver.find_element(By.CSS_SELECTOR, f'tr.fact[data-fact="{ids["fact"]}"]')
        history = fact.find_element(By.CSS_SELECTOR, "details.history")
        assert "Ana lives in Bergen." in fact.text
        assert "stored" in history.text and "edited" in history.text and "was: The user lives in Oslo." in history.text
        capture(driver, tmp_path)
        # Ask: what retrieval would inject
        form = driver.find_element(By.ID, "ask")
        form.find_element(By.NAME, "q").send_keys("Which instrument do I play?")
        form.find_element(By.NAME, "t").clear()
        form.find_element(By.NAME, "t").send_keys("fresh")
        form.find_element(By.CSS_SELECTOR, "button").click()
        answer = driver.find_element(By.CSS_SELECTOR, ".answer")
        assert "words" in answer.find_element(By.CSS_SELECTOR, ".words").text
        rows = answer.find_elements(By.CSS_SELECTOR, "tr.item")
        tiers = [row.find_elements(By.TAG_NAME, "td")[0].text for row in rows]
        assert "MTM page" in tiers
        assert "cello" in answer.find_element(By.CSS_SELECTOR, "pre.prompt").text
        shot = tmp_path / "inspector.png"  # the capture of the user page
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        driver.quit()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # browsing wrote nothing
