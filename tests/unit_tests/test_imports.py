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
    "LLMController",
    "MemoryContext",
    "MemoryController",
    "MemoryOS",
    "MemoryOSChatMessageHistory",
    "MemoryOSConfig",
    "MemoryRecord",
    "MemoryRepository",
    "MemoryStats",
    "MiniLMEmbeddings",
    "ModelThresholds",
    "Persona",
    "Prompts",
    "Relation",
    "RunnableWithMemoryOS",
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


EXPECTED_EVALUATION_ALL = [
    "DEFAULT_ANSWER_PROMPT",
    "DEFAULT_BASELINES",
    "DEFAULT_MEMORY_SYSTEMS",
    "GOLD_ACTIONS",
    "Baseline",
    "FlatPages",
    "LocomoPage",
    "LocomoQuestion",
    "LocomoRun",
    "MemorySystem",
    "QuestionOutcome",
    "SuiteWrite",
    "SystemSummary",
    "WriteControlResult",
    "conversation_pages",
    "ingest_conversation",
    "load_locomo",
    "load_questions",
    "load_write_control_suite",
    "markdown_table",
    "normalize_evidence",
    "plot_recall_vs_words",
    "predicted_action",
    "redundancy",
    "run_locomo",
    "run_write_control",
    "summarize",
    "write_report",
]


def test_evaluation_all_is_pinned() -> None:
    import langchain_memoryos.evaluation as evaluation

    assert sorted(evaluation.__all__) == sorted(EXPECTED_EVALUATION_ALL)
    for name in evaluation.__all__:
        assert hasattr(evaluation, name), name


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
