"""The read commands: ``memoryos recall`` (what retrieval returns) and ``memoryos inspect`` (every tier)."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Annotated, Any

import typer

from langchain_memoryos.cli.common import (
    DbOpt,
    PostgresOpt,
    ThreadOpt,
    UserOpt,
    _console,
    _errors,
    _fail,
    _is_empty,
    _open_memory,
    _show,
    _stats_line,
    _time,
    _where,
)

if TYPE_CHECKING:
    from langchain_memoryos.schema import MemoryStats

__all__ = ["inspect", "recall", "users"]


def _page_json(page: Any) -> dict[str, Any]:
    """A page as ``recall --json`` lists it: its ids (short and stored), thread, time, text and sources."""
    from langchain_memoryos.schema.context import page_ref

    return {
        "id": page_ref(page),
        "stored_id": page.id,
        "thread_id": page.thread_id,
        "timestamp": page.timestamp.isoformat(),
        "text": page.text,
        "source_ids": page.source_ids(),
    }


def recall(
    question: Annotated[str, typer.Argument(help="What to recall, e.g. 'Where do I live?'.", show_default=False)],
    user: UserOpt,
    thread: ThreadOpt = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object instead.")] = False,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Show what the memory retrieves for a question (the context a model would get) and its sources."""
    from rich.panel import Panel
    from rich.text import Text

    if not question.strip():
        who = shlex.quote(user)
        raise _fail(
            f"the question is empty; pass what to recall (memoryos recall 'Where do I live?' --user {who}), "
            f"or see every tier with 'memoryos inspect --user {who}'"
        )
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        ctx = memory.retrieve(question, user_id=user, thread_id=thread, touch=False)  # a preview counts no visit
        sources = ctx.source_ids()
        if as_json:
            from langchain_memoryos.schema.context import fact_ref

            data = {
                "question": question,
                "user_id": user,
                "thread_id": thread,
                "empty": _is_empty(ctx),
                "prompt": ctx.to_prompt(),
                "source_ids": sources,
                "stm": [_page_json(p) for p in ctx.stm],
                "pages": [{**_page_json(hit.page), "score": hit.score} for hit in ctx.pages],
                "facts": [
                    {
                        "id": fact_ref(hit.record.id),
                        "stored_id": hit.record.id,
                        "kind": hit.record.kind,
                        "text": hit.record.summary,
                        "score": hit.score,
                    }
                    for hit in [*ctx.user_facts, *ctx.agent_facts]
                ],
                "counts": {
                    "stm": len(ctx.stm),
                    "segments": len(ctx.segments),
                    "pages": len(ctx.pages),
                    "user_facts": len(ctx.user_facts),
                    "agent_facts": len(ctx.agent_facts),
                },
                "words": ctx.word_count,
                "tokens": ctx.token_estimate,
            }
            typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        out = _console()
        if _is_empty(ctx):
            out.print(Text(_empty_note(question, user, thread, memory.stats(user_id=user))))
            return
        title = Text(f"memory for {question!r} (user {user!r}, thread {thread!r})")
        out.print(Panel(Text(ctx.to_prompt()), title=title, title_align="left"))
        out.print(Text(f"sources: {', '.join(sources) if sources else '(none)'}"))
        out.print(Text(f"{ctx.word_count} words, ~{ctx.token_estimate} tokens"))


def _empty_note(question: str, user: str, thread: str, stats: MemoryStats) -> str:
    """What ``recall`` prints when retrieval found nothing: an empty memory, or what it holds and where to look.

    Example:
        >>> from langchain_memoryos.schema import MemoryStats
        >>> _empty_note("Where?", "ana", "default", MemoryStats())
        "(memory is empty for user 'ana')"
        >>> _empty_note("Where?", "ana", "default", MemoryStats(stm_pages=1))  # doctest: +ELLIPSIS
        "(nothing recalled for 'Where?' in thread 'default'; user 'ana' has 1 STM pages, ... --user ana')"
    """
    if not (stats.stm_pages or stats.mtm_pages or stats.user_facts or stats.agent_facts):
        return f"(memory is empty for user {user!r})"
    return (
        f"(nothing recalled for {question!r} in thread {thread!r}; user {user!r} has {_stats_line(stats)}: "
        f"see 'memoryos inspect --user {shlex.quote(user)}')"
    )


# -- users --------------------------------------------------------------------------------------------


def users(db: DbOpt = None, postgres: PostgresOpt = None) -> None:
    """List the users with stored memory, one id per line (sorted); 'memoryos inspect --user ID' shows one."""
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        found = memory.list_users()
        for user in found:
            typer.echo(user)
        if not found:
            typer.echo(f"(no users in {_where(db, postgres)})", err=True)


# -- inspect ------------------------------------------------------------------------------------------


def inspect(
    user: UserOpt,
    limit: Annotated[int, typer.Option(help="Show the last N write-log events (0: all).", min=0)] = 20,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Show a user's memory as tables: STM per thread, segments with heat, persona, facts, the AMU write log."""
    from rich.table import Table
    from rich.text import Text

    out = _console()
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        stats = memory.stats(user_id=user)
        log = memory.write_log(user_id=user)
        out.print(Text(f"user {user!r} in {_where(db, postgres)}: {_stats_line(stats)}, {len(log)} write events"))

        for thread in memory.list_threads(user_id=user):
            table = Table(title=Text(f"Short-term memory: thread {thread!r}"), title_justify="left")
            for col in ("time", "user", "assistant"):
                table.add_column(col)
            for page in memory.get_stm(user_id=user, thread_id=thread):
                table.add_row(_time(page.timestamp), Text(page.user_input), Text(page.agent_response))
            _show(out, table)

        table = Table(title=Text("Mid-term segments (hottest first)"), title_justify="left")
        for col, justify in (("segment", "left"), ("pages", "right"), ("heat", "right"), ("visits", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for col in ("last visit", "keywords", "summary"):
            table.add_column(col)
        for seg in memory.list_segments(user_id=user):
            table.add_row(
                seg.id,
                str(len(seg.page_ids)),
                f"{seg.heat:.2f}",
                str(seg.n_visit),
                _time(seg.last_access),
                Text(", ".join(seg.keywords[:6])),
                Text(seg.summary),
            )
        _show(out, table)

        persona = memory.get_persona(user_id=user)
        table = Table(title=Text("Persona"), title_justify="left")
        table.add_column("part")
        table.add_column("value")
        for key, value in sorted(persona.user_profile.items()):
            table.add_row(Text(f"profile: {key}"), Text(str(value)))
        for key, values in sorted(persona.user_traits.items()):
            if values:
                table.add_row(Text(f"trait: {key}"), Text(", ".join(values)))
        table.add_row("agent profile", Text(persona.agent_profile))
        _show(out, table)

        for kind, title in (("user", "User facts"), ("agent", "Agent traits")):
            facts = memory.list_facts(user_id=user, kind=kind)  # type: ignore[arg-type]
            table = Table(title=Text(f"{title} ({len(facts)})"), title_justify="left")
            for col in ("id", "aspect", "updated", "summary"):
                table.add_column(col)
            for fact in facts:
                table.add_row(fact.id, fact.aspect, _time(fact.updated_at), Text(fact.summary))
            _show(out, table)

        shown = log[-limit:] if limit else log
        first = len(log) - len(shown) + 1
        table = Table(title=Text(f"AMU write log (last {len(shown)} of {len(log)})"), title_justify="left")
        table.add_column("#", justify="right")
        for col in ("time", "action", "kind", "record", "reason"):
            table.add_column(col)
        for number, event in enumerate(shown, start=first):
            table.add_row(
                str(number),
                _time(event.timestamp),
                event.action,
                event.record.kind,
                Text(event.record.summary),
                Text(event.reason),
            )
        _show(out, table)
