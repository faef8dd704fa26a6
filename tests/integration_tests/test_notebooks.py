"""Each notebook in ``notebooks/`` runs offline with its key outputs checked (no outputs committed: unit_tests).

Every notebook is executed with nbclient (the default offline setup: no API key, no network, the fake chat
model) in a temporary working directory, so nothing is written into the repository. The kernel is this
interpreter: a ``python3`` kernelspec whose command is ``sys.executable -m ipykernel_launcher`` is written
to a temporary folder and is the only one the kernel manager sees, so kernels installed on the machine
(``~/.local/share/jupyter``, ``/usr/share/jupyter`` …) never matter — on a fresh clone, ``make test``
creates ``.venv`` with ipykernel and runs pytest with ``.venv/bin/python``, which is then the kernel too.
An extra cell appended to each executed copy checks that the kernel's ``sys.prefix`` is ours.

Cells asserted on carry a ``check:<name>`` tag in their metadata.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from traitlets import default

from tests.unit_tests.test_notebooks import NOTEBOOK_DIR

CELL_TIMEOUT = 300  # seconds per cell; each notebook takes a few seconds
KERNEL_CHECK = "import sys\nprint('kernel prefix:', sys.prefix)"


def _kernel_manager_class(spec_dir: Path) -> type[AsyncKernelManager]:
    """A kernel manager that only knows the kernelspecs in ``spec_dir``."""

    class ThisInterpreterKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _only_our_kernelspec(self) -> KernelSpecManager:
            return KernelSpecManager(kernel_dirs=[str(spec_dir)], ensure_native_kernel=False)

    return ThisInterpreterKernelManager


def _write_kernelspec(root: Path) -> Path:
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (this interpreter)",
        "language": "python",
    }
    folder = root / "kernels" / "python3"
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(json.dumps(spec))
    return root / "kernels"


def _execute(name: str, root: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)  # type: ignore[no-untyped-call]
    probe = nbformat.v4.new_code_cell(KERNEL_CHECK)  # type: ignore[no-untyped-call]
    probe.metadata["tags"] = ["check:kernel"]
    nb.cells.append(probe)
    workdir = root / "cwd"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MEMORYOS_MODEL", "MPLBACKEND")}
    env["IPYTHONDIR"] = str(root / "ipython")  # the kernel's IPython profile: not in the home directory
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        kernel_manager_class=_kernel_manager_class(_write_kernelspec(root)),
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute(env=env)  # raises CellExecutionError when a cell fails
    assert _text(nb, "kernel").strip() == f"kernel prefix: {sys.prefix}"
    assert list(workdir.iterdir()) == []  # the notebooks write only to temporary folders of their own
    return nb  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], nbformat.NotebookNode]:
    """Executes a notebook once per test module and returns the executed copy."""
    cache: dict[str, nbformat.NotebookNode] = {}

    def run(name: str) -> nbformat.NotebookNode:
        if name not in cache:
            cache[name] = _execute(name, tmp_path_factory.mktemp(name.split("_", 1)[0]))
        return cache[name]

    return run


def _cell(nb: nbformat.NotebookNode, check: str) -> Any:
    cells = [c for c in nb.cells if f"check:{check}" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged check:{check}, found {len(cells)}"
    return cells[0]


def _text(nb: nbformat.NotebookNode, check: str) -> str:
    """Everything a tagged cell printed or displayed as text (stdout, stderr, plain text, markdown)."""
    parts: list[str] = []
    for output in _cell(nb, check).outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("display_data", "execute_result"):
            parts += [output.data[m] for m in ("text/plain", "text/markdown") if m in output.data]
    return "\n".join(parts)


def _markdown(nb: nbformat.NotebookNode, check: str) -> str:
    """The first markdown a tagged cell displayed."""
    outputs = [o for o in _cell(nb, check).outputs if o.output_type == "display_data" and "text/markdown" in o.data]
    assert outputs, f"the cell tagged check:{check} displayed no markdown"
    return str(outputs[0].data["text/markdown"])


def _pngs(nb: nbformat.NotebookNode, check: str) -> list[bytes]:
    images = [
        base64.b64decode(output.data["image/png"])
        for output in _cell(nb, check).outputs
        if output.output_type in ("display_data", "execute_result") and "image/png" in output.data
    ]
    return [image for image in images if image.startswith(b"\x89PNG")]


def _table(markdown: str) -> list[list[str]]:
    """The body rows of a markdown table, as lists of cell texts."""
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in rows[2:]]


def test_01_quickstart(executed: Callable[[str], nbformat.NotebookNode]) -> None:
    nb = executed("01_quickstart.ipynb")
    first = _text(nb, "first-turn")
    assert "I moved to Denver last spring." in first and "provenance: ['D1:3']" in first
    assert "LLM calls: 0" in _text(nb, "ingest")  # offline: the heuristic controller
    assert "I live in Portland." in _text(nb, "recall")  # "Where did I live before I moved?"
    persona = _text(nb, "persona")
    assert "'location': 'Denver'" in persona
    moved = "The user lives in Denver, having moved there in April 2024."  # the move dated (issue 31)
    assert moved in persona and "The user lives in Portland." not in persona
    log = _text(nb, "write-log")
    assert f"updated: {moved}" in log and "portland → denver" in log
    correct = _text(nb, "correct")
    assert "stored -> The user is vegan." in correct and "edited -> The user is vegetarian." in correct
    assert "deleted -> " in correct and "still stored: False" in correct
    search = _text(nb, "search")  # scored pages with ids and sources; a fact's history; messages in, once
    assert re.search(r"page 0\.\d+ p_\w+ S\d:\d", search)
    assert re.search(rf"fact: {re.escape(moved)}\s+stored: The user lives in Portland\.\s+updated:", search)
    assert re.search(r"stored:\s+\[True\]\s+again:\s+\[False\]", search)  # stream chunks may split a line
    assert "I play the cello" in _text(nb, "sqlite")  # reopened from the SQLite file
    assert "Smith Rock" in _text(nb, "async")


def test_02_langgraph_agent(executed: Callable[[str], nbformat.NotebookNode]) -> None:
    nb = executed("02_langgraph_agent.ipynb")
    assert _text(nb, "model").strip() == "chat model: FakeMemoryModel"  # no MEMORYOS_MODEL: the fake
    write = _text(nb, "write-graph")
    for node in ("stm_append", "chain_link", "mtm_insert", "heat_evict", "persona_promote", "write_gate"):
        assert f"{node}({node})" in write
    assert "```mermaid" in write and "relation_judge -.-> fuse" in write
    read = _text(nb, "read-graph")
    assert all(node in read for node in ("retrieve_stm", "retrieve_lpm", "retrieve_mtm", "assemble_context"))
    subgraph = _text(nb, "subgraph")
    assert "recall --> respond" in subgraph and "respond --> remember" in subgraph
    assert re.search(r"answer: From memory: .*I play the cello", subgraph)
    assert "[monday] agent: Done: stored: The user is allergic to peanuts." in _text(nb, "agent-monday")
    friday = _text(nb, "agent-friday")
    assert re.search(r"\[friday\] agent: From memory: .*Biscuit", friday)  # told in another thread
    assert re.search(r"\[friday\] agent: From memory: .*peanuts", friday)
    assert "checkpointed messages: monday 10, friday 4" in friday  # each thread keeps its own messages
    # stored by the manage_memory tool (beside the facts of Monday's turns, written as each turn was added)
    assert "'The user is allergic to peanuts.'" in friday and "'The user works as a nurse.'" in friday
    forget = _text(nb, "agent-forget")
    # the block shows no fact line the page already says: the model names what to forget (the tool's forget)
    assert "[friday] agent: Done: forgot 1 fact and " in forget and "(id f:" in forget
    assert "facts: [" in forget and "'The user is allergic to peanuts.'" not in forget
    assert "'Recent conversation' in the memory block: False" in forget  # the thread's turns are its messages
    middleware = _text(nb, "middleware")
    assert "MemoryOSMiddleware.before_agent" in middleware and "MemoryOSMiddleware.after_agent" in middleware
    assert re.search(r"answer: From memory: .*I work as a nurse", middleware)


def test_03_write_control(executed: Callable[[str], nbformat.NotebookNode]) -> None:
    nb = executed("03_write_control.ipynb")
    decisions = [(row[0], row[1], row[2]) for row in _table(_markdown(nb, "decisions"))]
    assert ("I live in Lisbon.", "stored", "The user lives in Lisbon.") in decisions
    # add_fact keeps every content word of what the caller said (no silent loss)
    assert ("I am vegan, by the way.", "discarded", "The user is vegan, by the way.") in decisions
    # its relative time as a date, against the time it was stated (the notebook's add_fact: now)
    porto = [row[2] for row in decisions if row[:2] == ("I moved to Porto last month.", "updated")]
    assert len(porto) == 1 and re.fullmatch(
        r"The user lives in Porto, having moved there in [A-Z][a-z]+ \d{4}\.", porto[0]
    )
    assert ("Book me a table for two tonight.", "filtered") in [row[:2] for row in decisions]
    said = "Book a table at a vegan place for Friday, I'm vegetarian now."
    assert {row[1] for row in decisions if row[0] == said} == {"filtered", "updated"}
    assert ("I think I might like jazz, maybe.", "filtered") in [row[:2] for row in decisions]
    assert ("I now work at Stripe.", "updated", "The user works at Stripe.") in decisions
    facts = _text(nb, "facts")
    assert porto[0] in facts and "The user works at Stripe." in facts
    assert "Lisbon" not in facts and "Google" not in facts and "The user is vegan." not in facts

    run = re.search(r"(\d+) turns, (\d+) segments, (\d+) promotions", _text(nb, "heat-run"))
    assert run is not None and int(run[1]) == 71 and int(run[2]) > 1 and int(run[3]) >= 1
    assert len(_pngs(nb, "heat-plot")) == 1
    log = [(row[1], row[2]) for row in _table(_markdown(nb, "promotion-log"))]
    moved = "The user lives in Denver, having moved there in April 2024."
    assert ("updated", moved) in log and ("stored", "The user lives in Portland.") in log
    assert "'location': 'Denver'" in _text(nb, "persona")
    assert "retrieved pages, best first:" in _text(nb, "waiting")


def test_04_locomo_benchmark(executed: Callable[[str], nbformat.NotebookNode]) -> None:
    nb = executed("04_locomo_benchmark.ipynb")
    assert "8 sessions, 192 turns" in _text(nb, "data") and "11 questions" in _text(nb, "data")
    systems = [row[0] for row in _table(_markdown(nb, "table"))]
    assert systems == [
        "memoryos",
        "memoryos (paper)",
        "last-10",
        "bm25 top-5",
        "bm25 top-20",
        "dense top-5",
        "full context",
    ]
    summary = {
        m[1]: (float(m[2]), float(m[3]))
        for m in re.finditer(r"^(.+): recall ([\d.]+) % with (\d+) words", _text(nb, "summary"), re.M)
    }
    assert summary["full context"][0] == 100.0  # the synthetic evidence ids all exist
    assert summary["last-10"][0] == 0.0  # no evidence in the last session
    recall, words = summary["memoryos"]
    assert recall >= 75.0 and words < summary["full context"][1]
    assert "recall_vs_words.png" in _text(nb, "plot") and len(_pngs(nb, "plot")) == 1
