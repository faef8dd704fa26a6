"""The search indices a user's records are found by, derived from them (a cache kept in step by ``store/indices.py``).

``vector_index.py`` (FAISS cosine search over unit vectors), ``lexical.py``
(BM25 and reciprocal-rank fusion) and ``chain.py`` (the dialogue-chain
windows: runs of consecutive pages, ranked by both).
"""
