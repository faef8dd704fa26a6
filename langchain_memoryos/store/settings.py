"""The settings every stage reads (the config, the thresholds resolved for the embedding model) and its context."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from langchain_memoryos.config import MemoryOSConfig, ModelThresholds
from langchain_memoryos.store.repository import MemoryRepository

__all__ = ["AMUSettings", "EngineSettings", "StageContext", "embedding_text"]

logger = logging.getLogger("langchain_memoryos")


@dataclass(frozen=True)
class AMUSettings:
    """The thresholds and capacities the write path needs.

    Example:
        >>> from langchain_memoryos.config import MemoryOSConfig
        >>> AMUSettings.from_config(MemoryOSConfig(), MemoryOSConfig().thresholds(None)).gate_threshold
        0.5
    """

    gate_threshold: float
    write_similarity: float
    user_capacity: int
    agent_capacity: int

    @classmethod
    def from_config(cls, config: MemoryOSConfig, thresholds: ModelThresholds) -> AMUSettings:
        """Build from the memory's config and resolved thresholds.

        Example:
            >>> from langchain_memoryos.config import MemoryOSConfig
            >>> AMUSettings.from_config(MemoryOSConfig(), MemoryOSConfig().thresholds(None)).user_capacity
            2000
        """
        return cls(
            gate_threshold=config.gate_threshold,
            write_similarity=thresholds.write_similarity,
            user_capacity=config.user_kb_capacity,
            agent_capacity=config.agent_traits_capacity,
        )


@dataclass(frozen=True)
class EngineSettings:
    """Config plus the thresholds resolved for the embedding model in use.

    Example:
        >>> s = EngineSettings.build(MemoryOSConfig(), "all-MiniLM-L6-v2")
        >>> s.amu.write_similarity
        0.6
    """

    config: MemoryOSConfig
    thresholds: ModelThresholds
    amu: AMUSettings

    @classmethod
    def build(cls, config: MemoryOSConfig, model_name: str | None) -> EngineSettings:
        """Resolve thresholds for ``model_name`` and build the settings.

        Example:
            >>> EngineSettings.build(MemoryOSConfig(), None).thresholds.retrieval_similarity
            0.55
        """
        thresholds = config.thresholds(model_name)
        return cls(config, thresholds, AMUSettings.from_config(config, thresholds))


@dataclass(frozen=True)
class StageContext:
    """What every stage of the stage table is given besides its run: the memory's repository and settings.

    A stage is ``(ctx, run) -> Step[None]``
    (:data:`~langchain_memoryos.pipeline.stages.WRITE_STAGES`, :data:`~langchain_memoryos.pipeline.stages.READ_STAGES`):
    it reads the store through ``ctx.repo`` and its thresholds from ``ctx.settings``.

    Example:
        >>> ctx = StageContext(MemoryRepository(2), EngineSettings.build(MemoryOSConfig(), None))
        >>> ctx.repo.dimension, ctx.settings.amu.gate_threshold
        (2, 0.5)
    """

    repo: MemoryRepository
    settings: EngineSettings


def embedding_text(text: str, limit: int) -> str:
    """The text to embed: whole, or truncated to ``limit`` characters with a warning.

    Example:
        >>> embedding_text("abcdef", 3)
        'abc'
    """
    if len(text) <= limit:
        return text
    logger.warning("text of %d characters truncated to %d for embedding (stored whole)", len(text), limit)
    return text[:limit]
