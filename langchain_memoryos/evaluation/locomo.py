"""LoCoMo files: turns, evidence ids, session dates, and the two ways of feeding a conversation.

LoCoMo (Maharana et al., ACL 2024) conversations are between two people. Two
pairings of turns into ``add_turn(user_input, agent_response)`` pages:

* the *harness* (:func:`conversation_pages`, :func:`ingest_conversation`):
  speaker_a as the user, speaker_b as the agent, the names as metadata, one
  minute per page from the session date; an unpaired turn still becomes a page;
* the *plain* public API (:func:`plain_pages`, :func:`ingest_plain`): turns paired
  by position in each session (1+2, 3+4, …), each side written ``"Name: text"``,
  one timestamp per session, nothing but the ``source_id`` as metadata — as an
  application that knows nothing of LoCoMo would feed it.

Both keep the ``dia_id`` of a page's turns as its ``source_id``.
The file's quirks are handled here: session date keys without a session,
malformed evidence ids (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_memoryos.errors import InvalidInputError

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = [
    "LocomoPage",
    "LocomoQuestion",
    "LocomoTurn",
    "conversation_pages",
    "load_questions",
    "cited_turns",
    "ingest_conversation",
    "ingest_plain",
    "plain_pages",
    "plain_turn",
    "iter_locomo_turns",
    "load_locomo",
    "normalize_evidence",
    "session_dates",
    "session_turns",
]

_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


@dataclass(frozen=True)
class LocomoTurn:
    """One turn of a LoCoMo conversation.

    Attributes:
        sample_id: the conversation (``conv-26`` …).
        dia_id: the turn id (``D3:4``).
        speaker: who said it.
        text: what was said (an image caption, if any, is kept apart).
        caption: the caption of a shared image ("" when none).

    Example:
        >>> turn = LocomoTurn("conv-1", "D1:1", "Ana", "Look!", "a photo of a fjord")
        >>> turn.text = "Bye"
        Traceback (most recent call last):
        ...
        dataclasses.FrozenInstanceError: cannot assign to field 'text'
    """

    sample_id: str
    dia_id: str
    speaker: str
    text: str
    caption: str


def normalize_evidence(raw: Any) -> list[str]:
    """Turn ids from LoCoMo evidence, including its malformed forms.

    Handles ``"D8:6; D9:17"`` (two ids in one string), ``"D:11:26"`` and
    ``"D30:05"`` (leading zero).

    Example:
        >>> normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05"])
        ['D8:6', 'D9:17', 'D11:26', 'D30:5']
    """
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        for session, turn in _EVIDENCE.findall(str(item)):
            out.append(f"D{int(session)}:{int(turn)}")
    return out


def load_locomo(path: str | Path) -> list[dict[str, Any]]:
    """The conversations of a LoCoMo file (``locomo10.json`` format).

    Raises:
        ValueError: the file is not a JSON list.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = Path(tmp) / "locomo.json"
        ...     _ = path.write_text(json.dumps([{"sample_id": "c1", "conversation": {}, "qa": []}]))
        ...     print([s["sample_id"] for s in load_locomo(path)])
        ...     _ = path.write_text("{}")
        ...     try:
        ...         load_locomo(path)
        ...     except ValueError as err:
        ...         print(str(err).replace(str(path), "locomo.json"))
        ['c1']
        locomo.json: not a LoCoMo file (a JSON list of conversations expected)
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise InvalidInputError(f"{path}: not a LoCoMo file (a JSON list of conversations expected)")
    return data


def _session_date(raw: Any) -> _dt.datetime | None:
    text = " ".join(str(raw or "").split())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%d %B %Y"):
        try:
            return _dt.datetime.strptime(text, fmt).replace(tzinfo=_dt.UTC)
        except ValueError:
            continue
    return None


def session_turns(sample: Mapping[str, Any]) -> list[tuple[_dt.datetime | None, list[dict[str, Any]]]]:
    """``(session date, turns)`` per session, in session order; dates without a session are skipped.

    Example:
        >>> sample = {"conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023",
        ...           "session_2_date_time": "x", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "Hi"}]}}
        >>> [(d.date().isoformat(), len(t)) for d, t in session_turns(sample)]
        [('2023-05-08', 1)]
    """
    return [session for _, session in _numbered_sessions(sample)]


def session_dates(sample: Mapping[str, Any]) -> dict[int, _dt.datetime]:
    """Each session's date by its number; a session whose date does not parse is left out.

    Example:
        >>> sample = {"conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "x",
        ...           "session_1": [], "session_2": []}}
        >>> {n: d.date().isoformat() for n, d in session_dates(sample).items()}
        {1: '2023-05-08'}
    """
    return {n: when for n, (when, _) in _numbered_sessions(sample) if when is not None}


def _numbered_sessions(
    sample: Mapping[str, Any],
) -> list[tuple[int, tuple[_dt.datetime | None, list[dict[str, Any]]]]]:
    conv = sample["conversation"]
    keys = sorted(
        (int(k.split("_")[1]), k) for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)
    )
    return [(n, (_session_date(conv.get(f"{key}_date_time")), list(conv[key]))) for n, key in keys]


def iter_locomo_turns(path: str | Path) -> Iterator[LocomoTurn]:
    """Every turn of every conversation of a LoCoMo file, in order.

    Example:
        >>> import tempfile
        >>> sample = {"sample_id": "c1", "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023",
        ...     "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Oslo."},
        ...                   {"speaker": "Ben", "dia_id": "D1:02", "text": "Look!", "blip_caption": "a fjord"}]}}
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = Path(tmp) / "locomo.json"
        ...     _ = path.write_text(json.dumps([sample]))
        ...     [(t.dia_id, t.speaker, t.text, t.caption) for t in iter_locomo_turns(path)]
        [('D1:1', 'Ana', 'I moved to Oslo.', ''), ('D1:2', 'Ben', 'Look!', 'a fjord')]
    """
    for sample in load_locomo(path):
        for _, turns in session_turns(sample):
            for turn in turns:
                ids = normalize_evidence(turn.get("dia_id", ""))
                yield LocomoTurn(
                    sample_id=str(sample.get("sample_id", "")),
                    dia_id=ids[0] if ids else "",
                    speaker=str(turn.get("speaker", "")),
                    text=str(turn.get("text", "")),
                    caption=str(turn.get("blip_caption", "") or ""),
                )


def cited_turns(path: str | Path) -> set[tuple[str, str]]:
    """``(sample_id, dia_id)`` of every turn that any question cites as evidence.

    Example:
        >>> import tempfile
        >>> sample = {"sample_id": "c1", "conversation": {}, "qa": [
        ...     {"question": "Where does Ana live?", "evidence": ["D1:1; D1:2"], "category": 4},
        ...     {"question": "When did she move?", "evidence": ["D:1:1"], "category": 2}]}
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = Path(tmp) / "locomo.json"
        ...     _ = path.write_text(json.dumps([sample]))
        ...     sorted(cited_turns(path))
        [('c1', 'D1:1'), ('c1', 'D1:2')]
    """
    return {
        (str(sample.get("sample_id", "")), dia)
        for sample in load_locomo(path)
        for qa in sample.get("qa", [])
        for dia in normalize_evidence(qa.get("evidence", []))
    }


def ingest_conversation(
    memory: MemoryOS,
    sample: Mapping[str, Any],
    *,
    user_id: str,
    thread_id: str = "locomo",
    on_page: Callable[[], object] | None = None,
) -> int:
    """Feed one conversation into ``memory`` by the ingestion protocol; return the pages added.

    The pages are those of :func:`conversation_pages`: a speaker_a turn
    followed by a speaker_b turn is one page; any other turn (two speaker_a
    turns in a row, a session that opens with speaker_b) is a page of its own,
    so no turn is dropped or overwritten. Turns are one minute apart from the
    session date. The pages are stored with ``memory.add_turns`` (the same
    result as ``add_turn`` page by page). The speakers' names go with each page (``user_name`` /
    ``agent_name`` metadata), so the memory shows and matches "Ana:" rather
    than "User:". ``on_page`` is called after each page (for progress bars).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B",
        ...     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
        ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi A"},
        ...     {"speaker": "A", "dia_id": "D1:2", "text": "I moved to Oslo."},
        ...     {"speaker": "B", "dia_id": "D1:3", "text": "Nice!"}]}}
        >>> m = MemoryOS(); ingest_conversation(m, sample, user_id="a")
        2
        >>> sorted(m.retrieve("Where does A live?", user_id="a", thread_id="locomo").source_ids())
        ['D1:1', 'D1:2', 'D1:3']
    """
    turns = [
        {
            "user_input": page.user_input,
            "agent_response": page.agent_response,
            "timestamp": page.timestamp,
            "metadata": {
                "source_id": list(page.dia_ids),
                "user_name": page.user_speaker,
                "agent_name": page.agent_speaker,
            },
            "turn_id": "+".join(page.dia_ids) or None,
        }
        for page in conversation_pages(sample)
    ]
    return _add_in_batches(memory, turns, user_id, thread_id, on_page)


#: Pages per ``add_turns`` call of the ingestion (progress is reported after each).
INGEST_BATCH = 256


def _add_in_batches(
    memory: MemoryOS,
    turns: list[dict[str, Any]],
    user_id: str,
    thread_id: str,
    on_page: Callable[[], object] | None,
) -> int:
    """``memory.add_turns`` over the turns in batches (the same result as ``add_turn`` one by one); pages added."""
    added = 0
    for start in range(0, len(turns), INGEST_BATCH):
        reports = memory.add_turns(turns[start : start + INGEST_BATCH], user_id=user_id, thread_id=thread_id)
        added += sum(r.added for r in reports)
        if on_page is not None:
            for _ in reports:
                on_page()
    return added


@dataclass(frozen=True)
class LocomoPage:
    """One page: two turns of a session (or a lone turn), as the memory stores it and the baselines rank it.

    Attributes:
        user_input: the first side's text ("" when the page is a lone second-side turn).
        agent_response: the second side's text ("" when unanswered).
        user_speaker: who says ``user_input`` (speaker_a in the harness).
        agent_speaker: who says ``agent_response`` (speaker_b in the harness).
        dia_ids: the dia ids of the page's turns, in order.
        timestamp: the page's time (harness: the session date plus one minute per
            page; plain: the session date).
        session: the session number.

    Example:
        >>> import datetime as dt
        >>> p = LocomoPage("I moved.", "Nice!", "Ana", "Ben", ("D1:1", "D1:2"), dt.datetime(2023, 5, 8), 1)
        >>> p.text()
        '[8 May 2023] Ana: I moved. Ben: Nice!'
    """

    user_input: str
    agent_response: str
    user_speaker: str
    agent_speaker: str
    dia_ids: tuple[str, ...]
    timestamp: _dt.datetime
    session: int

    def text(self) -> str:
        """The page as the flat baselines index and show it: session date, then who said what."""
        parts = [f"[{self.timestamp.day} {self.timestamp:%B %Y}]"]
        if self.user_input:
            parts.append(f"{self.user_speaker}: {self.user_input}")
        if self.agent_response:
            parts.append(f"{self.agent_speaker}: {self.agent_response}")
        return " ".join(parts)


def conversation_pages(sample: Mapping[str, Any]) -> list[LocomoPage]:
    """The pages of one conversation by the harness's ingestion protocol.

    Every turn lands in exactly one page, in order. A session without a
    parsable date starts one day after the previous page (2023-01-01 for the
    first).

    Example:
        >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B",
        ...     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
        ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi A"},
        ...     {"speaker": "A", "dia_id": "D1:2", "text": "I moved to Oslo."},
        ...     {"speaker": "B", "dia_id": "D1:3", "text": "Nice!"}]}}
        >>> [p.dia_ids for p in conversation_pages(sample)]
        [('D1:1',), ('D1:2', 'D1:3')]
    """
    conv = sample["conversation"]
    speaker_a, speaker_b = str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))
    pages: list[LocomoPage] = []
    clock: _dt.datetime | None = None
    for number, (date, turns) in _numbered_sessions(sample):
        start = date or (clock + _dt.timedelta(days=1) if clock else _dt.datetime(2023, 1, 1, tzinfo=_dt.UTC))
        for minute, group in enumerate(_pair_turns(turns, speaker_a)):
            clock = start + _dt.timedelta(minutes=minute)
            first, second = group[0], group[1] if len(group) > 1 else None
            from_a = first.get("speaker") == speaker_a
            pages.append(
                LocomoPage(
                    user_input=_turn_text(first) if from_a else "",
                    agent_response=_turn_text(second) if second is not None else ("" if from_a else _turn_text(first)),
                    user_speaker=speaker_a,
                    agent_speaker=speaker_b,
                    dia_ids=tuple(d for t in group for d in normalize_evidence(t.get("dia_id", ""))),
                    timestamp=clock,
                    session=number,
                )
            )
    return pages


def _session_starts(sample: Mapping[str, Any]) -> list[tuple[int, _dt.datetime, list[dict[str, Any]]]]:
    """``(number, date, turns)`` per session; a session without a parsable date is dated a day after the last."""
    out: list[tuple[int, _dt.datetime, list[dict[str, Any]]]] = []
    clock: _dt.datetime | None = None
    for number, (date, turns) in _numbered_sessions(sample):
        clock = date or (clock + _dt.timedelta(days=1) if clock else _dt.datetime(2023, 1, 1, tzinfo=_dt.UTC))
        out.append((number, clock, turns))
    return out


def plain_pages(sample: Mapping[str, Any]) -> list[LocomoPage]:
    """The pages of the *plain* protocol: each session's turns paired by position.

    Turns 1+2, 3+4, … of every session are one page whoever speaks them (an odd
    last turn is a page with an empty answer); every page of a session carries
    the session date (a session without one: a day after the previous session).
    An image caption stays in the text as in the harness (``[shares a photo: …]``).
    :meth:`LocomoPage.text` renders them as the flat baselines rank them.

    Example:
        >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B",
        ...     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
        ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi A"},
        ...     {"speaker": "A", "dia_id": "D1:2", "text": "I moved.", "blip_caption": "a fjord"},
        ...     {"speaker": "B", "dia_id": "D1:3", "text": "Nice!"}]}}
        >>> pages = plain_pages(sample)
        >>> [(p.dia_ids, p.user_speaker, p.agent_speaker) for p in pages]
        [(('D1:1', 'D1:2'), 'B', 'A'), (('D1:3',), 'B', '')]
        >>> pages[0].text()
        '[8 May 2023] B: Hi A A: I moved. [shares a photo: a fjord]'
        >>> pages[0].timestamp == pages[1].timestamp
        True
    """
    pages: list[LocomoPage] = []
    for number, date, turns in _session_starts(sample):
        for i in range(0, len(turns), 2):
            first = turns[i]
            second = turns[i + 1] if i + 1 < len(turns) else None
            group = [first] if second is None else [first, second]
            pages.append(
                LocomoPage(
                    user_input=_turn_text(first),
                    agent_response="" if second is None else _turn_text(second),
                    user_speaker=str(first.get("speaker", "")),
                    agent_speaker="" if second is None else str(second.get("speaker", "")),
                    dia_ids=tuple(d for t in group for d in normalize_evidence(t.get("dia_id", ""))),
                    timestamp=date,
                    session=number,
                )
            )
    return pages


def plain_turn(page: LocomoPage) -> tuple[str, str]:
    """The ``add_turn`` texts of a plain page: each side as ``"Name: text"`` ("" for a missing answer).

    Example:
        >>> import datetime as dt
        >>> plain_turn(LocomoPage("Hi", "", "Ana", "", ("D1:1",), dt.datetime(2023, 5, 8), 1))
        ('Ana: Hi', '')
    """
    user = f"{page.user_speaker}: {page.user_input}" if page.user_input else ""
    agent = f"{page.agent_speaker}: {page.agent_response}" if page.agent_response else ""
    return user, agent


def ingest_plain(
    memory: MemoryOS,
    sample: Mapping[str, Any],
    *,
    user_id: str,
    thread_id: str | None = None,
    on_page: Callable[[], object] | None = None,
) -> int:
    """Feed one conversation through the plain public API; return the pages added.

    Each page of :func:`plain_pages` is a turn ``("Name: text", "Name: text")``
    of ``user_id`` in ``thread_id`` with ``timestamp=<session date>`` and
    ``metadata={"source_id": [dia ids]}`` — no speaker names as metadata, no
    turn id — stored with ``memory.add_turns`` (the same result as ``add_turn``
    page by page). ``thread_id`` defaults to ``user_id`` (the conversation is
    its own thread). ``on_page`` is called after each page (for progress bars).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B",
        ...     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
        ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi A"},
        ...     {"speaker": "A", "dia_id": "D1:2", "text": "I moved to Oslo."},
        ...     {"speaker": "B", "dia_id": "D1:3", "text": "Nice!"}]}}
        >>> m = MemoryOS(); ingest_plain(m, sample, user_id="conv")
        2
        >>> [(p.user_input, p.agent_response) for p in m.get_stm(user_id="conv", thread_id="conv")]
        [('B: Hi A', 'A: I moved to Oslo.'), ('B: Nice!', '')]
    """
    turns = [
        dict(zip(("user_input", "agent_response"), plain_turn(page), strict=True))
        | {"timestamp": page.timestamp, "metadata": {"source_id": list(page.dia_ids)}}
        for page in plain_pages(sample)
    ]
    return _add_in_batches(memory, turns, user_id, user_id if thread_id is None else thread_id, on_page)


def _pair_turns(turns: list[dict[str, Any]], speaker_a: str) -> list[list[dict[str, Any]]]:
    """Group a session's turns: speaker_a + the next speaker_b turn, else one turn alone."""
    groups: list[list[dict[str, Any]]] = []
    i = 0
    while i < len(turns):
        turn = turns[i]
        nxt = turns[i + 1] if i + 1 < len(turns) else None
        if turn.get("speaker") == speaker_a and nxt is not None and nxt.get("speaker") != speaker_a:
            groups.append([turn, nxt])
            i += 2
        else:
            groups.append([turn])
            i += 1
    return groups


@dataclass(frozen=True)
class LocomoQuestion:
    """One LoCoMo question.

    Attributes:
        sample_id: the conversation.
        question: the question text.
        category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
        evidence: the normalised dia ids it cites (see :func:`normalize_evidence`).
        answer: the gold answer as text ("" for category 5, integers as text).
        adversarial_answer: category 5's distractor answer ("" otherwise).

    Example:
        >>> qa = {"question": "What did Ana paint?", "adversarial_answer": "a lake", "evidence": [], "category": 5}
        >>> load_questions({"sample_id": "c1", "qa": [qa]})[0]  # doctest: +NORMALIZE_WHITESPACE
        LocomoQuestion(sample_id='c1', question='What did Ana paint?', category=5, evidence=(), answer='',
                       adversarial_answer='a lake')
    """

    sample_id: str
    question: str
    category: int
    evidence: tuple[str, ...]
    answer: str
    adversarial_answer: str


def load_questions(sample: Mapping[str, Any]) -> list[LocomoQuestion]:
    """The questions of one conversation, quirks handled.

    Integer answers become text, category 5 keeps ``adversarial_answer``
    apart, malformed evidence ids are normalised and repeated ones dropped.
    A question without a valid category raises ``ValueError``.

    Example:
        >>> s = {"sample_id": "c", "qa": [{"question": "When?", "answer": 2022, "evidence": ["D:1:3"], "category": 2}]}
        >>> q = load_questions(s)[0]
        >>> q.answer, q.evidence
        ('2022', ('D1:3',))
    """
    out: list[LocomoQuestion] = []
    for i, qa in enumerate(sample.get("qa", [])):
        category = qa.get("category")
        if category not in (1, 2, 3, 4, 5):
            raise InvalidInputError(
                f"{sample.get('sample_id', '?')} question {i}: category must be 1-5, got {category!r}"
            )
        answer = qa.get("answer", "")
        out.append(
            LocomoQuestion(
                sample_id=str(sample.get("sample_id", "")),
                question=str(qa.get("question", "")),
                category=int(category),
                evidence=tuple(dict.fromkeys(normalize_evidence(qa.get("evidence", [])))),
                answer="" if answer is None else str(answer),
                adversarial_answer=str(qa.get("adversarial_answer", "") or ""),
            )
        )
    return out


def _turn_text(turn: Mapping[str, Any]) -> str:
    text = str(turn.get("text", ""))
    caption = str(turn.get("blip_caption", "") or "")
    return f"{text} [shares a photo: {caption}]" if caption else text
