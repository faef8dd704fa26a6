"""LoCoMo file handling on a fixture the project writes itself (with the dataset's quirks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from langchain_memoryos.controllers import HeuristicController
from langchain_memoryos.evaluation.admission import AdmissionScore, admission_check
from langchain_memoryos.evaluation.locomo import (
    cited_turns,
    ingest_conversation,
    iter_locomo_turns,
    normalize_evidence,
    session_turns,
)

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "Hey Ben! I moved to Oslo last month for a new job."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Wow, congrats Ana!"},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "haha thanks"},
            {
                "speaker": "Ana",
                "dia_id": "D1:4",
                "text": "I also adopted a cat named Miso.",
                "blip_caption": "a photo of a grey cat",
            },
        ],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "How is Oslo?"},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Cold! I started learning to ski every weekend."},
            {"speaker": "Ben", "dia_id": "D2:3", "text": "Nice."},
        ],
        "session_3_date_time": "9:00 am on 1 June, 2023",  # a date with no session (conv-26 has these)
    },
    "qa": [
        {"question": "Where does Ana live?", "answer": "Oslo", "evidence": ["D1:1"], "category": 4},
        {"question": "What pet?", "answer": 1, "evidence": ["D1:4; D2:2"], "category": 1},
        {"question": "Adversarial", "adversarial_answer": "x", "evidence": ["D:2:02"], "category": 5},
    ],
}


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    return path


def test_normalize_evidence_quirks() -> None:
    assert normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D1:3"]) == [
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
        "D1:3",
    ]
    assert normalize_evidence("garbage") == []


def test_sessions_and_cited_turns(locomo_file: Path) -> None:
    sessions = session_turns(SAMPLE)
    assert [len(turns) for _, turns in sessions] == [4, 3]
    assert sessions[1][0] is not None and sessions[1][0].day == 20
    assert [t.dia_id for t in iter_locomo_turns(locomo_file)] == [
        "D1:1",
        "D1:2",
        "D1:3",
        "D1:4",
        "D2:1",
        "D2:2",
        "D2:3",
    ]
    assert cited_turns(locomo_file) == {("conv-x", d) for d in ("D1:1", "D1:4", "D2:2")}


def test_ingestion_keeps_every_turn(locomo_file: Path) -> None:
    m = MemoryOS()
    added = ingest_conversation(m, SAMPLE, user_id="ana")
    # pages: (D1:1,D1:2) (D1:3) (D1:4) (D2:1) (D2:2,D2:3)
    assert added == 5
    pages = m.get_stm(user_id="ana", thread_id="locomo")
    ids = [p.metadata["source_id"] for p in pages]
    assert ids == [["D1:1", "D1:2"], ["D1:3"], ["D1:4"], ["D2:1"], ["D2:2", "D2:3"]]
    assert "a grey cat" in pages[2].user_input and pages[3].user_input == "" and pages[3].agent_response
    assert ingest_conversation(m, SAMPLE, user_id="ana") == 0  # replaying adds nothing


def test_admission_check_scores_against_cited_turns(locomo_file: Path) -> None:
    scores = admission_check(locomo_file, HeuristicController())
    assert scores["admit_all"] == AdmissionScore(tp=3, fp=4, fn=0)
    gate = scores["gate"]
    assert gate.tp + gate.fn == 3 and gate.tp >= 2  # the move and the skiing are facts
    assert gate.fp <= 2  # "haha thanks", "Nice.", "How is Oslo?" are not
