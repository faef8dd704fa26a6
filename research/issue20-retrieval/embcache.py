"""Embed every text once with the package's offline MiniLM; cache rows in emb_vecs.npy / emb_texts.json."""
import json
from pathlib import Path
import numpy as np

_DIR = Path(__file__).parent
_T, _V = _DIR / "emb_texts.json", _DIR / "emb_vecs.npy"
_index: dict[str, int] | None = None
_vecs: np.ndarray | None = None
_emb = None


def _load():
    global _index, _vecs
    if _index is None:
        if _T.exists():
            texts = json.loads(_T.read_text())
            _index = {t: i for i, t in enumerate(texts)}
            _vecs = np.load(_V)
        else:
            _index, _vecs = {}, np.zeros((0, 384), dtype=np.float32)


def embed(texts):
    """Rows (L2-normalised float32) for texts; missing ones are encoded in one batch and cached."""
    global _vecs, _emb
    _load()
    missing = list(dict.fromkeys(t for t in texts if t not in _index))
    if missing:
        from langchain_memoryos.embeddings import resolve_embeddings, encode_texts
        if _emb is None:
            _emb = resolve_embeddings(None)
        new = encode_texts(_emb, missing)
        for t in missing:
            _index[t] = len(_index)
        _vecs = np.concatenate([_vecs, new.astype(np.float32)])
        order = sorted(_index, key=_index.get)
        _T.write_text(json.dumps(order))
        np.save(_V, _vecs)
    return _vecs[[_index[t] for t in texts]]
