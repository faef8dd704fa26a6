"""``MemoryOS.forget``: a fact, a page or what a query names, gone from every tier (see :mod:`~.amu.forgetting`).

Example:
    >>> from langchain_memoryos import MemoryOS
    >>> memory = MemoryOS()
    >>> _ = memory.add_turn("I'm allergic to zorblax. I like tea.", "Noted!", user_id="u")
    >>> report = memory.forget(user_id="u", query="zorblax", dry_run=True)
    >>> report.dry_run, report.texts  # the turn's fact and the sentence it was made from
    (True, ['The user is allergic to zorblax.', "I'm allergic to zorblax."])
    >>> "zorblax" in memory.retrieve("allergies?", user_id="u").to_prompt()  # a dry run changes nothing
    True
    >>> memory.forget(user_id="u", query="zorblax").redacted == report.redacted
    True
    >>> [p.user_input for p in memory.get_stm(user_id="u")]
    ['I like tea.']
"""

from __future__ import annotations

from typing import Any

from langchain_memoryos.amu.corrections import FactNotFoundError
from langchain_memoryos.amu.forgetting import ForgetPlan, apply_forget, content_words, plan_forget
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError, PageNotFoundError
from langchain_memoryos.kernel.effects import Purge, Step
from langchain_memoryos.operations.runtime import Locked, Runtime
from langchain_memoryos.operations.validation import check_fact_id, check_text, check_user
from langchain_memoryos.schema import ForgetReport, ensure_utc
from langchain_memoryos.store.repository import UserState, flush

__all__ = ["PageNotFoundError", "forget", "page_id_from_ref"]


def page_id_from_ref(state: UserState, ref: str) -> str | None:
    """The stored id of a page from the form a tool shows (``p:12``, ``[p:12]``) or its stored id.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); report = memory.add_turn("hi", "hello", user_id="u")
        >>> state = memory._sync(Locked("u", memory.repository.load("u")))
        >>> page_id_from_ref(state, "p:1") == report.page_id == page_id_from_ref(state, report.page_id)
        True
    """
    text = ref.strip().removeprefix("[").removesuffix("]").strip()
    pages = [*state.pages.values(), *(p for stm in state.stm.values() for p in stm)]
    if text.startswith("p:") and text[2:].isdigit():
        seq = int(text[2:])
        return next((p.id for p in pages if p.metadata.get("_seq") == seq), None)
    return next((p.id for p in pages if p.id == text), None)


def _report(plan: ForgetPlan, dry_run: bool, events: list[Any]) -> ForgetReport:
    return ForgetReport(
        facts=list(plan.facts),
        pages=list(plan.pages),
        redacted=sorted(plan.redacted),
        texts=list(plan.texts),
        events=events,
        dry_run=dry_run,
    )


def forget(
    runtime: Runtime,
    user_id: Any,
    *,
    fact_id: Any = None,
    page_id: Any = None,
    query: Any = None,
    dry_run: Any = False,
) -> Locked[ForgetReport]:
    """Operation: ``MemoryOS.forget`` (the arguments checked now).

    Raises:
        ValueError: not exactly one of ``fact_id``, ``page_id``, ``query``; a query without content words.
        TypeError: ``dry_run`` not a bool.
        FactNotFoundError, PageNotFoundError: no such fact or page (when run).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> forget(MemoryOS()._runtime, "u", query="the")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: forget(query=...) needs a query with content words (not only \
'the', 'my' …), got 'the'.
    """
    user = check_user(user_id)
    named = [
        name for name, value in (("fact_id", fact_id), ("page_id", page_id), ("query", query)) if value is not None
    ]
    if len(named) != 1:
        raise InvalidInputError(f"forget needs exactly one of fact_id=, page_id= or query=, got {named or 'none'}.")
    if not isinstance(dry_run, bool):
        raise InvalidTypeError(f"dry_run must be True or False, got {dry_run!r}.")
    fact = check_fact_id(fact_id) if fact_id is not None else None
    if page_id is not None and (not isinstance(page_id, str) or not page_id.strip()):
        raise InvalidInputError(
            f"page_id must be a non-empty string (e.g. 'p:12', as search shows it), got {page_id!r}."
        )
    text = check_text("query", query) if query is not None else None
    if text is not None and not content_words(text):
        raise InvalidInputError(
            f"forget(query=...) needs a query with content words (not only 'the', 'my' …), got {text!r}."
        )
    repository, max_chars = runtime.repository, runtime.config.max_embedding_chars

    def step() -> Step[ForgetReport]:
        state = yield from repository.load(user)
        page = None
        if page_id is not None:
            page = page_id_from_ref(state, page_id)
            if page is None:
                raise PageNotFoundError(page_id, user)
        if fact is not None and fact not in state.facts["user"] and fact not in state.facts["agent"]:
            raise FactNotFoundError(fact, user)
        plan = plan_forget(state, fact_id=fact, page_id=page, query=text)
        if dry_run or plan.empty():
            return _report(plan, dry_run, [])
        now = state.clock or ensure_utc(None)
        events = yield from apply_forget(repository, state, plan, now=now, max_chars=max_chars)
        yield from flush(state)
        yield Purge()  # SQLite: the write-ahead log checkpointed, the deleted text in no byte of the files
        return _report(plan, dry_run, events)

    return Locked(user, step())
