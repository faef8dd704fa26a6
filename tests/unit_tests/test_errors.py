"""One error hierarchy: every error the package raises on purpose is a ``MemoryOSError``.

Bad input raises a subclass that is also a ``ValueError`` / ``TypeError``, so
callers' ``except ValueError`` keeps working; the classes are importable where
they were defined before ``langchain_memoryos.errors``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

import langchain_memoryos
from langchain_memoryos import MemoryOS, MemoryOSConfig, errors
from langchain_memoryos.background import BackgroundWriter

T0 = dt.datetime(2024, 5, 1, 9, tzinfo=dt.UTC)


def _raised(call: Any) -> BaseException:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the test inspects whatever was raised
        return exc
    raise AssertionError("no error raised")


def test_bad_config_raises_a_config_error_that_is_a_value_error() -> None:
    err = _raised(lambda: MemoryOSConfig(stm_capacity=0))
    assert type(err) is errors.ConfigError
    assert isinstance(err, errors.MemoryOSError) and isinstance(err, ValueError)
    assert str(err) == "MemoryOSConfig.stm_capacity must be >= 1, got 0."
    typed = _raised(lambda: MemoryOSConfig(stm_capacity="7"))  # type: ignore[arg-type]
    assert type(typed) is errors.ConfigTypeError
    assert isinstance(typed, TypeError) and isinstance(typed, errors.ConfigError)
    assert isinstance(_raised(lambda: MemoryOSConfig.preset("fast")), errors.ConfigError)
    with pytest.raises(ValueError, match="stm_capacity must be >= 1"):  # callers' except ValueError still works
        MemoryOSConfig(stm_capacity=0)


def test_bad_input_to_the_memory_is_an_invalid_input_or_type_error() -> None:
    memory = MemoryOS()
    cases: list[tuple[Any, type[BaseException], type[BaseException]]] = [
        (lambda: memory.add_turn("", "", user_id="u"), errors.InvalidInputError, ValueError),
        (lambda: memory.add_turn("Hi", "Hello", user_id=""), errors.InvalidInputError, ValueError),
        (lambda: memory.add_turn("Hi", "Hello", user_id="u", metadata=["x"]), errors.InvalidTypeError, TypeError),  # type: ignore[arg-type]
        (lambda: memory.add_turn("Hi", "Hello", user_id="u", timestamp=object()), errors.InvalidTypeError, TypeError),
        (lambda: memory.add_turns([{"user": "Hi"}], user_id="u"), errors.InvalidInputError, ValueError),
        (lambda: memory.retrieve("q", user_id="u", stm_view="all"), errors.InvalidInputError, ValueError),
        (lambda: memory.retrieve("q", user_id="u", touch="yes"), errors.InvalidTypeError, TypeError),  # type: ignore[arg-type]
        (lambda: memory.search("", user_id="u"), errors.InvalidInputError, ValueError),
        (lambda: memory.import_user({"format": "nope"}, user_id="u"), errors.InvalidInputError, ValueError),
        (lambda: memory.forget(user_id="u"), errors.InvalidInputError, ValueError),
        (lambda: MemoryOS(config={"stm_capacity": 3}), errors.InvalidTypeError, TypeError),  # type: ignore[arg-type]
        (lambda: MemoryOS(write_mode="later"), errors.InvalidInputError, ValueError),
        (lambda: MemoryOS(namespace_prefix="myapp"), errors.InvalidTypeError, TypeError),  # type: ignore[arg-type]
        (lambda: BackgroundWriter(0), errors.InvalidInputError, ValueError),
        (lambda: asyncio.run(memory.aadd_turn("", "", user_id="u")), errors.InvalidInputError, ValueError),
    ]
    for call, kind, builtin in cases:
        err = _raised(call)
        assert type(err) is kind, (err, kind)
        assert isinstance(err, errors.MemoryOSError) and isinstance(err, builtin), err
    assert memory.list_users() == []  # nothing was written by any of them


def test_lookups_and_failures_are_memoryos_errors_of_their_old_kinds() -> None:
    memory = MemoryOS()
    memory.add_turn("I live in Oslo.", "Nice.", user_id="u", timestamp=T0)
    missing_fact = _raised(lambda: memory.delete_fact("f_404", user_id="u"))
    assert type(missing_fact) is errors.FactNotFoundError and isinstance(missing_fact, LookupError)
    missing_page = _raised(lambda: memory.forget(page_id="p:404", user_id="u"))
    assert type(missing_page) is errors.PageNotFoundError and isinstance(missing_page, LookupError)
    writer = BackgroundWriter(1)
    writer.submit("u", lambda: 1 / 0)
    failed = _raised(writer.flush)
    assert type(failed) is errors.BackgroundWriteError and isinstance(failed, RuntimeError)
    writer.close()
    for name in ("MemoryOSError", "FactNotFoundError", "PageNotFoundError", "BackgroundWriteError"):
        assert issubclass(getattr(errors, name), errors.MemoryOSError)


def test_graph_errors_without_a_user_or_a_store_are_invalid_input() -> None:
    from langchain_memoryos.graph import resolve_memory, resolve_user_id

    no_user = _raised(lambda: resolve_user_id({"configurable": {"thread_id": "t"}}))
    assert type(no_user) is errors.MissingUserIdError and isinstance(no_user, ValueError)
    no_store = _raised(lambda: resolve_memory(None))
    assert type(no_store) is errors.MissingStoreError and isinstance(no_store, errors.InvalidInputError)
    graph_input = _raised(
        lambda: MemoryOS(InMemoryStore()).write_graph.invoke(
            {"user_input": "", "agent_response": ""}, {"configurable": {"user_id": "u"}}
        )
    )
    assert isinstance(graph_input, errors.InvalidInputError)


def test_every_public_error_is_a_memoryos_error_importable_where_it_was() -> None:
    from langchain_memoryos.amu.corrections import FactNotFoundError
    from langchain_memoryos.background import BackgroundWriteError
    from langchain_memoryos.embeddings.files import EmbeddingsNotAvailableError
    from langchain_memoryos.graph.runtime import MissingStoreError, MissingUserIdError
    from langchain_memoryos.operations.forget import PageNotFoundError
    from langchain_memoryos.operations.helper import HelperError

    old_homes = [
        FactNotFoundError,
        BackgroundWriteError,
        EmbeddingsNotAvailableError,
        MissingStoreError,
        MissingUserIdError,
        PageNotFoundError,
        HelperError,
    ]
    for cls in old_homes:
        assert cls is getattr(errors, cls.__name__)
    public = [getattr(langchain_memoryos, n) for n in langchain_memoryos.__all__ if n.endswith("Error")]
    assert len(public) == 11
    for cls in public:
        assert issubclass(cls, errors.MemoryOSError), cls
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.MemoryOSError), name
    bad_input = [errors.InvalidInputError, errors.ConfigError, errors.MissingUserIdError, errors.MissingStoreError]
    assert all(issubclass(cls, ValueError) for cls in bad_input)
    assert all(issubclass(cls, TypeError) for cls in (errors.InvalidTypeError, errors.ConfigTypeError))
