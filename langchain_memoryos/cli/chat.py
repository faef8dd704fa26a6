"""The interactive commands: ``memoryos demo`` and ``memoryos chat``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from langchain_memoryos.cli.common import (
    DbOpt,
    ModelOpt,
    PostgresOpt,
    ThreadOpt,
    UserOpt,
    _chat_model,
    _console,
    _errors,
    _is_empty,
    _open_memory,
    _where,
)

__all__ = ["CHAT_INSTRUCTIONS", "chat", "demo"]

#: The system instructions of ``memoryos chat`` (the memory context follows them).
CHAT_INSTRUCTIONS = (
    "You are a helpful assistant that remembers the user across conversations. "
    "Use the memory below when it is relevant; do not mention it otherwise."
)


_MODEL_HINT = (
    "no chat model configured: each message shows what the memory would inject, and is stored. "
    "To chat, pass --model openai:gpt-4o-mini (or set MEMORYOS_MODEL) with OPENAI_API_KEY set; "
    "for a local OpenAI-compatible server (vLLM, Ollama, LM Studio) also set OPENAI_BASE_URL "
    "and pass the server's model name."
)

_EXIT_WORDS = frozenset({"exit", "quit", "/exit", "/quit", ":q"})


# -- demo -------------------------------------------------------------------------------------


def demo(
    model: ModelOpt = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="Plain text, no ANSI colors.")] = False,
    db: Annotated[
        Path | None, typer.Option("--db", help="Keep the demo memory in this SQLite file (default: in memory).")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Every tier in full (segments, persona, facts, write log).")
    ] = False,
) -> None:
    """Ingest a built-in multi-session conversation offline and show each memory tier doing its job.

    On one screen: the live thread's STM, a first-session page recalled through
    its MTM segment, a fact updated by AMU and its recall, with the ranking's
    scores. --verbose shows every tier in full: the MTM segments with heat, the
    persona, the facts, every AMU decision with its reason, the fused updates
    and what retrieval finds for each question. With a model (--model or
    $MEMORYOS_MODEL) the model also answers the questions.
    """
    from langchain_memoryos.cli.demo import run_demo
    from langchain_memoryos.memory import MemoryOS

    with _errors():
        chat = _chat_model(model)
        memory = MemoryOS.from_sqlite(db) if db is not None else MemoryOS()
        color = not no_color and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        with memory:
            run_demo(out=sys.stdout, memory=memory, model=chat, color=color, verbose=verbose)


# -- chat ----------------------------------------------------------------------------------------


def _lines() -> Iterator[str]:
    """The user's lines from stdin, until EOF or an exit word ("you> " prompt on a terminal)."""
    interactive = sys.stdin.isatty()
    while True:
        try:
            line = input("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and not line:
            return
        text = line.strip()
        if text.lower() in _EXIT_WORDS:
            return
        if text:
            yield text


def chat(
    user: UserOpt,
    thread: ThreadOpt = "default",
    model: ModelOpt = None,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Chat with memory, one message per line, until EOF, 'exit' or 'quit'.

    With a model, each message is answered with the retrieved memory and the
    exchange is stored. Without one, each message shows what the memory would
    inject and is stored with an empty answer, so the memory still learns.
    """
    from rich.panel import Panel
    from rich.text import Text

    from langchain_memoryos.cli.demo import answer_with_context

    out = _console()
    with _errors():
        llm = _chat_model(model)
    with _errors(), _open_memory(db, postgres, llm, must_exist=False) as memory:
        if llm is None:
            typer.secho(f"hint: {_MODEL_HINT}", err=True, fg=typer.colors.YELLOW)
        turns = 0
        for line in _lines():
            ctx = memory.retrieve(line, user_id=user, thread_id=thread)
            if llm is not None:
                answer = answer_with_context(llm, line, ctx, instructions=CHAT_INSTRUCTIONS)
                out.print(Text(f"assistant> {answer}"))
            else:
                answer = ""
                if _is_empty(ctx):
                    out.print(Text("(memory is empty)"))
                else:
                    title = Text(f"memory would inject for: {line}")
                    out.print(Panel(Text(ctx.to_prompt()), title=title, title_align="left"))
            memory.add_turn(line, answer, user_id=user, thread_id=thread)
            turns += 1
        typer.echo(f"stored {turns} turns for user {user!r} in thread {thread!r} ({_where(db, postgres)})", err=True)
