"""Index snapshots and the write journal: a user's state loaded without reading every record or rebuilding its indices.

A user's state (:class:`~langchain_memoryos.store.state.UserState`) is the
records and the indices derived from them (FAISS matrices, BM25, the chain
windows). Rebuilding it from the records costs about 0.3 ms per page (every
row parsed, every page tokenised and stemmed, every window indexed): 1.5 s for
a 5,000-page user, paid by every process on its first access to the user.

In a store shared by processes (where every flush stamps the user with a new
version) two rows keep that cost away:

* the **snapshot** (``("memoryos", <u>, "snapshot")``, key ``"state"``): the
  whole state at one version, in one row — the records as JSON texts (pages and
  facts decoded only when used: :class:`LazyRecords`), the vectors as float32
  matrices, BM25 as bags of words (:class:`~langchain_memoryos.index.lexical.Bags`)
  and the chain windows' members — with the version it was taken at and a
  SHA-256 that binds the memory's scope root, the user's label, that version
  and the body (:func:`snapshot_checksum`);
* the **journal** (``("memoryos", <u>, "journal")``): one row per flush, keyed
  by the version the flush made, naming the version before it and the records
  it changed (written in the flush's own batch, so in its transaction).

:meth:`~langchain_memoryos.store.repository.MemoryRepository.load` reads the
version stamp, the snapshot and the journal. A snapshot at the current version
is used as is; an older one is used only if the journal links its version to
the current one, and then the records the linking flushes changed are read
again and applied (removed first, then put back from their current rows). A
snapshot whose checksum, format or dimension is wrong (a torn row; a row copied
from another user or scope; a row whose version was edited to the current stamp;
a row of an older format), or that no journal path links to the stamp (a writer
that bypassed the memory, an import, a deletion), is never used: the user is
rebuilt from its records (logged). A journal row that is not a well-formed link
(a value of the wrong type, a missing field, JSON that does not parse) is never
followed either: the user is rebuilt, and the next snapshot deletes the rows it can.

The checksum catches rows that are torn, misfiled or stale; it is no
protection against someone who can rewrite the store's rows: they can compute
the checksum of what they write, and they can as well rewrite the records the
user is rebuilt from. So no key is offered (an HMAC over the snapshot alone
would leave the records and the journal as open as they are): access to the
store is what protects a memory. A snapshot is written, in a flush's batch and so at the version that
flush makes, after a rebuild, after a long journal replay, and every
:data:`SNAPSHOT_EVERY` flushes of one process; it deletes the journal rows it
covers.

Example:
    >>> records = LazyRecords(["a"], ['{"n": 1}'], lambda text: str(text).upper())
    >>> records.raw("a"), records["a"], records.raw("a")
    ('{"n": 1}', '{"N": 1}', None)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import zlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, overload

import numpy as np

from langchain_memoryos.errors import CorruptDataError, InvalidInputError
from langchain_memoryos.index.chain import ChainWindows
from langchain_memoryos.index.lexical import Bags, LexicalIndex
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Persona, Segment
from langchain_memoryos.schema.layout import decode_label, is_hash_label

if TYPE_CHECKING:
    from langchain_memoryos.index.vector_index import Vector, VectorIndex
    from langchain_memoryos.store.indices import DerivedIndices

__all__ = [
    "FORMAT",
    "JOURNAL",
    "REPLAY_LIMIT",
    "SNAPSHOT",
    "SNAPSHOT_EVERY",
    "SnapshotState",
    "STATE_PARTS",
    "LazyRecords",
    "Lines",
    "apply_changes",
    "decode_snapshot",
    "encode_snapshot",
    "snapshot_checksum",
]

#: The snapshot format; a row of another format is not read (the user is rebuilt, and a new snapshot written).
#: 2: the MTM and STM page vectors in one block (restored without a copy), the records' texts end to end with
#: their offsets, the header and texts compressed with Zstandard (a codec byte each), the chain as columns.
#: 3: the checksum a SHA-256 of the scope root, the user's label, the version and the body (2 had a CRC-32 of the
#: body alone, which a row copied to another user or given another version still passed).
FORMAT = 3
#: The namespace parts of the snapshot and the journal.
SNAPSHOT, JOURNAL = "snapshot", "journal"
#: The namespaces (after the user's label) whose records make the state; the journal names changes to these.
STATE_PARTS = frozenset({"pages", "segments", "facts", "stm", "persona", "meta"})
#: A process writes a new snapshot after this many of its own flushes since the last one.
SNAPSHOT_EVERY = 500
#: A load that replays more journal rows than this writes a new snapshot at its next flush.
REPLAY_LIMIT = 64

_MAGIC = b"MOSNAP2\n"
T = TypeVar("T")


class _Unread:
    """The value of a record not decoded yet (one object, kept by copies)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _Unread:
        return self

    def __repr__(self) -> str:
        return "<unread>"


_UNREAD = _Unread()


class Lines(Sequence[bytes]):
    """Texts stored end to end in one bytes object: text ``i`` is ``blob[offsets[i]:offsets[i + 1]]``.

    A snapshot's record texts, cut only when read (no 5,000 small objects at load).

    Args:
        blob: the texts end to end.
        offsets: where each text starts, then where the last ends (non-decreasing, within ``blob``).

    Example:
        >>> lines = Lines(b"onetwo", [0, 3, 6]); len(lines), lines[1], list(lines), list(lines[1:])
        (2, b'two', [b'one', b'two'], [b'two'])
    """

    def __init__(self, blob: bytes, offsets: list[int]) -> None:
        self._blob, self._offsets = blob, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> Lines: ...
    def __getitem__(self, i: int | slice) -> bytes | Lines:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                raise CorruptDataError("Lines slices are contiguous")
            return Lines(self._blob, self._offsets[start : max(start, stop) + 1])
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        return self._blob[self._offsets[i] : self._offsets[i + 1]]

    def __deepcopy__(self, memo: dict[int, Any]) -> Lines:
        return self  # immutable


class LazyRecords(MutableMapping[str, T], Generic[T]):
    """A mapping of records kept as JSON texts until first read (then decoded once, in place).

    A retrieval reads a few hundred pages of a 5,000-page user; decoding them
    all would cost more than the rest of the load. Order is insertion order, as a ``dict``.

    Args:
        keys: the records' keys.
        texts: their JSON texts (``str``, or UTF-8 ``bytes``), in the same order.
        decode: turns a text (as given) into the record.

    Example:
        >>> m = LazyRecords(["a", "b"], ["1", "2"], int)
        >>> m["c"] = 3; del m["a"]
        >>> list(m.items()), "b" in m, len(m)
        ([('b', 2), ('c', 3)], True, 2)
    """

    def __init__(self, keys: Sequence[str], texts: Sequence[str | bytes], decode: Callable[[str | bytes], T]) -> None:
        if len(keys) != len(texts):
            raise CorruptDataError(f"{len(keys)} keys but {len(texts)} texts")
        self._items: dict[str, T | _Unread] = dict.fromkeys(keys, _UNREAD)
        self._at: dict[str, int] = dict(zip(keys, range(len(keys)), strict=True))
        self._texts = texts
        self._decode = decode

    def __getitem__(self, key: str) -> T:
        value = self._items[key]
        if isinstance(value, _Unread):
            value = self._items[key] = self._decode(self._texts[self._at.pop(key)])
        return value

    def __setitem__(self, key: str, value: T) -> None:
        self._at.pop(key, None)
        self._items[key] = value

    def __delitem__(self, key: str) -> None:
        del self._items[key]
        self._at.pop(key, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def raw(self, key: str) -> str | None:
        """The record's JSON text while it is not decoded (``None`` once it is).

        Example:
            >>> m = LazyRecords(["a"], [b"1"], int); m.raw("a"), m["a"], m.raw("a")
            ('1', 1, None)
        """
        at = self._at.get(key) if key in self._items else self._at[key]
        if at is None:
            return None
        text = self._texts[at]
        return text if isinstance(text, str) else text.decode("utf-8")

    def __repr__(self) -> str:
        return f"LazyRecords({len(self)} records)"


def _json(text: str | bytes) -> Any:
    """Parsed JSON: with ``orjson`` (3 times faster; it comes with LangSmith) when present, else ``json``.

    A text ``orjson`` refuses (a ``NaN``, an integer beyond 64 bits) is read by ``json``, as it was written.
    """
    try:
        import orjson
    except ImportError:  # pragma: no cover - every LangChain install has it
        return json.loads(text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _page(text: str | bytes) -> DialoguePage:
    return DialoguePage.from_dict(_json(text))


def _record(text: str | bytes) -> MemoryRecord:
    return MemoryRecord.from_dict(_json(text))


def _texts(records: Mapping[str, Any]) -> dict[str, str]:
    """Every record's JSON text (kept as loaded when it was never decoded)."""
    out: dict[str, str] = {}
    for key in records:
        raw = records.raw(key) if isinstance(records, LazyRecords) else None
        out[key] = raw if raw is not None else json.dumps(records[key].to_dict(), separators=(",", ":"))
    return out


def snapshot_checksum(root: Sequence[str], label: str, version: str, body: bytes) -> str:
    """The SHA-256 (hex) that binds a snapshot's body to its scope root, user label and version stamp.

    A row moved to another user or scope, or given another version, no longer
    matches its checksum. (Anyone who can write the rows can compute it: see the module docstring.)

    Example:
        >>> a = snapshot_checksum(("memoryos",), "ana", "v1", b"body")
        >>> a == snapshot_checksum(("memoryos",), "bob", "v1", b"body"), len(a)
        (False, 64)
        >>> a == snapshot_checksum(("memoryos",), "ana", "v2", b"body")  # another version
        False
        >>> a == snapshot_checksum(("app", "%agent", "coach"), "ana", "v1", b"body")  # another scope
        False
    """
    digest = hashlib.sha256(json.dumps([FORMAT, list(root), label, version]).encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(body)
    return digest.hexdigest()


class SnapshotState(Protocol):
    """What a snapshot is taken of and restored into: a user's :class:`~langchain_memoryos.store.state.UserState`.

    Example:
        >>> from langchain_memoryos.store.state import UserState
        >>> state: SnapshotState = UserState(user_id="u", label="u", dimension=2)
        >>> empty = state.blank()
        >>> type(empty).__name__, empty.user_id, empty is state
        ('UserState', 'u', False)
    """

    user_id: str
    label: str
    dimension: int
    shared: bool
    root: tuple[str, ...]
    version: str | None
    meta: dict[str, Any]
    persona: Persona
    persona_stored: bool
    segments: dict[str, Segment]
    pages: MutableMapping[str, DialoguePage]
    facts: dict[str, MutableMapping[str, MemoryRecord]]
    stm: dict[str, list[DialoguePage]]
    indices: DerivedIndices

    @property
    def lexicon(self) -> LexicalIndex:
        """The user's BM25 index (built on first use)."""
        ...

    def blank(self) -> Self:
        """An empty state of the same user, scope and dimension."""
        ...


S = TypeVar("S", bound=SnapshotState)


def encode_snapshot(state: SnapshotState) -> dict[str, Any]:
    """The store value of a snapshot of ``state`` at ``state.version`` (its lexicon built if it was not).

    Example:
        >>> import numpy as np
        >>> from langchain_memoryos.store.state import UserState
        >>> s = UserState(user_id="u", label="u", dimension=2); s.version = "v1"
        >>> s.put_page(DialoguePage(id="p", user_input="pottery", agent_response=""), np.ones(2, np.float32))
        >>> value = encode_snapshot(s); value["version"], value["format"]
        ('v1', 3)
        >>> twin = decode_snapshot(value, s)
        >>> twin.pages["p"].user_input, len(twin.page_index), twin.indices.lexicon([]).bags().keys
        ('pottery', 1, ['p'])
    """
    ix = state.indices
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    header: dict[str, Any] = {
        "dimension": state.dimension,
        "meta": state.meta,
        "persona": state.persona.to_dict() if state.persona_stored else None,
        "segments": [s.to_dict() for s in state.segments.values()],
        "pages": list(state.pages),
        "facts": {kind: list(state.facts[kind]) for kind in ("user", "agent")},
        "stm": {thread: [p.to_dict() for p in pages] for thread, pages in state.stm.items() if pages},
        "vectors": {},
    }
    pages_stm: list[Vector] = []
    for name, index in _indices(state).items():
        keys, mat = index.arrays()
        header["vectors"][name] = keys
        if name in ("pages", "stm"):  # one block: the chain windows' matrix, restored as a view
            pages_stm.append(mat)
        else:
            arrays[f"v:{name}"] = mat
    arrays["v:pages+stm"] = np.concatenate(pages_stm)
    bags = state.lexicon.bags()
    header["lexicon"] = {"keys": bags.keys, "terms": bags.terms}
    arrays.update({"l:ptr": bags.ptr, "l:ids": bags.ids.astype(np.int32), "l:tfs": bags.tfs.astype(np.int32)})
    chain = ix.built_chain()
    header["chain"] = chain.snapshot() if chain is not None and set(chain.page_ids()) <= set(bags.keys) else None
    # the records' JSON texts end to end, in the order of the keys above, and where each starts
    texts = [*_texts(state.pages).values(), *(t for k in ("user", "agent") for t in _texts(state.facts[k]).values())]
    encoded = [t.encode("utf-8") for t in texts]
    arrays["t:offsets"] = np.concatenate(([0], np.cumsum([len(t) for t in encoded], dtype=np.int64)))
    body = _pack(header, arrays, {"texts": b"".join(encoded)})
    if state.version is None:
        raise InvalidInputError(
            "a snapshot is taken at a version stamp: the state has none (it is not in a shared store)"
        )
    return {
        "format": FORMAT,
        "version": state.version,
        "sha256": snapshot_checksum(state.root, state.label, state.version, body),
        "data": base64.b64encode(body).decode("ascii"),
    }


def _indices(state: SnapshotState) -> dict[str, VectorIndex]:
    """The state's FAISS indices by their name in a snapshot."""
    ix = state.indices
    return {"pages": ix.pages, "segments": ix.segments, "stm": ix.stm, **{f"facts/{k}": v for k, v in ix.facts.items()}}


def _zstd() -> Any:
    """The ``zstandard`` module, or ``None`` (it comes with LangSmith, which LangChain requires)."""
    try:
        import zstandard
    except ImportError:  # pragma: no cover - every LangChain install has it
        return None
    return zstandard


def _compress(data: bytes) -> bytes:
    """``data`` compressed, after a codec byte: ``s`` Zstandard (4 times faster to read than zlib), ``z`` zlib."""
    zstd = _zstd()
    if zstd is not None:
        return b"s" + zstd.ZstdCompressor(level=3).compress(data)  # type: ignore[no-any-return]
    return b"z" + zlib.compress(data, 1)


def _decompress(data: bytes | memoryview) -> bytes:
    """What :func:`_compress` compressed (``ValueError``: a codec this install cannot read, or a bad stream)."""
    codec, rest = bytes(data[:1]), data[1:]
    try:
        if codec == b"z":
            return zlib.decompress(rest)
        zstd = _zstd()
        if codec == b"s" and zstd is not None:
            return zstd.ZstdDecompressor().decompress(rest)  # type: ignore[no-any-return]
    except Exception as err:  # zlib.error, zstandard.ZstdError
        raise CorruptDataError(f"snapshot: {err}") from err
    raise CorruptDataError(
        f"snapshot compressed with {codec!r}, which this install cannot read (pip install zstandard)"
    )


def _pack(header: dict[str, Any], arrays: dict[str, np.ndarray[Any, Any]], blobs: dict[str, bytes]) -> bytes:
    """The body: magic, the header's length, the header (compressed JSON), the arrays' bytes, the blobs compressed."""
    specs: dict[str, list[Any]] = {}
    chunks: list[bytes] = []
    offset = 0
    parts: list[tuple[str, bytes, list[Any] | None]] = [
        (name, np.ascontiguousarray(arr).tobytes(), [arr.dtype.str, list(arr.shape)]) for name, arr in arrays.items()
    ]
    parts += [(name, _compress(blob), None) for name, blob in blobs.items()]
    for name, data, spec in parts:
        specs[name] = [spec, offset, len(data)]  # spec None: a blob
        chunks.append(data)
        offset += len(data)
    head = _compress(json.dumps({"header": header, "arrays": specs}, separators=(",", ":")).encode("utf-8"))
    return _MAGIC + len(head).to_bytes(8, "little") + head + b"".join(chunks)


def _unpack(body: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]], dict[str, bytes]]:
    """The header, the arrays (read-only views of ``body``) and the blobs (decompressed) of a body."""
    if not body.startswith(_MAGIC):
        raise CorruptDataError("not a snapshot")
    start = len(_MAGIC) + 8
    size = int.from_bytes(body[len(_MAGIC) : start], "little")
    parsed = _json(_decompress(body[start : start + size]))
    base = start + size
    view = memoryview(body)
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    blobs: dict[str, bytes] = {}
    for name, (spec, offset, length) in parsed["arrays"].items():
        raw = view[base + offset : base + offset + length]
        if len(raw) != length:
            raise CorruptDataError("truncated snapshot")
        if spec is None:
            blobs[name] = _decompress(raw)
        else:
            arrays[name] = np.frombuffer(raw, dtype=np.dtype(spec[0])).reshape(spec[1])
    return parsed["header"], arrays, blobs


def decode_snapshot(value: Any, like: S) -> S | None:
    """The state saved in a snapshot row, for the user of ``like`` (its ids and dimension); ``None`` if unusable.

    Unusable: not a snapshot of this format, another dimension, a checksum
    that does not match the body *and* ``like``'s scope root, label and the
    row's version (a torn or altered row, a row copied from another user or
    scope, a version edited: :func:`snapshot_checksum`), or contents that do
    not hold together. The caller then rebuilds the user from its records.

    Example:
        >>> from langchain_memoryos.store.state import UserState
        >>> like = UserState(user_id="u", label="u", dimension=2); like.version = "v1"
        >>> decode_snapshot({"format": FORMAT, "version": "v", "sha256": "0", "data": ""}, like) is None
        True
        >>> good = encode_snapshot(like)
        >>> old = good | {"format": 2}  # an older layout: never read as this one
        >>> decode_snapshot(old, like) is None, decode_snapshot(old | {"format": FORMAT}, like) is not None
        (True, True)
        >>> bob = UserState(user_id="bob", label="bob", dimension=2)
        >>> decode_snapshot(good, bob) is None  # misfiled: another user's row
        True
        >>> decode_snapshot(good | {"version": "v2"}, like) is None  # stale: restamped to another version
        True
    """
    if not isinstance(value, dict) or value.get("format") != FORMAT or not isinstance(value.get("data"), str):
        return None
    version, checksum = value.get("version"), value.get("sha256")
    if not isinstance(version, str) or not isinstance(checksum, str):
        return None
    try:
        body = binascii.a2b_base64(value["data"])  # a str of ASCII: no copy to bytes first
        if not hmac.compare_digest(snapshot_checksum(like.root, like.label, version, body), checksum):
            return None
        header, arrays, blobs = _unpack(body)
        if header["dimension"] != like.dimension:
            return None
        state = like.blank()
        state.version = version
        state.meta = dict(header["meta"])
        if header["persona"] is not None:
            state.persona = Persona.from_dict(header["persona"])
            state.persona_stored = True
        state.segments = {d["id"]: Segment.from_dict(d) for d in header["segments"]}
        keys = [header["pages"], header["facts"]["user"], header["facts"]["agent"]]
        offsets = arrays["t:offsets"]
        if len(offsets) != sum(map(len, keys)) + 1 or offsets[0] != 0 or offsets[-1] != len(blobs["texts"]):
            return None
        if bool(np.any(np.diff(offsets) < 0)):
            return None
        texts = Lines(blobs["texts"], offsets.tolist())
        cut = [0, len(keys[0]), len(keys[0]) + len(keys[1]), len(texts)]
        state.pages = LazyRecords(keys[0], texts[cut[0] : cut[1]], _page)
        state.facts = {
            kind: LazyRecords(keys[n + 1], texts[cut[n + 1] : cut[n + 2]], _record)
            for n, kind in enumerate(("user", "agent"))
        }
        for thread, pages in header["stm"].items():
            state.stm[thread] = [DialoguePage.from_dict(d) for d in pages]
        if not _restore_indices(state, header, arrays):
            return None
        return state
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _restore_indices(state: SnapshotState, header: dict[str, Any], arrays: dict[str, Any]) -> bool:
    """A snapshot's vector, lexical and chain indices restored into ``state`` (``False``: they do not fit it)."""
    ix = state.indices
    # the MTM then the STM pages' vectors, one read-only block (FAISS copies what it indexes)
    matrix = arrays["v:pages+stm"].astype(np.float32, copy=False)
    page_keys = [*header["vectors"]["pages"], *header["vectors"]["stm"]]
    if matrix.shape != (len(page_keys), state.dimension):
        return False
    cut_at = len(header["vectors"]["pages"])
    blocks = {"pages": matrix[:cut_at], "stm": matrix[cut_at:]}
    for name, index in _indices(state).items():
        keys = header["vectors"][name]
        if keys:
            index.add_many(keys, blocks[name] if name in blocks else arrays[f"v:{name}"])
    rows = dict(zip(page_keys, range(len(page_keys)), strict=True))
    ix.stm_vectors.update((key, matrix[rows[key]]) for key in ix.stm.keys())
    stm_ids = {p.id for pages in state.stm.values() for p in pages}
    if set(ix.pages.keys()) != set(state.pages) or set(ix.stm.keys()) != stm_ids:
        return False
    lex = header["lexicon"]
    bags = Bags(
        list(lex["keys"]),
        list(lex["terms"]),
        arrays["l:ptr"].astype(np.int64, copy=False),
        arrays["l:ids"].astype(np.int64),
        arrays["l:tfs"].astype(np.int64),
    )
    ix.restore(LexicalIndex.restore(bags))
    if header["chain"] is not None:
        ix.restore_chain(ChainWindows.restore(header["chain"], matrix, rows, bags))
    return True


def apply_changes(state: SnapshotState, changes: list[tuple[tuple[str, ...], str, Any]]) -> bool:
    """Bring a snapshot's state up to date: ``(namespace tail, key, current value or None)`` per changed record.

    Every changed record is first removed (from its records and indices),
    then put back from its current value, so a page that moved from STM to
    MTM in one flush is indexed once. Nothing is buffered for writing.

    Returns:
        ``False`` when a value cannot be applied (a record without a usable
        vector): the caller rebuilds the user from its records.

    Example:
        >>> import numpy as np
        >>> from langchain_memoryos.store.state import UserState
        >>> from langchain_memoryos.index.vector_index import encode_vector
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> row = DialoguePage(id="p", user_input="hi", agent_response="").to_dict()
        >>> row["vector"] = encode_vector([1.0, 0.0])
        >>> apply_changes(s, [(("pages",), "p", row)]), list(s.pages), len(s.page_index)
        (True, ['p'], 1)
        >>> apply_changes(s, [(("pages",), "p", None)]), list(s.pages), len(s.page_index)
        (True, [], 0)
    """
    ix = state.indices
    page_ids = list(dict.fromkeys(key for tail, key, _ in changes if tail[0] in ("pages", "stm")))
    for key in page_ids:  # first every changed page out, wherever it was
        state.pages.pop(key, None)
        for thread in state.stm.values():
            thread[:] = [p for p in thread if p.id != key]
        ix.stm_vectors.pop(key, None)
    ix.pages.remove(page_ids)
    ix.stm.remove(page_ids)
    ix.pages_removed(page_ids)
    return all(_apply_change(state, tail, key, value) for tail, key, value in changes)


def _usable_vector(value: Any, dimension: int) -> Vector | None:
    """A changed record's vector, or ``None`` when it is missing, malformed, of another size or not finite."""
    from langchain_memoryos.index.vector_index import decode_vector

    try:
        vec = decode_vector(str(value["vector"]))
    except (KeyError, ValueError, TypeError):
        return None
    return vec if vec.shape == (dimension,) and bool(np.all(np.isfinite(vec))) else None


def _apply_change(state: SnapshotState, tail: tuple[str, ...], key: str, value: Any) -> bool:
    """One changed record put back from its current value (``False``: it has no usable vector)."""
    ix = state.indices
    part = tail[0]
    if part == "meta":
        state.meta = dict(value) if isinstance(value, dict) else {}
    elif part == "persona":
        state.persona = Persona.from_dict(value) if isinstance(value, dict) else Persona()
        state.persona_stored = isinstance(value, dict)
    elif part == "segments":
        state.segments.pop(key, None)
        ix.segments.remove([key])
        if value is not None:
            vec = _usable_vector(value, state.dimension)
            if vec is None:
                return False
            state.segments[key] = Segment.from_dict(value)
            ix.segments.add(key, vec)
    elif part == "facts" and len(tail) == 2 and tail[1] in ("user", "agent"):
        state.facts[tail[1]].pop(key, None)
        ix.facts[tail[1]].remove([key])
        if value is not None:
            vec = _usable_vector(value, state.dimension)
            if vec is None:
                return False
            state.facts[tail[1]][key] = MemoryRecord.from_dict(value)
            ix.facts[tail[1]].add(key, vec)
    elif part in ("pages", "stm") and value is not None:
        vec = _usable_vector(value, state.dimension)
        if vec is None:
            return False
        page = DialoguePage.from_dict(value)
        if part == "pages":
            state.pages[key] = page
            ix.pages.add(key, vec)
        else:
            page.thread_id = page.thread_id if is_hash_label(tail[1]) else decode_label(tail[1])
            page.metadata.setdefault("_seq", int(value.get("seq", 0)))
            thread = state.stm.setdefault(page.thread_id, [])
            thread.append(page)
            thread.sort(key=lambda p: int(p.metadata.get("_seq", 0)))
            ix.stm.add(key, vec)
            ix.stm_vectors[key] = vec
        ix.page_added(page, vec)
    return True
