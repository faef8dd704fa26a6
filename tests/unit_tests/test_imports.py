"""The public API is pinned: a change to ``__all__`` must be deliberate."""

from __future__ import annotations

import langchain_memoryos

EXPECTED_ALL = [
    "BackgroundWriteError",
    "BaseController",
    "ConfigError",
    "ConfigTypeError",
    "ControllerUsage",
    "DialoguePage",
    "EmbeddingsNotAvailableError",
    "FactHistory",
    "FactNotFoundError",
    "ForgetReport",
    "HeuristicController",
    "InvalidInputError",
    "InvalidTypeError",
    "LLMController",
    "MemoryContext",
    "MemoryController",
    "MemoryOS",
    "MemoryOSChatMessageHistory",
    "MemoryOSConfig",
    "MemoryOSError",
    "MemoryRecord",
    "MemoryRepository",
    "MemoryStats",
    "MiniLMEmbeddings",
    "MissingStoreError",
    "MissingUserIdError",
    "ModelThresholds",
    "PageNotFoundError",
    "Persona",
    "Prompts",
    "Relation",
    "RunnableWithMemoryOS",
    "SearchHit",
    "Segment",
    "WriteEvent",
    "WriteReport",
    "__version__",
    "create_inspector_app",
    "pair_messages",
    "resolve_embeddings",
]


def test_all_is_pinned() -> None:
    assert sorted(langchain_memoryos.__all__) == sorted(EXPECTED_ALL)
    for name in langchain_memoryos.__all__:
        assert hasattr(langchain_memoryos, name), name


def test_version_comes_from_the_installed_metadata() -> None:
    from importlib.metadata import version

    assert langchain_memoryos.__version__ == version("langchain-memoryos")


EXPECTED_EVALUATION_ALL = [
    "DEFAULT_ANSWER_PROMPT",
    "DEFAULT_BASELINES",
    "DEFAULT_CV_GRID",
    "DEFAULT_MEMORY_SYSTEMS",
    "GOLD_ACTIONS",
    "PROTOCOLS",
    "Baseline",
    "CachedEmbeddings",
    "CrossValidation",
    "FlatPages",
    "LocomoPage",
    "LocomoQuestion",
    "LocomoRun",
    "MemorySystem",
    "Protocol",
    "QuestionOutcome",
    "SuiteWrite",
    "SystemSummary",
    "WriteControlResult",
    "budget_baselines",
    "conversation_pages",
    "coordinate_ascent",
    "ingest_conversation",
    "ingest_plain",
    "load_locomo",
    "loco_cv",
    "load_questions",
    "load_write_control_suite",
    "markdown_table",
    "normalize_evidence",
    "plain_pages",
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
