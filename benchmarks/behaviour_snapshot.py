"""A fingerprint of the memory's behaviour on a LoCoMo file, to show that a refactoring changed nothing.

For every conversation, with the default and the paper presets: ingest it by
the benchmark's protocol, then ask every question once (as the benchmark does,
from a fresh thread; each read counts its visits). The fingerprint is the
user's whole export (pages, segments, facts, persona, meta, vectors), the
write-event log, and for each question the context's sources and its rendered
text. Two runs of the same behaviour give the same file, to the byte.

Usage:
    .venv/bin/python benchmarks/behaviour_snapshot.py ../shared/data/locomo_dev.json --out before.json
    .venv/bin/python benchmarks/behaviour_snapshot.py ../shared/data/locomo_dev.json --out after.json
    cmp before.json after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.evaluation.locomo import ingest_conversation, load_locomo, load_questions


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def snapshot(path: Path, presets: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for preset in presets:
        config = MemoryOSConfig.preset(preset)
        memory = MemoryOS(config=config)
        for sample in load_locomo(path):
            user = str(sample["sample_id"])
            ingest_conversation(memory, sample, user_id=user)
            log = (
                [e.to_dict() for e in memory.write_log(user_id=user)]
                if _kw(memory)
                else [
                    e.to_dict()
                    for e in memory.write_log(user)  # type: ignore[call-arg]
                ]
            )
            contexts = []
            for q in load_questions(sample):
                ctx = memory.retrieve(q.question, user_id=user, thread_id="questions")
                contexts.append({"q": q.question, "sources": sorted(ctx.source_ids()), "prompt": ctx.to_prompt()})
            export = memory.export_user(user_id=user) if _kw(memory) else memory.export_user(user)  # type: ignore[call-arg]
            out[f"{preset}/{user}"] = {
                "log": log,
                "contexts": contexts,
                "export_sha256": _digest(export),
                "log_sha256": _digest(log),
                "contexts_sha256": _digest(contexts),
            }
            print(f"{preset}/{user}: {len(log)} events, {len(contexts)} questions, export {_digest(export)[:12]}")
    return out


def _kw(memory: MemoryOS) -> bool:
    """Whether ``user_id`` is keyword-only on the inspection methods (it became so in a later version)."""
    import inspect

    return inspect.signature(memory.write_log).parameters["user_id"].kind is inspect.Parameter.KEYWORD_ONLY


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--presets", default="default,paper")
    args = parser.parse_args()
    data = snapshot(args.locomo, args.presets.split(","))
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
