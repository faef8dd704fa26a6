"""A fingerprint of the memory's behaviour, to show that a refactoring changed nothing.

One run writes one canonical JSON file (sorted keys, one value per line) with, for
every path through the memory below, each user's stored state (its whole export:
pages, segments, facts, persona, meta, log), its write-event log, and for a fixed
set of questions the context's sources and its rendered ``to_prompt()`` text:

* ``locomo/<preset>/<protocol>/<conversation>``: a slice of a LoCoMo file (the
  first ``--conversations`` conversations, their first ``--sessions`` sessions,
  the questions whose evidence lies in those sessions, at most ``--questions``)
  fed by each benchmark protocol (``harness``, ``plain``, ``fresh``) under the
  ``default`` and ``paper`` presets, each question asked once on the protocol's
  thread (each read counts its visits, as the benchmark's do);
* ``synthetic/<path>``: a synthetic conversation written by the project (fixed
  timestamps, a small config so that pages leave STM, segments are evicted,
  facts are promoted, updated and fused) through ``add_turn``, ``add_turns``,
  ``aadd_turn``, ``aadd_turns``, the ``LLMController`` over the test suite's
  scripted model (``tests/scripted_model.py``; the model's calls are recorded
  too), and the package's LangGraph graphs (``memory.write_graph`` and
  ``memory.read_graph`` run as nodes of a parent graph);
* ``repair``: a synthetic user whose stored rows are corrupted (a deleted
  segment, a page listed twice, STM and the user facts over capacity, the
  clock behind its pages), with what ``check()`` finds, what ``repair()``
  reports, and the state and log after the repair.

What is normalised: every vector in the export becomes the SHA-256 of its
float32 bytes (16 hex digits), so a vector is compared exactly without its
base64 text; the export's items are sorted by namespace and key. Every
timestamp is given (nothing depends on the wall clock), so nothing else needs
stripping; two runs of the same commit give the same file, to the byte.

Usage (the LoCoMo file is read, never copied; the output goes where ``--out`` says):
    PYTHONPATH=$PWD .venv/bin/python benchmarks/behaviour_snapshot.py LOCOMO.json --out before.json
    PYTHONPATH=$PWD .venv/bin/python benchmarks/behaviour_snapshot.py LOCOMO.json --out after.json
    .venv/bin/python benchmarks/behaviour_snapshot.py --compare before.json after.json

A snapshot of an older commit: ``git worktree add /some/dir <commit>``, then run
this script with ``PYTHONPATH=/some/dir`` (the script itself may be newer).
``--compare`` prints every differing value by its path and exits 1 when there
is any difference.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import hashlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.evaluation.benchmark import PROTOCOLS
from langchain_memoryos.evaluation.locomo import load_locomo, load_questions

T0 = dt.datetime(2024, 3, 1, 9, 0, tzinfo=dt.UTC)
SMALL: dict[str, Any] = {"stm_capacity": 3, "mtm_max_segments": 4, "user_kb_capacity": 6, "agent_traits_capacity": 2}

#: The synthetic conversation: facts that are stated, repeated, updated and mixed with small talk.
TURNS: list[tuple[str, str]] = [
    ("My name is Ana and I live in Lyon.", "Nice to meet you, Ana."),
    ("I work as a nurse at the city hospital.", "Nursing is demanding work."),
    ("I love hiking in the Alps on weekends.", "The Alps are beautiful."),
    ("How is the weather today?", "I can't check the weather, sorry."),
    ("My dog Felix is sick, I am worried.", "I hope Felix gets better soon."),
    ("I moved to Denver last month.", "Denver is a great city."),
    ("I am vegan and I cook a lot of lentils.", "Lentils are a great vegan protein."),
    ("I play chess every Sunday at the club.", "Chess clubs are fun."),
    ("Hiking again this weekend, in the Rockies now.", "Enjoy the Rocky mountains."),
    ("Actually I now work at Stripe as an engineer.", "Congratulations on the new job at Stripe!"),
    ("Felix is better, the vet was great.", "Glad to hear Felix recovered."),
    ("I started learning Japanese.", "Ganbatte!"),
    ("My sister Lea is visiting from Paris.", "Have a nice time with Lea."),
    ("I live in Denver, near the park.", "Sounds lovely."),
    ("Chess tournament next Sunday, I'm nervous.", "Good luck at the tournament."),
    ("ok", "Anything else?"),
    ("I am allergic to peanuts.", "Good to know."),
    ("Japanese lesson three today, kanji are hard.", "Keep going!"),
]
QUESTIONS = [
    "Where does Ana live?",
    "What is my job?",
    "How is Felix?",
    "What do I do on Sundays?",
    "What language am I learning?",
    "Who is visiting me?",
    "What am I allergic to?",
]
THREADS = ("a", "b")


# -- normalisation -----------------------------------------------------------------------------
def _vector_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(base64.b64decode(text)).hexdigest()[:16]


def _normal(value: Any) -> Any:
    """The value with every vector as its digest (see the module docstring)."""
    if isinstance(value, dict):
        return {
            k: _vector_digest(v) if k == "vector" and isinstance(v, str) and v else _normal(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def user_state(memory: MemoryOS, user: str) -> dict[str, Any]:
    """A user's export, normalised, and write log."""
    export = memory.export_user(user_id=user)
    items = sorted(_normal(export["items"]), key=lambda it: (it["namespace"], it["key"]))
    return {
        "export": dict(_normal({k: v for k, v in export.items() if k != "items"}), items=items),
        "log": [e.to_dict() for e in memory.write_log(user_id=user)],
    }


def _context(ctx: Any, question: str) -> dict[str, Any]:
    return {"q": question, "sources": sorted(ctx.source_ids()), "prompt": ctx.to_prompt()}


# -- LoCoMo ------------------------------------------------------------------------------------
def locomo_slice(path: Path, conversations: int, sessions: int, questions: int) -> list[dict[str, Any]]:
    """The first ``conversations`` samples with their first ``sessions`` sessions and questions on them."""
    out = []
    for sample in load_locomo(path)[:conversations]:
        conv = {
            k: v
            for k, v in sample["conversation"].items()
            if not k.startswith("session_") or int(k.split("_")[1]) <= sessions
        }
        kept = {f"D{i}:" for i in range(1, sessions + 1)}
        qa = [
            q
            for q in sample.get("qa", [])
            if q.get("evidence") and all(str(e).split(":")[0] + ":" in kept for e in q["evidence"])
        ][:questions]
        out.append({"sample_id": sample["sample_id"], "conversation": conv, "qa": qa})
    return out


def snapshot_locomo(samples: Sequence[Mapping[str, Any]], presets: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for preset in presets:
        for name, protocol in PROTOCOLS.items():
            memory = MemoryOS(config=MemoryOSConfig.preset(preset))
            for sample in samples:
                user = str(sample["sample_id"])
                protocol.ingest(memory, sample, user_id=user)
                thread = protocol.question_thread(user)
                contexts = [
                    _context(memory.retrieve(q.question, user_id=user, thread_id=thread), q.question)
                    for q in load_questions(sample)
                ]
                out[f"{preset}/{name}/{user}"] = user_state(memory, user) | {"contexts": contexts}
                _progress(f"locomo/{preset}/{name}/{user}", out[f"{preset}/{name}/{user}"])
    return out


# -- the synthetic paths -----------------------------------------------------------------------
def _turn(i: int) -> dict[str, Any]:
    user_input, answer = TURNS[i]
    return {
        "user_input": user_input,
        "agent_response": answer,
        "thread_id": THREADS[i % len(THREADS)],
        "timestamp": T0 + dt.timedelta(hours=7 * i),
        "metadata": {"source_id": f"s{i}"},
        "turn_id": f"turn-{i}",
    }


def _reports(reports: Sequence[Any]) -> list[Any]:
    return [_normal(r.to_dict()) if hasattr(r, "to_dict") else repr(r) for r in reports]


def _ask(memory: MemoryOS, user: str) -> list[dict[str, Any]]:
    return [_context(memory.retrieve(q, user_id=user, thread_id="questions"), q) for q in QUESTIONS]


async def _aask(memory: MemoryOS, user: str) -> list[dict[str, Any]]:
    return [_context(await memory.aretrieve(q, user_id=user, thread_id="questions"), q) for q in QUESTIONS]


def _small(**extra: Any) -> MemoryOS:
    return MemoryOS(config=MemoryOSConfig(**SMALL), **extra)


def _by_add_turn(memory: MemoryOS, user: str) -> list[Any]:
    return [memory.add_turn(**_turn(i), user_id=user) for i in range(len(TURNS))]


def _by_add_turns(memory: MemoryOS, user: str) -> list[Any]:
    return memory.add_turns([_turn(i) for i in range(len(TURNS))], user_id=user)


async def _by_aadd_turn(memory: MemoryOS, user: str) -> list[Any]:
    return [await memory.aadd_turn(**_turn(i), user_id=user) for i in range(len(TURNS))]


async def _by_aadd_turns(memory: MemoryOS, user: str) -> list[Any]:
    return await memory.aadd_turns([_turn(i) for i in range(len(TURNS))], user_id=user)


def _scripted_model() -> Any:
    """The test suite's scripted model answering every judgement offline (as ``bench_llm_calls.py`` does)."""
    from bench_llm_calls import answer

    from tests.scripted_model import ScriptedToolModel

    def judged(schema: str) -> Callable[[list[Any]], dict[str, Any]]:
        return lambda messages: answer(schema, "\n".join(str(m.content) for m in messages))

    schemas = ("PageAnalysisOutput", "PromotionOutput", "RelationsOutput", "FuseOutput")
    return ScriptedToolModel(script={s: [judged(s)] for s in schemas})


def _by_graphs(memory: MemoryOS, user: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """Every turn and question through ``memory.write_graph`` / ``memory.read_graph``, nodes of a parent graph."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class Parent(TypedDict, total=False):
        user_input: str
        agent_response: str
        timestamp: Any
        metadata: dict[str, Any]
        turn_id: str
        query: str
        report: Any
        context: Any

    writes = StateGraph(Parent)
    writes.add_node("write", memory.write_graph)
    writes.add_edge(START, "write")
    writes.add_edge("write", END)
    reads = StateGraph(Parent)
    reads.add_node("read", memory.read_graph)
    reads.add_edge(START, "read")
    reads.add_edge("read", END)
    write_app, read_app = writes.compile(), reads.compile()
    reports = []
    for i in range(len(TURNS)):
        turn = _turn(i)
        config: Any = {"configurable": {"user_id": user, "thread_id": turn["thread_id"]}}
        fields: Any = {k: v for k, v in turn.items() if k != "thread_id"}
        reports.append(write_app.invoke(fields, config)["report"])
    contexts = []
    for q in QUESTIONS:
        config = {"configurable": {"user_id": user, "thread_id": "questions"}}
        contexts.append(_context(read_app.invoke(Parent(query=q), config)["context"], q))
    return reports, contexts


def snapshot_synthetic() -> dict[str, Any]:
    out: dict[str, Any] = {}

    def record(name: str, memory: MemoryOS, user: str, reports: Sequence[Any], contexts: list[Any]) -> None:
        out[name] = user_state(memory, user) | {"reports": _reports(reports), "contexts": contexts}
        _progress(f"synthetic/{name}", out[name])

    memory = _small()
    record("add_turn", memory, "ana", _by_add_turn(memory, "ana"), _ask(memory, "ana"))
    memory = _small()
    record("add_turns", memory, "ana", _by_add_turns(memory, "ana"), _ask(memory, "ana"))

    async def both_async() -> None:
        memory = _small()
        reports = await _by_aadd_turn(memory, "ana")
        record("aadd_turn", memory, "ana", reports, await _aask(memory, "ana"))
        memory = _small()
        reports = await _by_aadd_turns(memory, "ana")
        record("aadd_turns", memory, "ana", reports, await _aask(memory, "ana"))

    asyncio.run(both_async())
    model = _scripted_model()
    memory = _small(model=model)
    record("llm_add_turn", memory, "ana", _by_add_turn(memory, "ana"), _ask(memory, "ana"))
    out["llm_add_turn"]["model_calls"] = [
        {"schema": key, "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest()[:16]}
        for key, prompt in model.calls
    ]
    memory = _small()
    reports, contexts = _by_graphs(memory, "ana")
    record("graphs", memory, "ana", reports, contexts)
    return out


# -- repair ------------------------------------------------------------------------------------
def _corrupt(memory: MemoryOS, user: str) -> None:
    """Stored rows broken as a crash or a hand edit could leave them (the store written directly)."""
    store, ns = memory.store, memory.repository.namespace

    def rows(*parts: str) -> list[Any]:
        namespace = ns(user, *parts)
        found = store.search(namespace, limit=10_000)
        return sorted((it for it in found if tuple(it.namespace) == namespace), key=lambda it: it.key)

    segments = rows("segments")
    victim = next(s for s in segments if len(s.value["page_ids"]) >= 1)
    store.delete(ns(user, "segments"), victim.key)  # a segment gone, its pages left behind
    other = next(s for s in rows("segments"))
    twice = dict(other.value, page_ids=[*other.value["page_ids"], other.value["page_ids"][0]])
    store.put(ns(user, "segments"), other.key, twice, index=False)  # a page listed twice
    facts = rows("facts", "user")
    for i in range(4):  # the user facts over capacity
        key = f"f_extra{i}"
        value = dict(facts[0].value, id=key, summary=f"The user owns {i + 2} cats.", confidence=0.1 * (i + 1))
        store.put(ns(user, "facts", "user"), key, value, index=False)
    stm = rows("stm", "a")
    if stm:  # STM over capacity
        seq = max(int(it.value["seq"]) for it in stm) + 1
        extra = dict(stm[-1].value, id="p_stm_extra", seq=seq, user_input="I also collect stamps.")
        store.put(ns(user, "stm", "a"), "p_stm_extra", extra, index=False)
    meta = store.get(ns(user, "meta"), "state")
    if meta is not None:  # the clock behind the pages
        store.put(ns(user, "meta"), "state", dict(meta.value, clock=T0.isoformat()), index=False)


def snapshot_repair() -> dict[str, Any]:
    memory = _small()
    _by_add_turn(memory, "ana")
    _corrupt(memory, "ana")
    problems = memory.check(user_id="ana")
    fixes = memory.repair(user_id="ana")
    out = {"check": problems, "repair": fixes, "check_after": memory.check(user_id="ana")}
    out |= user_state(memory, "ana") | {"contexts": _ask(memory, "ana")}
    _progress("repair", out)
    return out


# -- the file ----------------------------------------------------------------------------------
def _progress(name: str, part: Mapping[str, Any]) -> None:
    digest = hashlib.sha256(canonical(part).encode()).hexdigest()[:12]
    print(f"{name}: {len(part['log'])} events, {len(part.get('contexts', []))} contexts, {digest}", flush=True)


def canonical(data: Any) -> str:
    """The snapshot's text: sorted keys, one value per line, no wall-clock value."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def snapshot(path: Path, presets: Sequence[str], conversations: int, sessions: int, questions: int) -> dict[str, Any]:
    samples = locomo_slice(path, conversations, sessions, questions)
    return {
        "slice": {"conversations": conversations, "sessions": sessions, "questions": questions, "presets": presets},
        "locomo": snapshot_locomo(samples, presets),
        "synthetic": snapshot_synthetic(),
        "repair": snapshot_repair(),
    }


def differences(a: Any, b: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Every path at which two snapshots differ, with the two values (``<missing>`` for an absent one)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{path}/{key}"
            if key not in a or key not in b:
                yield sub, a.get(key, "<missing>"), b.get(key, "<missing>")
            else:
                yield from differences(a[key], b[key], sub)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                yield f"{path}[{i}]", a[i] if i < len(a) else "<missing>", b[i] if i < len(b) else "<missing>"
            else:
                yield from differences(a[i], b[i], f"{path}[{i}]")
    elif a != b:
        yield path, a, b


def compare(a: Path, b: Path, limit: int) -> int:
    found = list(differences(json.loads(a.read_text()), json.loads(b.read_text())))
    for path, old, new in found[:limit]:
        print(
            f"{path}\n  - {json.dumps(old, ensure_ascii=False)[:300]}\n  + {json.dumps(new, ensure_ascii=False)[:300]}"
        )
    if len(found) > limit:
        print(f"... and {len(found) - limit} more")
    print(f"{len(found)} differences between {a.name} and {b.name}")
    return 1 if found else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("locomo", type=Path, nargs="?", help="a LoCoMo file (read only)")
    parser.add_argument("--out", type=Path, help="where to write the snapshot")
    parser.add_argument("--presets", default="default,paper")
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=6, help="the first sessions of each conversation")
    parser.add_argument("--questions", type=int, default=50, help="at most this many questions per conversation")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="print how two snapshots differ")
    parser.add_argument("--limit", type=int, default=200, help="differences printed by --compare")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(args.compare[0], args.compare[1], args.limit)
    if args.locomo is None or args.out is None:
        parser.error("a LoCoMo file and --out are needed (or --compare A B)")
    data = snapshot(args.locomo, args.presets.split(","), args.conversations, args.sessions, args.questions)
    args.out.write_text(canonical(data))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
