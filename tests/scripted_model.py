"""The one scripted chat model of the test suite (unit and integration tests alike).

``ScriptedToolModel`` answers from a table: a structured-output judgement (the memory's
``LLMController``) by its schema's name, an agent's call by its first tool's name, a plain
call by ``"text"``. It records every call, reports token usage, streams word by word, and
can act as a model without tool calling (``tool_calling=False``: JSON mode).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCallChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Answer = dict[str, Any] | str | Exception | Callable[[list[BaseMessage]], Any]


class ScriptedToolModel(BaseChatModel):
    """A chat model that answers from ``script`` and records every call.

    A call is keyed by the name of its first bound tool (the schema of a
    ``with_structured_output`` judgement such as ``"PageAnalysisOutput"``, or
    an agent's first tool), or ``"text"`` when no tool is bound; ``"*"`` is the
    fallback key. Each entry of ``script[key]`` is used once, in order; the
    last one repeats. An entry is the tool arguments (a dict: the reply is one
    tool call of that name), a text reply (a str, e.g. an agent's answer or
    malformed JSON), an exception to raise (an HTTP error, a timeout), or a
    function of the prompt messages returning one of those or an ``AIMessage``
    (used as it is: e.g. a call of another tool than the first).

    Every call is recorded in ``calls`` as ``(key, prompt text)`` and in
    ``prompts`` as its messages. ``tokens_per_call`` is the usage reported per
    call (``None``: no usage metadata, as some servers send). Streaming yields
    a text reply word by word. ``tool_calling=False`` makes ``bind_tools``
    raise ``NotImplementedError``, as for a model without tool calling.

    Example:
        >>> script = {"text": ["Hello there, Ana.", "See you soon."], "Weather": [{"city": "Oslo"}]}
        >>> model = ScriptedToolModel(script=script)
        >>> model.invoke("Hi, I'm Ana.").content
        'Hello there, Ana.'
        >>> [chunk.content for chunk in model.stream("Thanks!")]  # word by word
        ['See', ' you', ' soon.']
        >>> model.invoke("Bye!").content  # the last entry repeats
        'See you soon.'
        >>> model.calls[0], model.count("text"), model.prompts[2][0].content
        (('text', "Hi, I'm Ana."), 3, 'Bye!')
        >>> from pydantic import BaseModel
        >>> class Weather(BaseModel):
        ...     city: str
        >>> model.with_structured_output(Weather).invoke("Where is it raining?")
        Weather(city='Oslo')
        >>> ScriptedToolModel(script={}, tool_calling=False).bind_tools([Weather])
        Traceback (most recent call last):
        NotImplementedError: this scripted model has no tool calling
    """

    script: dict[str, list[Answer]]
    calls: list[tuple[str, str]] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    tokens_per_call: int | None = 120
    tool_calling: bool = True

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:  # type: ignore[override]
        if not self.tool_calling:
            raise NotImplementedError("this scripted model has no tool calling")
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _answer(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
        """Record the call and build its reply from the script (or raise the scripted exception)."""
        tools = kwargs.get("tools") or []
        name = tools[0]["function"]["name"] if tools else "text"
        self.calls.append((name, "\n".join(str(m.content) for m in messages)))
        self.prompts.append(list(messages))
        entries = self.script.get(name) or self.script.get("*") or ["{}"]
        used = sum(1 for n, _ in self.calls if n == name) - 1
        answer = entries[min(used, len(entries) - 1)]
        if callable(answer) and not isinstance(answer, Exception):
            answer = answer(messages)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, AIMessage):
            return answer
        usage: UsageMetadata | None = None
        if self.tokens_per_call is not None:
            total = self.tokens_per_call
            usage = {"input_tokens": total - 20, "output_tokens": 20, "total_tokens": total}
        if isinstance(answer, str):
            return AIMessage(answer, usage_metadata=usage)
        call = {"name": name, "args": answer, "id": f"call_{len(self.calls)}", "type": "tool_call"}
        return AIMessage("", tool_calls=[call], usage_metadata=usage)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages, kwargs))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self._answer(messages, kwargs)
        if message.tool_calls:
            call = message.tool_calls[0]
            chunk = ToolCallChunk(name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=0)
            usage = message.usage_metadata
            piece = AIMessageChunk(content="", tool_call_chunks=[chunk], usage_metadata=usage, chunk_position="last")
            yield ChatGenerationChunk(message=piece)
            return
        words = str(message.content).split(" ")
        for i, word in enumerate(words):
            last = i == len(words) - 1
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=word if i == 0 else f" {word}",
                    usage_metadata=message.usage_metadata if last else None,
                    chunk_position="last" if last else None,
                )
            )

    def count(self, name: str) -> int:
        """How many calls were keyed ``name`` (a schema's or tool's name, or ``"text"``)."""
        return sum(1 for n, _ in self.calls if n == name)


def replying(*replies: str | Callable[[list[BaseMessage]], str], **fields: Any) -> ScriptedToolModel:
    """A scripted model for chat: its plain calls get ``replies`` in order (the last repeats).

    Example:
        >>> model = replying("Nice to meet you.", lambda messages: f"You said {len(messages)} things.")
        >>> model.invoke("Hi").content, model.invoke(["Hi", "Who am I?"]).content, model.count("text")
        ('Nice to meet you.', 'You said 2 things.', 2)
    """
    return ScriptedToolModel(script={"text": list(replies)}, **fields)


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
