"""Dialogue pages (one exchange each) and the mid-term segments that group them."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_memoryos.schema.layout import decode_label, escape_id
from langchain_memoryos.schema.records import MemoryRecord
from langchain_memoryos.schema.timestamps import _EPOCH, _iso, _ts

__all__ = ["DialoguePage", "Segment", "page_in_turns", "split_speaker", "stored_thread", "turn_text_key"]


def _label(value: Any, default: str) -> str:
    text = " ".join(str(value).split()) if value is not None else ""
    return text or default


def _quote(text: str) -> str:
    return " ".join(text.split())


@dataclass
class DialoguePage:
    r"""One exchange: the user's input, the agent's response and its chain meta.

    Attributes:
        id: deterministic page key (same turn → same key).
        user_input: what the user said.
        agent_response: what the agent answered.
        timestamp: when the exchange happened (the conversation clock).
        thread_id: the conversation thread.
        meta: the dialogue-chain meta (summary of the linked chain so far).
        keywords: page keywords (set by the page's analysis, when it is added).
        metadata: free metadata given to ``add_turn`` (``source_id`` for provenance).
        segment_id: the MTM segment holding the page (``None`` while in STM).
        linked: whether the page continues the previous page's dialogue chain.
        candidates: the typed records read off the page when it was added; they went
            through the AMU write path then (the page keeps what was read off it).
        topic: the topic line of the page's analysis (a new segment's first summary);
            ``None`` while the page is not analysed (a page stored in STM before pages
            were analysed when added: it is analysed, and its facts written, as it leaves STM).

    Example:
        >>> p = DialoguePage(id="p1", user_input="Hi", agent_response="Hello")
        >>> p.text
        'User: Hi\nAssistant: Hello'
    """

    id: str
    user_input: str
    agent_response: str
    timestamp: _dt.datetime = field(default_factory=lambda: _EPOCH)
    thread_id: str = "default"
    meta: str = ""
    keywords: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    segment_id: str | None = None
    linked: bool = False
    candidates: list[MemoryRecord] = field(default_factory=list)
    topic: str | None = None

    @property
    def user_label(self) -> str:
        """Who speaks the user side: ``metadata["user_name"]`` when given, else ``"User"``.

        Example:
            >>> DialoguePage(id="p", user_input="a", agent_response="b", metadata={"user_name": "Ana"}).user_label
            'Ana'
        """
        return _label(self.metadata.get("user_name"), "User")

    @property
    def agent_label(self) -> str:
        """Who speaks the agent side: ``metadata["agent_name"]`` when given, else ``"Assistant"``.

        Example:
            >>> DialoguePage(id="p", user_input="a", agent_response="b").agent_label
            'Assistant'
        """
        return _label(self.metadata.get("agent_name"), "Assistant")

    @property
    def text(self) -> str:
        """The page as dialogue text, one line per side, with the speakers' labels.

        Example:
            >>> DialoguePage(id="p", user_input="a", agent_response="").text
            'User: a'
        """
        return "\n".join(self.lines())

    def lines(self) -> list[str]:
        """The page's lines as shown in a context: ``<label>: <text>`` per non-empty side.

        Example:
            >>> DialoguePage(id="p", user_input="I  paint.", agent_response="Nice!").lines()
            ['User: I paint.', 'Assistant: Nice!']
        """
        lines = [f"{self.user_label}: {_quote(self.user_input)}"] if self.user_input else []
        if self.agent_response:
            lines.append(f"{self.agent_label}: {_quote(self.agent_response)}")
        return lines

    @property
    def embedding_text(self) -> str:
        r"""What is embedded: both sides of the exchange; speaker names when the page has them.

        Without names the generic labels are left out (they carry nothing);
        with ``user_name`` / ``agent_name`` in the metadata each side is
        prefixed by its speaker, so "what did Ana say" meets Ana's words.

        Example:
            >>> DialoguePage(id="p", user_input="I run.", agent_response="Nice.").embedding_text
            'I run.\nNice.'
            >>> DialoguePage(id="p", user_input="I run.", agent_response="Nice.",
            ...              metadata={"user_name": "Ana", "agent_name": "Ben"}).embedding_text
            'Ana: I run.\nBen: Nice.'
        """
        if self.metadata.get("user_name") or self.metadata.get("agent_name"):
            return self.text
        return f"{self.user_input}\n{self.agent_response}" if self.agent_response else self.user_input

    def source_ids(self) -> list[str]:
        """The page's ``metadata["source_id"]`` values as a list, in the order stored, each once.

        Like ``MemoryContext.source_ids()`` (which sorts them), it is always a ``list[str]``.

        Example:
            >>> DialoguePage(id="p", user_input="a", agent_response="b",
            ...              metadata={"source_id": ["D1:1", "D1:2"]}).source_ids()
            ['D1:1', 'D1:2']
        """
        raw = self.metadata.get("source_id")
        if raw is None:
            return []
        if isinstance(raw, (list, tuple, set)):
            return list(dict.fromkeys(str(x) for x in raw))
        return [str(raw)]

    def to_dict(self) -> dict[str, Any]:
        """Serialise to JSON-compatible values.

        A thread id with NUL (which PostgreSQL's JSON cannot hold) is written
        with NUL shown as U+FFFD in ``thread_id`` and exactly, escaped, in
        ``thread_id_label`` (:func:`~langchain_memoryos.schema.layout.escape_id`).

        Example:
            >>> DialoguePage(id="p", user_input="a", agent_response="b").to_dict()["id"]
            'p'
            >>> value = DialoguePage(id="p", user_input="a", agent_response="", thread_id="t" + chr(0)).to_dict()
            >>> value["thread_id_label"], DialoguePage.from_dict(value).thread_id == "t" + chr(0)
            ('t%00', True)
        """
        out = {
            "id": self.id,
            "user_input": self.user_input,
            "agent_response": self.agent_response,
            "timestamp": _iso(self.timestamp),
            "thread_id": self.thread_id,
            "meta": self.meta,
            "keywords": list(self.keywords),
            "metadata": dict(self.metadata),
            "segment_id": self.segment_id,
            "linked": self.linked,
            "candidates": [c.to_dict() for c in self.candidates],
            "topic": self.topic,
        }
        if "\x00" in self.thread_id:
            out["thread_id"] = self.thread_id.replace("\x00", "\ufffd")
            out["thread_id_label"] = escape_id(self.thread_id)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DialoguePage:
        """Read a page written by :meth:`to_dict`.

        Example:
            >>> DialoguePage.from_dict({"id": "p", "user_input": "a", "agent_response": "b"}).thread_id
            'default'
        """
        return cls(
            id=str(data["id"]),
            user_input=str(data.get("user_input", "")),
            agent_response=str(data.get("agent_response", "")),
            timestamp=_ts(data.get("timestamp")),
            thread_id=stored_thread(data),
            meta=str(data.get("meta", "")),
            keywords=list(data.get("keywords", [])),
            metadata=dict(data.get("metadata", {})),
            segment_id=data.get("segment_id"),
            linked=bool(data.get("linked", False)),
            candidates=[MemoryRecord.from_dict(c) for c in data.get("candidates", [])],
            topic=None if data.get("topic") is None else str(data["topic"]),
        )


def stored_thread(data: Mapping[str, Any]) -> str:
    """The thread id of a stored page value: ``thread_id_label`` decoded when there is one, else ``thread_id``.

    Example:
        >>> stored_thread({"thread_id": "t"}), stored_thread({}), stored_thread({"thread_id_label": "a%2Eb"})
        ('t', 'default', 'a.b')
    """
    label = data.get("thread_id_label")
    if isinstance(label, str) and label:
        return decode_label(label)
    return str(data.get("thread_id", "default"))


@dataclass
class Segment:
    """A mid-term memory segment: pages of one topic, with heat.

    Attributes:
        id: segment key.
        summary: what the topic is about.
        keywords: the segment's keyword set (for the Jaccard term of F_score).
        page_ids: the pages of the segment, oldest first.
        n_visit: times the segment was hit at retrieval.
        l_interaction: pages added since the last promotion.
        last_access: creation or last retrieval (conversation clock); the
            paper's recency is the time since the last retrieval.
        heat: heat as of the last update (recomputed by the engine when needed).
        created_at: when the segment was created.
        pending_page_ids: pages not yet promoted to long-term memory.
        promotions: how many times the segment was promoted.

    Example:
        >>> s = Segment(id="s1", summary="hiking", keywords=["hiking"], page_ids=["p1"])
        >>> Segment.from_dict(s.to_dict()).page_ids
        ['p1']
    """

    id: str
    summary: str = ""
    keywords: list[str] = field(default_factory=list)
    page_ids: list[str] = field(default_factory=list)
    n_visit: int = 0
    l_interaction: int = 0
    last_access: _dt.datetime = field(default_factory=lambda: _EPOCH)
    heat: float = 0.0
    created_at: _dt.datetime = field(default_factory=lambda: _EPOCH)
    pending_page_ids: list[str] = field(default_factory=list)
    promotions: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Serialise to JSON-compatible values.

        Example:
            >>> Segment(id="s").to_dict()["n_visit"]
            0
        """
        return {
            "id": self.id,
            "summary": self.summary,
            "keywords": list(self.keywords),
            "page_ids": list(self.page_ids),
            "n_visit": self.n_visit,
            "l_interaction": self.l_interaction,
            "last_access": _iso(self.last_access),
            "heat": self.heat,
            "created_at": _iso(self.created_at),
            "pending_page_ids": list(self.pending_page_ids),
            "promotions": self.promotions,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Segment:
        """Read a segment written by :meth:`to_dict`.

        Example:
            >>> Segment.from_dict({"id": "s"}).heat
            0.0
        """
        return cls(
            id=str(data["id"]),
            summary=str(data.get("summary", "")),
            keywords=list(data.get("keywords", [])),
            page_ids=list(data.get("page_ids", [])),
            n_visit=int(data.get("n_visit", 0)),
            l_interaction=int(data.get("l_interaction", 0)),
            last_access=_ts(data.get("last_access")),
            heat=float(data.get("heat", 0.0)),
            created_at=_ts(data.get("created_at")),
            pending_page_ids=list(data.get("pending_page_ids", [])),
            promotions=int(data.get("promotions", 0)),
        )


#: A speaker prefix: "Ana:" or "Ana Lee:" at the start of a side's text ("Note:", "Remember:", "Forget:" … are no
#: speaker).
_SPEAKER_PREFIX = re.compile(
    r"^\s*(?!(?:Note|Notes|Remember|Reminder|Forget|Delete|Erase|Unlearn|Update|Correction|Important|Fyi|FYI|PS|Ps|"
    r"Edit|Btw|BTW|Also|Anyway|"
    r"Question|Answer|Fact|Warning|Tip|Summary|Context|Background|Info|Reason|Problem|Goal|Plan|Todo|TODO|News)"
    r"(?:\s[A-Z][\w'’-]{1,30})?:)"
    r"([A-Z][\w'’-]{1,30}(?:\s[A-Z][\w'’-]{1,30})?):\s+"
)


def split_speaker(text: str) -> tuple[str | None, str]:
    """The speaker prefix of a side and its text: ``("Caroline", "text")`` for ``"Caroline: text"``.

    Example:
        >>> split_speaker("Caroline: I went to a support group."), split_speaker("I'm vegan.")
        (('Caroline', 'I went to a support group.'), (None, "I'm vegan."))
        >>> split_speaker("Remember: my flight is on Friday."), split_speaker("Forget: I'm in debt.")
        ((None, 'Remember: my flight is on Friday.'), (None, "Forget: I'm in debt."))
    """
    m = _SPEAKER_PREFIX.match(text or "")
    if not m:
        return None, (text or "").strip()
    return m.group(1), text[m.end() :].strip()


def turn_text_key(user_input: str, agent_response: str) -> str:
    """The key a turn is known by from its two texts (beside its turn id): see :func:`page_in_turns`.

    Example:
        >>> turn_text_key("hi", "hello") == turn_text_key("hi", "hello"), turn_text_key("hi", "")[:5]
        (True, 'text:')
    """
    return f"text:{user_input}\x1f{agent_response}"


def page_in_turns(page: DialoguePage, keys: frozenset[str]) -> bool:
    """Whether the page's turn is one of ``keys``: its turn id (``metadata["turn_id"]``) or its two texts.

    ``keys`` come from messages the model already gets
    (:func:`~langchain_memoryos.schema.messages.turn_keys`).

    Example:
        >>> keys = frozenset({turn_text_key("hi", "hello"), "lg:h1:a1"})
        >>> page_in_turns(DialoguePage(id="p", user_input="hi", agent_response="hello"), keys)
        True
        >>> page_in_turns(DialoguePage(id="q", user_input="hey", agent_response="yo", metadata={"turn_id": "lg:h1:a1"}),
        ...               keys)
        True
        >>> page_in_turns(DialoguePage(id="r", user_input="hi", agent_response="bye"), keys)
        False
    """
    if not keys:
        return False
    turn_id = page.metadata.get("turn_id") if isinstance(page.metadata, Mapping) else None
    return turn_id in keys or turn_text_key(page.user_input, page.agent_response) in keys
