"""A scripted chat model with tool calling: answers each judgement from a table, keyed by the schema's name."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

Answer = dict[str, Any] | str | Exception | Callable[[list[BaseMessage]], Any]


class ScriptedToolModel(BaseChatModel):
    """Answers a structured-output call for schema ``S`` from ``script[S]``.

    Each entry of ``script[S]`` is used once, in order; the last one repeats.
    An entry is the tool arguments (a dict), a raw text reply (a str, e.g.
    malformed JSON), an exception to raise (an HTTP error, a timeout), or a
    function of the prompt messages returning one of those. Every call is
    recorded in ``calls`` as ``(schema name, prompt text)``.
    """

    script: dict[str, list[Answer]]
    calls: list[tuple[str, str]] = []
    tokens_per_call: int = 120

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.get("tools") or []
        name = tools[0]["function"]["name"] if tools else "text"
        self.calls.append((name, "\n".join(str(m.content) for m in messages)))
        entries = self.script.get(name) or self.script.get("*") or ["{}"]
        used = sum(1 for n, _ in self.calls if n == name) - 1
        answer = entries[min(used, len(entries) - 1)]
        if callable(answer) and not isinstance(answer, Exception):
            answer = answer(messages)
        if isinstance(answer, Exception):
            raise answer
        usage = {"input_tokens": self.tokens_per_call - 20, "output_tokens": 20, "total_tokens": self.tokens_per_call}
        if isinstance(answer, str):
            message = AIMessage(answer, usage_metadata=usage)
        else:
            call = {"name": name, "args": answer, "id": f"call_{len(self.calls)}", "type": "tool_call"}
            message = AIMessage("", tool_calls=[call], usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def count(self, name: str) -> int:
        """How many calls asked for schema ``name``."""
        return sum(1 for n, _ in self.calls if n == name)


def page_answer(summary: str = "", *, aspect: str = "personal_profile", linked: bool = False) -> dict[str, Any]:
    """A PageAnalysisOutput answer with zero or one record."""
    records = []
    if summary:
        records.append(
            {
                "aspect": aspect,
                "intent": "inform",
                "personal": True,
                "entities": [],
                "summary": summary,
                "sentiment": "neutral",
                "confidence": 1.0,
                "kind": "user",
            }
        )
    return {
        "linked": linked,
        "chain_meta": "Talking about " + (summary or "small talk"),
        "keywords": ["topic", "chat"],
        "topic_summary": "Topic: " + (summary or "small talk"),
        "records": records,
    }


def dumps(data: dict[str, Any]) -> str:
    """JSON text of an answer (for text / JSON-mode replies)."""
    return json.dumps(data)
