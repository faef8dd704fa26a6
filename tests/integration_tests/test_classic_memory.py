"""MemoryOSMemory in a fresh interpreter: no deprecation warning from our class (LangChain warns once per process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.unit_tests.test_classic_memory import CLASSIC_FILE

_WARNING_PROBE = textwrap.dedent(
    """
    import asyncio, json, warnings

    def record(caught):
        return [[w.category.__name__, issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)),
                 str(w.message), w.filename] for w in caught]

    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        from langchain_memoryos import MemoryOS
        from langchain_memoryos.integrations import MemoryOSMemory
        chat = MemoryOSMemory(memory=MemoryOS(), user_id="ana", session_id="s1")
        chat.save_context({"input": "I moved to Oslo."}, {"output": "Nice!"})
        chat.load_memory_variables({"input": "Where do I live?"})
        chat.clear()
        asyncio.run(chat.asave_context({"input": "hi"}, {"output": "hello"}))
        asyncio.run(chat.aload_memory_variables({"input": "hi"}))
        asyncio.run(chat.aclear())
        chat.memory_variables

    with warnings.catch_warnings(record=True) as control:  # a deprecated classic memory does warn
        warnings.simplefilter("always")
        from langchain_classic.memory import ConversationBufferMemory
        ConversationBufferMemory()

    print(json.dumps({"ours": record(ours), "control": record(control)}))
    """
)


def test_no_deprecation_warning_from_our_class() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WARNING_PROBE],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    control = [w for w in result["control"] if w[1]]
    assert any("ConversationBufferMemory" in w[2] for w in control)  # the probe does see deprecation warnings
    ours = [
        w
        for w in result["ours"]
        if w[1] and (str(Path(w[3]).resolve()) == CLASSIC_FILE or "MemoryOSMemory" in w[2] or "BaseMemory" in w[2])
    ]
    assert ours == []
