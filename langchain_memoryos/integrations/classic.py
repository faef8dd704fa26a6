"""A langchain-classic ``BaseMemory`` over MemoryOS, for ``LLMChain``, ``ConversationChain`` and friends.

:class:`MemoryOSMemory` gives a classic chain two memory variables: the
session's short-term memory (STM) as the conversation ``history``, and the
rest of what MemoryOS retrieves for the new input (mid-term pages, persona,
facts; the STM left out) as ``memory``. Each finished run is stored as one
turn of the session. Needs the ``classic`` extra
(``pip install 'langchain-memoryos[classic]'``).

Example:
    >>> from langchain_memoryos import MemoryOS
    >>> chat = MemoryOSMemory(memory=MemoryOS(), user_id="ana", session_id="s1")
    >>> chat.save_context({"input": "I moved to Oslo."}, {"output": "Nice!"})
    >>> print(chat.load_memory_variables({"input": "Where do I live?"})["history"])
    Human: I moved to Oslo.
    AI: Nice!
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    from langchain_classic.base_memory import BaseMemory
except ImportError as exc:  # the ``classic`` extra is not installed
    raise ImportError("MemoryOSMemory needs langchain-classic: pip install 'langchain-memoryos[classic]'") from exc

from langchain_core.messages import BaseMessage, get_buffer_string
from pydantic import ConfigDict, ValidationInfo, field_validator

from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.memory import MemoryOS
from langchain_memoryos.schema import MemoryContext
from langchain_memoryos.schema.messages import message_text, page_messages

__all__ = ["MemoryOSMemory"]

#: Output keys tried, in order, when a chain returns several outputs and no ``output_key`` is set.
_OUTPUT_KEYS: tuple[str, ...] = ("output", "text", "response")


def _text(value: Any, where: str) -> str:
    """A chain input or output value as text: a string or a message."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return message_text(value)
    raise InvalidTypeError(f"{where} must be a string or a message, got {type(value).__name__}.")


class MemoryOSMemory(BaseMemory):
    """A langchain-classic memory backed by MemoryOS: the session's STM as history, the rest as ``memory``.

    One instance serves one user and one session (a MemoryOS thread); other
    sessions of the same user share its mid-term and long-term memory, so a
    fact told in one session is found in the ``memory`` variable of another.

    Args:
        memory: the MemoryOS instance that stores and retrieves.
        user_id: whose memory.
        session_id: the conversation (its STM is the history).
        input_key: the chain input that holds the user's message (default: the
            only input that is not a memory variable).
        output_key: the chain output that holds the answer (default: the only
            output, else ``output``, ``text`` or ``response``).
        history_key: the memory variable of the history.
        memory_key: the memory variable of the retrieved context.
        return_messages: the history as messages (for chat prompts) instead of a string.
        human_prefix: the user's label in the history string.
        ai_prefix: the assistant's label in the history string.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> MemoryOSMemory(memory=MemoryOS(), user_id="ana").memory_variables
        ['history', 'memory']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: MemoryOS
    user_id: str
    session_id: str = "default"
    input_key: str | None = None
    output_key: str | None = None
    history_key: str = "history"
    memory_key: str = "memory"
    return_messages: bool = False
    human_prefix: str = "Human"
    ai_prefix: str = "AI"

    @field_validator("memory", mode="before")
    @classmethod
    def _check_memory(cls, value: Any) -> Any:
        if not isinstance(value, MemoryOS):
            raise InvalidInputError(f"memory must be a langchain_memoryos.MemoryOS, got {type(value).__name__}.")
        return value

    @field_validator("user_id", "session_id")
    @classmethod
    def _check_id(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise InvalidInputError(f"{info.field_name} must be a non-empty string, got {value!r}.")
        return value

    # -- the memory variables ------------------------------------------------------
    @property
    def memory_variables(self) -> list[str]:
        """The chain inputs this memory provides: the history and the retrieved memory.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOSMemory(memory=MemoryOS(), user_id="u", memory_key="context").memory_variables
            ['history', 'context']
        """
        return [self.history_key, self.memory_key]

    # -- pure helpers shared by the sync and async methods ---------------------------
    def _input_text(self, inputs: Mapping[str, Any], *, required: bool) -> str:
        """The user's message among the chain inputs (``""`` when there is none and it is not required)."""
        key = self.input_key
        if key is None:
            candidates = sorted(set(inputs).difference([*self.memory_variables, "stop"]))
            if len(candidates) > 1:
                raise InvalidInputError(
                    f"MemoryOSMemory cannot tell which input is the user's message among {candidates}; "
                    "pass input_key='...' to name it."
                )
            if not candidates:
                if required:
                    raise InvalidInputError(
                        f"MemoryOSMemory found no input to store among {sorted(inputs)}; pass input_key='...'."
                    )
                return ""
            key = candidates[0]
        elif key not in inputs:
            raise InvalidInputError(f"The chain inputs have no key {key!r} (input_key=); keys: {sorted(inputs)}.")
        return _text(inputs[key], f"input {key!r}")

    def _output_text(self, outputs: Mapping[str, Any]) -> str:
        """The answer among the chain outputs."""
        key = self.output_key
        if key is None:
            if len(outputs) == 1:
                key = next(iter(outputs))
            else:
                key = next((k for k in _OUTPUT_KEYS if k in outputs), None)
                if key is None:
                    raise InvalidInputError(
                        f"MemoryOSMemory cannot tell which output is the answer among {sorted(outputs)}; "
                        "pass output_key='...' to name it."
                    )
        elif key not in outputs:
            raise InvalidInputError(f"The chain outputs have no key {key!r} (output_key=); keys: {sorted(outputs)}.")
        return _text(outputs[key], f"output {key!r}")

    def _turn(self, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> tuple[str, str] | None:
        """The exchange to store, or ``None`` when both sides are empty."""
        user_input, answer = self._input_text(inputs, required=True), self._output_text(outputs)
        if not user_input.strip() and not answer.strip():
            return None
        return user_input, answer

    def _variables(self, ctx: MemoryContext) -> dict[str, Any]:
        """The memory variables from a retrieved context: its STM as history, the rest as memory."""
        messages = page_messages(ctx.stm)
        history: str | list[BaseMessage] = (
            messages
            if self.return_messages
            else get_buffer_string(messages, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix)
        )
        return {self.history_key: history, self.memory_key: ctx.without_stm().to_prompt()}

    # -- sync ------------------------------------------------------------------------
    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Retrieve for the chain's input: the session's history and the rest of the memory.

        Args:
            inputs: the chain inputs; the user's message (``input_key``) is the query.

        Returns:
            ``{history_key: the session's STM (a string, or messages with return_messages),
            memory_key: the retrieved context without the STM, as a prompt block ("" when empty)}``.

        Example:
            >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
            >>> chat = MemoryOSMemory(memory=MemoryOS(config=MemoryOSConfig(agent_profile="")), user_id="u")
            >>> chat.load_memory_variables({"input": "hello"})
            {'history': '', 'memory': ''}
        """
        query = self._input_text(inputs, required=False)
        ctx = self.memory.retrieve(query, user_id=self.user_id, thread_id=self.session_id, stm_view="messages")
        return self._variables(ctx)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Store the run as one turn of the session (nothing when input and answer are both empty).

        Args:
            inputs: the chain inputs (the user's message under ``input_key``).
            outputs: the chain outputs (the answer under ``output_key``).

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> chat = MemoryOSMemory(memory=MemoryOS(), user_id="u", session_id="s")
            >>> chat.save_context({"input": "I paint."}, {"text": "Nice!"})
            >>> [(p.user_input, p.agent_response) for p in chat.memory.get_stm(user_id="u", thread_id="s")]
            [('I paint.', 'Nice!')]
        """
        turn = self._turn(inputs, outputs)
        if turn is not None:
            self.memory.add_turn(*turn, user_id=self.user_id, thread_id=self.session_id)

    def clear(self) -> None:
        """Forget the session's STM; other sessions and the user's mid- and long-term memory are kept.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> chat = MemoryOSMemory(memory=MemoryOS(), user_id="u", session_id="s")
            >>> chat.save_context({"input": "hi"}, {"output": "hello"})
            >>> chat.clear()
            >>> chat.memory.get_stm(user_id="u", thread_id="s")
            []
        """
        self.memory.clear_stm(user_id=self.user_id, thread_id=self.session_id)

    # -- async -----------------------------------------------------------------------
    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async twin of :meth:`load_memory_variables`.

        Example:
            >>> import asyncio
            >>> from langchain_memoryos import MemoryOS
            >>> chat = MemoryOSMemory(memory=MemoryOS(), user_id="u", return_messages=True)
            >>> asyncio.run(chat.aload_memory_variables({"input": "hello"}))["history"]
            []
        """
        query = self._input_text(inputs, required=False)
        ctx = await self.memory.aretrieve(query, user_id=self.user_id, thread_id=self.session_id, stm_view="messages")
        return self._variables(ctx)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Async twin of :meth:`save_context`.

        Example:
            >>> import asyncio
            >>> from langchain_memoryos import MemoryOS
            >>> chat = MemoryOSMemory(memory=MemoryOS(), user_id="u")
            >>> asyncio.run(chat.asave_context({"input": "hi"}, {"output": "hello"}))
            >>> len(chat.memory.get_stm(user_id="u"))
            1
        """
        turn = self._turn(inputs, outputs)
        if turn is not None:
            await self.memory.aadd_turn(*turn, user_id=self.user_id, thread_id=self.session_id)

    async def aclear(self) -> None:
        """Async twin of :meth:`clear`.

        Example:
            >>> import asyncio
            >>> from langchain_memoryos import MemoryOS
            >>> chat = MemoryOSMemory(memory=MemoryOS(), user_id="u")
            >>> chat.save_context({"input": "hi"}, {"output": "hello"})
            >>> asyncio.run(chat.aclear())
            >>> chat.memory.get_stm(user_id="u")
            []
        """
        await self.memory.aclear_stm(user_id=self.user_id, thread_id=self.session_id)
