"""Retrieval: the read stages (STM, LPM, MTM, context assembly), BM25 and keyword extraction."""
