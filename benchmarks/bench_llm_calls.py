"""Model calls and prompt tokens per turn of memory maintenance with the LLMController.

Ingests one LoCoMo conversation (default conv-26) through ``MemoryOS(model=...)``
with a *counting scripted model*: a chat model that answers every structured
judgement plausibly and offline (page analysis by the heuristic rules applied
to the page in the prompt, relation labels by slot, fusion by the newer
record) and reports its prompt size as token usage. So the calls and tokens
are those the real controller makes; only the answers are scripted.

Usage:
    .venv/bin/python benchmarks/bench_llm_calls.py ../shared/data/locomo_dev.json [--sample conv-26] [--json out.json]

Target: <= 1.5 calls per turn (one ``add_turn``: a user input and the answer) on
average, and 0 calls per retrieval.
Reference MemoryOS: 3 sequential calls each time a turn leaves STM, 5 on promotion.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_memoryos import MemoryOS
from langchain_memoryos.controllers import HeuristicController
from langchain_memoryos.controllers.slots import slot_of
from langchain_memoryos.evaluation.locomo import conversation_pages, ingest_conversation, load_locomo, load_questions
from langchain_memoryos.schema import DialoguePage

_HEURISTIC = HeuristicController()
_PAGE = re.compile(r"Current page \(said on .*?\):\n(.*?)\n\nDecide:", re.S)
_CANDIDATE = re.compile(r"^(\d+)\. (.*?) \[aspect:", re.M)
_NEW = re.compile(r"New record \(from [^)]*\): (.*?) \[aspect:")


def _sides(page_text: str) -> tuple[str, str]:
    lines = page_text.split("\n")
    texts = [line.split(": ", 1)[1] if ": " in line else line for line in lines]
    return (texts[0], texts[1] if len(texts) > 1 else "")


def _record(r: Any) -> dict[str, Any]:
    return {
        "aspect": r.aspect,
        "intent": r.intent,
        "personal": r.personal,
        "entities": r.entities,
        "summary": r.summary,
        "sentiment": r.sentiment,
        "confidence": r.confidence,
        "kind": r.kind,
    }


def answer(schema: str, prompt: str) -> dict[str, Any]:
    """A plausible structured answer to one judgement, computed offline from its prompt."""
    if schema == "PageAnalysisOutput":
        found = _PAGE.search(prompt)
        user, agent = _sides(found.group(1) if found else "")
        a = _HEURISTIC.analyze_page(DialoguePage(id="p", user_input=user, agent_response=agent), None, None)
        return {
            "linked": False,
            "chain_meta": a.chain_meta[:500],
            "keywords": a.keywords,
            "topic_summary": a.topic_summary[:300],
            "records": [_record(r) for r in a.records],
        }
    if schema == "PromotionOutput":
        return {
            "segment_summary": "A consolidated topic.",
            "segment_keywords": [],
            "user_profile": [],
            "user_traits": [],
            "records": [],
        }
    if schema == "RelationsOutput":
        new = _NEW.search(prompt)
        new_summary = new.group(1) if new else ""
        new_slot = slot_of(new_summary)
        labels = []
        for number, summary in _CANDIDATE.findall(prompt):
            slot = slot_of(summary)
            label = (
                "duplicate"
                if summary == new_summary
                else ("update" if new_slot and slot and slot[0] == new_slot[0] else "separate")
            )
            labels.append({"candidate": int(number), "label": label})
        return {"relations": labels}
    if schema == "FuseOutput":
        new = _NEW.search(prompt)
        return {"summary": new.group(1) if new else "merged", "entities": [], "confidence": 1.0}
    return {"records": []}


class CountingModel(BaseChatModel):
    """Answers every judgement with :func:`answer`; usage = prompt chars / 4 and answer chars / 4."""

    calls: dict[str, int] = {}
    prompt_tokens: dict[str, int] = {}

    @property
    def _llm_type(self) -> str:
        return "counting-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:  # type: ignore[override]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        schema = kwargs["tools"][0]["function"]["name"]
        prompt = "\n".join(str(m.content) for m in messages)
        args = answer(schema, prompt)
        tokens_in, tokens_out = len(prompt) // 4, len(json.dumps(args)) // 4
        self.calls[schema] = self.calls.get(schema, 0) + 1
        self.prompt_tokens[schema] = self.prompt_tokens.get(schema, 0) + tokens_in
        usage = {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out}
        call = {"name": schema, "args": args, "id": "c", "type": "tool_call"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call], usage_metadata=usage))])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("locomo", type=Path, help="a LoCoMo file")
    parser.add_argument("--sample", default="conv-26")
    parser.add_argument("--questions", type=int, default=50, help="retrievals to check for zero calls")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    sample = next((s for s in load_locomo(args.locomo) if s.get("sample_id") == args.sample), None)
    if sample is None:
        print(f"error: no conversation {args.sample!r} in {args.locomo}", file=sys.stderr)
        return 2
    model = CountingModel()
    memory = MemoryOS(model=model)
    turns = sum(len(p.dia_ids) for p in conversation_pages(sample))
    started = time.perf_counter()
    pages = ingest_conversation(memory, sample, user_id="u")
    seconds = time.perf_counter() - started
    calls = dict(model.calls)
    total_calls = sum(calls.values())
    prompt_tokens = sum(model.prompt_tokens.values())
    for q in load_questions(sample)[: args.questions]:
        memory.retrieve(q.question, user_id="u", thread_id="questions")
    retrieval_calls = sum(model.calls.values()) - total_calls
    stats = memory.stats(user_id="u")
    result = {
        "sample": args.sample,
        "turns": turns,
        "pages": pages,
        "calls": calls,
        "calls_per_turn": total_calls / turns,
        "calls_per_page": total_calls / pages,
        "prompt_tokens_per_turn": prompt_tokens / turns,
        "prompt_tokens_per_page": prompt_tokens / pages,
        "prompt_tokens_by_judgement": dict(model.prompt_tokens),
        "retrievals": min(args.questions, len(load_questions(sample))),
        "calls_during_retrievals": retrieval_calls,
        "stats_llm_usage": stats.llm_usage,
        "facts": stats.user_facts,
        "seconds": round(seconds, 1),
    }
    print(f"{args.sample}: {turns} turns in {pages} pages, {seconds:.1f} s")
    print("  (a 'turn' of the memory is one add_turn: a user input and the agent's answer, a LoCoMo page)")
    for name, n in sorted(calls.items()):
        per_call = model.prompt_tokens[name] / max(n, 1)
        print(f"  {name:18s} {n:5d} calls  {n / pages:.3f}/add_turn  {per_call:7.0f} prompt tokens/call")
    target = "OK" if result["calls_per_page"] <= 1.5 else "MISSED"
    per_page = result["calls_per_page"]
    print(f"  total              {total_calls:5d} calls  {per_page:.3f}/add_turn (target <= 1.5: {target})")
    print(f"  prompt tokens per add_turn: {prompt_tokens / pages:.0f}")
    print(
        f"  per LoCoMo dialogue turn ({turns}): {result['calls_per_turn']:.3f} calls, "
        f"{result['prompt_tokens_per_turn']:.0f} prompt tokens"
    )
    print(f"  calls during {result['retrievals']} retrievals: {retrieval_calls} (target 0)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
