"""Imports in a fresh interpreter: no optional extra is needed, and the classic integration stays lazy."""

from __future__ import annotations

import subprocess
import sys


def test_import_needs_no_optional_extra() -> None:
    code = (
        "import sys, langchain_memoryos\n"
        "extras = ('langchain', 'langchain_classic', 'psycopg', 'langchain_openai', 'torch', 'starlette', 'uvicorn',"
        " 'jinja2')\n"
        "bad = [m for m in extras if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_benchmark_and_cli_import_without_the_bench_extra() -> None:
    # bm25s, nltk, matplotlib and tqdm are the 'bench' extra: importing must not need them
    code = (
        "import sys\n"
        "for m in ('bm25s', 'nltk', 'matplotlib', 'tqdm'): sys.modules[m] = None\n"
        "import langchain_memoryos.evaluation, langchain_memoryos.cli\n"
        "import datetime as dt\n"
        "from langchain_memoryos.evaluation import FlatPages, LocomoPage\n"
        "page = LocomoPage('hi', '', 'A', 'B', ('D1:1',), dt.datetime(2023, 1, 1), 1)\n"
        "try:\n"
        "    FlatPages([page], embeddings=None)\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "install the 'bench' extra" in out.stdout


def test_integrations_all_is_pinned_and_classic_is_lazy() -> None:
    import langchain_memoryos.integrations as integrations

    assert sorted(integrations.__all__) == [
        "MemoryOSChatMessageHistory",
        "MemoryOSMemory",
        "RunnableWithMemoryOS",
        "pair_messages",
    ]
    code = "import sys, langchain_memoryos.integrations\nprint('langchain_classic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_the_inspector_stays_lazy_and_names_its_extra() -> None:
    # create_inspector_app is a top-level name, but Starlette, uvicorn and Jinja2 load only when it is called;
    # without them the call says what to install
    code = (
        "import sys, langchain_memoryos, langchain_memoryos.cli\n"
        "create = langchain_memoryos.create_inspector_app\n"
        "print([m for m in ('starlette', 'uvicorn', 'jinja2') if m in sys.modules])\n"
        "for m in ('starlette', 'uvicorn', 'jinja2'): sys.modules[m] = None\n"
        "import importlib.util\n"
        "try:\n"
        "    create(langchain_memoryos.MemoryOS())\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    assert first == "[]"
    assert "install langchain-memoryos[inspector]" in second
