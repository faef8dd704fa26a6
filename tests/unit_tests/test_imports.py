"""The public API is pinned: a change to ``__all__`` must be deliberate."""

from __future__ import annotations

import subprocess
import sys

import langchain_memoryos

EXPECTED_ALL = [
    "BaseController",
    "ControllerUsage",
    "DialoguePage",
    "EmbeddingsNotAvailableError",
    "FactNotFoundError",
    "HeuristicController",
    "MemoryContext",
    "MemoryController",
    "MemoryOS",
    "MemoryOSConfig",
    "MemoryRecord",
    "MemoryRepository",
    "MemoryStats",
    "MiniLMEmbeddings",
    "ModelThresholds",
    "Persona",
    "Relation",
    "Segment",
    "WriteEvent",
    "WriteReport",
    "__version__",
    "resolve_embeddings",
]


def test_all_is_pinned() -> None:
    assert sorted(langchain_memoryos.__all__) == sorted(EXPECTED_ALL)
    for name in langchain_memoryos.__all__:
        assert hasattr(langchain_memoryos, name), name


def test_version_comes_from_the_installed_metadata() -> None:
    from importlib.metadata import version

    assert langchain_memoryos.__version__ == version("langchain-memoryos")


def test_import_needs_no_optional_extra() -> None:
    code = (
        "import sys, langchain_memoryos\n"
        "extras = ('langchain', 'langchain_classic', 'psycopg', 'langchain_openai', 'torch')\n"
        "bad = [m for m in extras if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
