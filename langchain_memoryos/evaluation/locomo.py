"""LoCoMo files: turns, evidence ids, session dates, and the ingestion protocol.

LoCoMo (Maharana et al., ACL 2024) conversations are between two people. The
ingestion protocol (DESIGN §6) pairs turns inside a session into
``add_turn(user_input, agent_response)`` — speaker_a as the user, speaker_b as
the agent — with the session date as timestamp and the ``dia_id`` of both
turns as the page's ``source_id``; an unpaired turn still becomes a page.
The file's quirks are handled here: session date keys without a session,
malformed evidence ids (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = [
    "LocomoTurn",
    "cited_turns",
    "ingest_conversation",
    "iter_locomo_turns",
    "load_locomo",
    "normalize_evidence",
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
        >>> LocomoTurn("conv-1", "D1:1", "Ana", "Hi!", "").dia_id
        'D1:1'
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

    Example:
        >>> load_locomo  # doctest: +ELLIPSIS
        <function load_locomo at ...>
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: not a LoCoMo file (a JSON list of conversations expected)")
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
    conv = sample["conversation"]
    keys = sorted(
        (int(k.split("_")[1]), k) for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)
    )
    return [(_session_date(conv.get(f"{key}_date_time")), list(conv[key])) for _, key in keys]


def iter_locomo_turns(path: str | Path) -> Iterator[LocomoTurn]:
    """Every turn of every conversation of a LoCoMo file, in order.

    Example:
        >>> iter_locomo_turns  # doctest: +ELLIPSIS
        <function iter_locomo_turns at ...>
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
        >>> cited_turns  # doctest: +ELLIPSIS
        <function cited_turns at ...>
    """
    return {
        (str(sample.get("sample_id", "")), dia)
        for sample in load_locomo(path)
        for qa in sample.get("qa", [])
        for dia in normalize_evidence(qa.get("evidence", []))
    }


def ingest_conversation(memory: MemoryOS, sample: Mapping[str, Any], *, user_id: str, thread_id: str = "locomo") -> int:
    """Feed one conversation into ``memory`` by the ingestion protocol; return the pages added.

    A speaker_a turn followed by a speaker_b turn is one page; any other turn
    (two speaker_a turns in a row, a session that opens with speaker_b) is a
    page of its own, so no turn is dropped or overwritten. Turns are one
    minute apart from the session date.

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
    conv = sample["conversation"]
    speaker_a = conv.get("speaker_a")
    added = 0
    clock: _dt.datetime | None = None
    for date, turns in session_turns(sample):
        start = date or (clock + _dt.timedelta(days=1) if clock else _dt.datetime(2023, 1, 1, tzinfo=_dt.UTC))
        i = 0
        minute = 0
        while i < len(turns):
            turn = turns[i]
            nxt = turns[i + 1] if i + 1 < len(turns) else None
            if turn.get("speaker") == speaker_a and nxt is not None and nxt.get("speaker") != speaker_a:
                user_text, agent_text, group = _turn_text(turn), _turn_text(nxt), [turn, nxt]
                i += 2
            elif turn.get("speaker") == speaker_a:
                user_text, agent_text, group = _turn_text(turn), "", [turn]
                i += 1
            else:
                user_text, agent_text, group = "", _turn_text(turn), [turn]
                i += 1
            ids = [d for t in group for d in normalize_evidence(t.get("dia_id", ""))]
            clock = start + _dt.timedelta(minutes=minute)
            minute += 1
            report = memory.add_turn(
                user_text,
                agent_text,
                user_id=user_id,
                thread_id=thread_id,
                timestamp=clock,
                metadata={"source_id": ids},
                turn_id="+".join(ids) or None,
            )
            added += report.added
    return added


def _turn_text(turn: Mapping[str, Any]) -> str:
    text = str(turn.get("text", ""))
    caption = str(turn.get("blip_caption", "") or "")
    return f"{text} [shares a photo: {caption}]" if caption else text
