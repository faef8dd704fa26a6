"""The settings every stage reads: the config and the thresholds resolved for the embedding model."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from langchain_memoryos.amu import AMUSettings
from langchain_memoryos.config import MemoryOSConfig, ModelThresholds

__all__ = ["EngineSettings", "embedding_text"]

logger = logging.getLogger("langchain_memoryos")


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
