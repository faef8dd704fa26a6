"""Windows of the dialogue chain: 2- and 3-page spans of one thread, ranked as units.

A question's words are often spread over neighbouring exchanges — the
question in one turn, the answer in the next page, the name two pages back —
so no single page matches it well while the span they form does. Every run
of 2 and 3 consecutive pages of one thread, no more than ``gap_seconds``
apart (one session), is therefore indexed as a *window*: BM25 over the
members' joined tokens and the normalised sum of their vectors (no extra
encoding). At query time the windows are ranked by the same reciprocal-rank
fusion as pages, and each page gets the best fused score of a window that
holds it (:meth:`ChainWindows.scores`), which the read path adds to the page's
own score (``MemoryOSConfig.chain_weights``).

On the five LoCoMo dev conversations this lifts evidence recall at 1,000 words
by about 5 points over the flat hybrid ranking of the same pages, on every
ingestion protocol, with the weights chosen by leave-one-conversation-out
cross-validation (docs/research.md). Appending a hit's
neighbours after it gains nothing: ranking the spans as units does.

The windows are a derived cache (:class:`~langchain_memoryos.store.indices.DerivedIndices`):
built from the pages on first use and then kept in step with every page added
or removed. A thread's order is the pages' sequence numbers (``metadata["_seq"]``,
given when the page entered STM); a page removed (evicted, deleted) closes the
gap, so its neighbours form a window if they are close enough in time.
"""

from __future__ import annotations

import bisect
import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from langchain_memoryos.errors import CorruptDataError
from langchain_memoryos.index.lexical import Bags, LexicalIndex, page_tokens, rrf_scores
from langchain_memoryos.index.vector_index import Vector, VectorIndex
from langchain_memoryos.schema import DialoguePage

__all__ = ["WINDOW_SIZES", "ChainWindows", "chain_order"]

#: The window lengths, in pages.
WINDOW_SIZES: tuple[int, ...] = (2, 3)

_OrderKey = tuple[int, str, str]


def chain_order(page: DialoguePage) -> _OrderKey:
    """Where a page stands in its thread's chain: its sequence number, then its time and id.

    Pages without a sequence number (imported or repaired) come first, by time.

    Example:
        >>> import datetime as dt
        >>> a = DialoguePage(id="a", user_input="", agent_response="", metadata={"_seq": 2})
        >>> b = DialoguePage(id="b", user_input="", agent_response="", metadata={"_seq": 1})
        >>> [p.id for p in sorted([a, b], key=chain_order)]
        ['b', 'a']
    """
    seq = page.metadata.get("_seq")
    return (int(seq) if isinstance(seq, int) and not isinstance(seq, bool) else -1, page.timestamp.isoformat(), page.id)


@dataclass(slots=True)
class _Node:
    thread_id: str
    order: _OrderKey
    timestamp: _dt.datetime
    tokens: list[str] | None  # None: restored, the words are in the chain's bags
    vector: Vector


class ChainWindows:
    """The 2- and 3-page windows of every thread's dialogue chain, with their FAISS and BM25 indices.

    Args:
        dimension: the embedding dimension.
        gap_seconds: the longest pause between two consecutive pages of a window.

    Example:
        >>> import datetime as dt, numpy as np
        >>> from langchain_memoryos.index.lexical import tokenize
        >>> day = dt.datetime(2023, 5, 8, tzinfo=dt.UTC)
        >>> pages = [DialoguePage(id=f"p{i}", user_input=text, agent_response="", timestamp=day,
        ...                       metadata={"_seq": i}) for i, text in enumerate(
        ...          ["Where did you go?", "To Oslo, for the fjords.", "Lovely. Any plans?"])]
        >>> w = ChainWindows(2, gap_seconds=1800)
        >>> for page in pages:
        ...     w.add(page, np.array([1.0, 0.0], dtype=np.float32))
        >>> w.members(2, "p1"), w.members(3, "p2")
        (('p0', 'p1'), ('p0', 'p1', 'p2'))
        >>> lexical_only = (0.0, 1.0)
        >>> best = w.scores(np.zeros(2, dtype=np.float32), tokenize("fjords"), depth=10, k=10, weights=lexical_only)
        >>> sorted(best[2])  # "Where did you go?" lacks the word, but its window with the answer has it
        ['p0', 'p1', 'p2']
    """

    def __init__(self, dimension: int, *, gap_seconds: float) -> None:
        self.dimension = dimension
        self.gap_seconds = float(gap_seconds)
        self._node_map: dict[str, _Node] = {}
        self._order_map: dict[str, list[tuple[_OrderKey, str]]] = {}
        # restored, the nodes and threads are built on first need: (what :meth:`snapshot` saved, vectors, rows)
        self._pending: tuple[Mapping[str, Any], Vector, Mapping[str, int]] | None = None
        self._vectors = {size: VectorIndex(dimension) for size in WINDOW_SIZES}
        self._lexicons = {size: LexicalIndex() for size in WINDOW_SIZES}
        self._members: dict[int, dict[str, tuple[str, ...]]] = {size: {} for size in WINDOW_SIZES}
        self._bags: Bags | None = None
        self._bag_rows: dict[str, int] = {}

    @property
    def _nodes(self) -> dict[str, _Node]:
        """Every page's node (built now if the chain was restored and they are not built yet)."""
        if self._pending is not None:
            self._materialize()
        return self._node_map

    @property
    def _order(self) -> dict[str, list[tuple[_OrderKey, str]]]:
        """Every thread's chain: ``(order key, page id)`` in order (built now if restored and not built yet)."""
        if self._pending is not None:
            self._materialize()
        return self._order_map

    def _materialize(self) -> None:
        """Build the nodes and threads of a restored chain (the first change to it needs them)."""
        assert self._pending is not None
        data, vectors, rows = self._pending
        self._pending = None
        parse = _dt.datetime.fromisoformat
        names: list[str] = data["threads"]
        for t, pid, seq, iso in zip(data["thread"], data["pids"], data["seq"], data["time"], strict=True):
            order = (seq, iso, pid)
            self._node_map[pid] = _Node(names[t], order, parse(iso), None, vectors[rows[pid]])
            self._order_map.setdefault(names[t], []).append((order, pid))
        for chain in self._order_map.values():
            chain.sort()  # saved in order: a check that costs one pass

    def snapshot(self) -> dict[str, Any]:
        """The chain as JSON data for :meth:`restore` (its pages' words and vectors are saved elsewhere).

        The pages are saved thread by thread in chain order, as columns (a
        page id, its thread's number, sequence number and time each), and a
        window as the position of its last page: a thread's run of pages that
        ends there.

        Example:
            >>> import numpy as np
            >>> w = ChainWindows(2, gap_seconds=60)
            >>> for i in "abc":
            ...     w.add(DialoguePage(id=i, user_input="x", agent_response=""), np.ones(2, dtype=np.float32))
            >>> data = w.snapshot(); data["pids"], data["windows"]  # windows (a, b), (b, c) and (a, b, c)
            (['a', 'b', 'c'], {'2': [1, 2], '3': [2]})
        """
        pids: list[str] = []
        thread: list[int] = []
        seq: list[int] = []
        time: list[str] = []
        for t, chain in enumerate(self._order.values()):
            for order, pid in chain:
                pids.append(pid)
                thread.append(t)
                seq.append(order[0])
                time.append(order[1])
        at = dict(zip(pids, range(len(pids)), strict=True))
        return {
            "gap_seconds": self.gap_seconds,
            "threads": list(self._order),
            "pids": pids,
            "thread": thread,
            "seq": seq,
            "time": time,
            # in the order the windows were indexed (FAISS and BM25 break ties by it)
            "windows": {str(size): [at[last] for last in self._members[size]] for size in WINDOW_SIZES},
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any], vectors: Vector, rows: Mapping[str, int], bags: Bags) -> ChainWindows:
        """The chain saved by :meth:`snapshot`, given its pages' vectors and words.

        The windows' vectors and BM25 indices are computed in bulk, as
        :meth:`build` would compute them one by one (the BM25 documents as
        :meth:`Bags.joined` rows: no merging sort). The per-page nodes (a
        parsed time and a vector view each) are built on the first change to
        the chain, not here: a read needs only the windows.

        Args:
            data: what :meth:`snapshot` returned.
            vectors: a matrix holding every page's vector.
            rows: each page's row in ``vectors``.
            bags: every page's words, one row per page (keyed by page id).

        Raises:
            KeyError: a page of the chain without a vector or a bag.

        Example:
            >>> import numpy as np
            >>> from langchain_memoryos.index.lexical import tokenize
            >>> w = ChainWindows(2, gap_seconds=60); ix = LexicalIndex()
            >>> for i, text in (("a", "Where to?"), ("b", "Oslo, for the fjords")):
            ...     page = DialoguePage(id=i, user_input=text, agent_response="")
            ...     w.add(page, np.ones(2, dtype=np.float32)); ix.add(i, page_tokens(page))
            >>> twin = ChainWindows.restore(w.snapshot(), np.ones((2, 2), np.float32), {"a": 0, "b": 1}, ix.bags())
            >>> q = (np.ones(2, dtype=np.float32), tokenize("fjords"))
            >>> twin.scores(*q, depth=5, k=10) == w.scores(*q, depth=5, k=10)
            True
        """
        dimension = int(vectors.shape[1])
        chain = cls(dimension, gap_seconds=float(data["gap_seconds"]))
        bag_rows = dict(zip(bags.keys, range(len(bags.keys)), strict=True))
        chain._bags, chain._bag_rows = bags, bag_rows
        pids: list[str] = data["pids"]
        n = len(pids)
        thread = np.asarray(data["thread"], dtype=np.int64)
        if thread.shape != (n,) or len(data["seq"]) != n or len(data["time"]) != n:
            raise CorruptDataError("chain snapshot: columns of different lengths")
        heads = np.flatnonzero(np.diff(thread, prepend=-1))  # where each thread's chain starts
        if len(heads) != len(data["threads"]) or not np.array_equal(thread[heads], np.arange(len(heads))):
            raise CorruptDataError("chain snapshot: the pages are not grouped by thread")
        starts = np.repeat(heads, np.diff(np.append(heads, n)))  # the start of each position's thread
        # the nodes themselves (a parsed time, a vector view each) wait for a change to the chain: a read needs none
        chain._pending = (data, vectors, rows)
        page_row = np.fromiter((rows[pid] for pid in pids), dtype=np.int64, count=n)
        word_row = np.fromiter((bag_rows[pid] for pid in pids), dtype=np.int64, count=n)  # KeyError: no bag
        for size in WINDOW_SIZES:
            ends = np.asarray(data["windows"][str(size)], dtype=np.int64)
            if not ends.size:
                continue
            if ends.min() < 0 or ends.max() >= n or bool(np.any(ends - starts[ends] < size - 1)):
                raise KeyError(f"a window of {size} pages that is not a run of its thread's chain")
            last = ends.tolist()
            keys = [pids[e] for e in last]
            chain._members[size] = {pids[e]: tuple(pids[e - size + 1 : e + 1]) for e in last}
            cols = ends[:, None] + np.arange(1 - size, 1, dtype=np.int64)
            summed = vectors[page_row[cols[:, 0]]]  # a new array (gathered): summed in place
            for col in range(1, size):
                summed += vectors[page_row[cols[:, col]]]
            summed /= np.maximum(np.linalg.norm(summed, axis=1, keepdims=True), np.float32(1e-12))
            chain._vectors[size].add_many(keys, summed)
            chain._lexicons[size] = LexicalIndex.restore(bags.joined(keys, word_row[cols]))
        return chain

    def _tokens(self, pid: str) -> list[str]:
        node = self._nodes[pid]
        if node.tokens is None:
            assert self._bags is not None
            node.tokens = list(self._bags.counts(self._bag_rows[pid]).elements())
        return node.tokens

    def __len__(self) -> int:
        return sum(len(m) for m in self._members.values())

    def __contains__(self, page_id: object) -> bool:
        return page_id in self._nodes

    def page_ids(self) -> list[str]:
        """The pages of the chain.

        Example:
            >>> ChainWindows(2, gap_seconds=60).page_ids()
            []
        """
        return list(self._nodes)

    def members(self, size: int, last_page_id: str) -> tuple[str, ...] | None:
        """The pages of the ``size``-page window that ends at ``last_page_id`` (``None``: no such window).

        Example:
            >>> ChainWindows(2, gap_seconds=60).members(2, "p") is None
            True
        """
        return self._members[size].get(last_page_id)

    # -- building and keeping in step ----------------------------------------
    def build(self, pages: Iterable[tuple[DialoguePage, Vector]]) -> None:
        """Index many pages at once (the first use of a loaded user's cache).

        Example:
            >>> import numpy as np
            >>> w = ChainWindows(2, gap_seconds=60)
            >>> w.build([(DialoguePage(id=i, user_input="x", agent_response="", metadata={"_seq": n}),
            ...           np.ones(2, dtype=np.float32)) for n, i in enumerate("abc")])
            >>> len(w)  # (a, b), (b, c) and (a, b, c)
            3
        """
        touched: set[str] = set()
        for page, vector in pages:
            if page.id in self._nodes:
                continue
            node = self._node(page, vector)
            self._nodes[page.id] = node
            self._order.setdefault(node.thread_id, []).append((node.order, page.id))
            touched.add(node.thread_id)
        for thread in touched:
            chain = self._order[thread]
            chain.sort()
            self._refresh(thread, range(len(chain)))

    def add(self, page: DialoguePage, vector: Vector, tokens: list[str] | None = None) -> None:
        """Add a page to its thread's chain (nothing if it is already there); ``tokens``: its :func:`page_tokens`.

        Example:
            >>> import numpy as np
            >>> w = ChainWindows(2, gap_seconds=60)
            >>> for i in "ab":
            ...     w.add(DialoguePage(id=i, user_input="x", agent_response=""), np.ones(2, dtype=np.float32))
            >>> w.members(2, "b")
            ('a', 'b')
        """
        if page.id in self._nodes:
            return
        node = self._node(page, vector, tokens)
        self._nodes[page.id] = node
        chain = self._order.setdefault(node.thread_id, [])
        at = bisect.bisect(chain, (node.order, page.id))
        chain.insert(at, (node.order, page.id))
        # the windows ending at the new page and at the two after it change
        self._refresh(node.thread_id, range(at, min(at + 3, len(chain))))

    def remove(self, page_ids: Iterable[str]) -> None:
        """Drop pages; the windows that held them go, and their neighbours close the gap.

        Example:
            >>> import numpy as np
            >>> w = ChainWindows(2, gap_seconds=60)
            >>> for i in "abc":
            ...     w.add(DialoguePage(id=i, user_input="x", agent_response=""), np.ones(2, dtype=np.float32))
            >>> w.remove(["b"]); w.members(2, "c"), w.members(3, "c")
            (('a', 'c'), None)
        """
        gone = {pid for pid in page_ids if pid in self._nodes}
        if not gone:
            return
        for size in WINDOW_SIZES:
            self._drop(size, [pid for pid in gone if pid in self._members[size]])
        for thread in {self._nodes[pid].thread_id for pid in gone}:
            # the (up to) two pages after a removed one now end different windows
            kept: list[tuple[_OrderKey, str]] = []
            affected: list[int] = []
            pending = 0
            for key, pid in self._order[thread]:
                if pid in gone:
                    pending = 2
                    continue
                if pending:
                    affected.append(len(kept))
                    pending -= 1
                kept.append((key, pid))
            if kept:
                self._order[thread] = kept
                self._refresh(thread, affected)
            else:
                del self._order[thread]
        for pid in gone:
            del self._nodes[pid]

    def _node(self, page: DialoguePage, vector: Vector, tokens: list[str] | None = None) -> _Node:
        words = page_tokens(page) if tokens is None else tokens
        return _Node(page.thread_id, chain_order(page), page.timestamp, words, np.asarray(vector))

    def _refresh(self, thread: str, ends: Sequence[int]) -> None:
        """Recompute the windows that end at the chain positions ``ends`` of one thread."""
        if not ends:
            return
        order = self._order[thread]
        for size in WINDOW_SIZES:
            put: dict[str, tuple[str, ...]] = {}
            drop: list[str] = []
            for at in ends:
                last = order[at][1]
                members = tuple(pid for _, pid in order[at - size + 1 : at + 1]) if at >= size - 1 else ()
                if members and self._chained(members):
                    if self._members[size].get(last) != members:
                        put[last] = members
                elif last in self._members[size]:
                    drop.append(last)
            self._drop(size, drop)
            if put:
                self._put(size, put)

    def _chained(self, members: tuple[str, ...]) -> bool:
        nodes = [self._nodes[pid] for pid in members]
        return all(
            abs((b.timestamp - a.timestamp).total_seconds()) <= self.gap_seconds
            for a, b in zip(nodes, nodes[1:], strict=False)
        )

    def _put(self, size: int, windows: dict[str, tuple[str, ...]]) -> None:
        keys = list(windows)
        vectors = np.stack([np.sum([self._nodes[pid].vector for pid in windows[key]], axis=0) for key in keys])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
        self._vectors[size].add_many(keys, vectors)
        for key in keys:
            members = windows[key]
            self._members[size][key] = members
            self._lexicons[size].add(key, [t for pid in members for t in self._tokens(pid)])

    def _drop(self, size: int, keys: list[str]) -> None:
        if not keys:
            return
        self._vectors[size].remove(keys)
        self._lexicons[size].remove(keys)
        for key in keys:
            self._members[size].pop(key, None)

    # -- query -----------------------------------------------------------------
    def scores(
        self,
        query_vector: Vector,
        query_tokens: Sequence[str],
        *,
        depth: int,
        k: float,
        weights: Sequence[float] = (1.0, 1.0),
    ) -> dict[int, dict[str, float]]:
        """Per window size, each page's best fused window score (pages in no ranked window are absent).

        Args:
            query_vector: the query's embedding.
            query_tokens: the query's BM25 tokens.
            depth: how deep each ranking (dense, BM25) of the windows looks.
            k: the fusion's rank offset.
            weights: the dense and BM25 weights of the fusion.

        Example:
            >>> import numpy as np
            >>> ChainWindows(2, gap_seconds=60).scores(np.ones(2, dtype=np.float32), ["x"], depth=5, k=10)
            {2: {}, 3: {}}
        """
        out: dict[int, dict[str, float]] = {}
        for size in WINDOW_SIZES:
            best: dict[str, float] = {}
            if self._members[size]:
                dense = [key for key, _ in self._vectors[size].search(query_vector, depth)] if weights[0] > 0 else []
                lexical = (
                    [key for key, _ in self._lexicons[size].search(query_tokens, depth)]
                    if weights[1] > 0 and query_tokens
                    else []
                )
                members = self._members[size]
                for key, score in rrf_scores([dense, lexical], k=k, weights=weights).items():
                    for pid in members[key]:
                        if score > best.get(pid, 0.0):
                            best[pid] = score
            out[size] = best
        return out
