"""The memory inspector: a local web app that shows what a memory holds and why (``memoryos serve``).

Views: the users (paged, counted in the store), a user (STM per thread,
MTM segments with their heat against ``tau``, the LPM profile, traits and
facts with their time, source turns and write history, the write log
filterable by action), and Ask (exactly what ``retrieve(..., touch=False)``
would inject, itemised with tier, score and the parts of the score).

It is a local development tool, not an internet-facing service: it answers
only to its loopback address (``Host`` checked) and to requests carrying the
per-run token (see :mod:`langchain_memoryos.inspector.security`). It is
read-only unless ``allow_edit=True`` (forget a fact or page, correct a fact).

Needs the ``inspector`` extra: ``pip install "langchain-memoryos[inspector]"``
(Starlette, uvicorn, Jinja2). Importing this package does not import them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = ["INSTALL_HINT", "create_inspector_app", "require_inspector"]

#: What to install for the inspector.
INSTALL_HINT = 'pip install "langchain-memoryos[inspector]"'


def require_inspector() -> None:
    """Raise a clear ``ImportError`` when the ``inspector`` extra (Starlette, uvicorn, Jinja2) is missing.

    Raises:
        ImportError: naming what is missing and the command that installs it.

    Example:
        >>> require_inspector()  # the extra is installed here: nothing happens
    """
    import importlib.util

    missing = [name for name in ("starlette", "uvicorn", "jinja2") if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            f"the memory inspector needs {', '.join(missing)}: install langchain-memoryos[inspector] ({INSTALL_HINT})."
        )


def create_inspector_app(
    memory: MemoryOS,
    *,
    allow_edit: bool = False,
    token: str | None = None,
    port: int | None = None,
    page_size: int = 20,
) -> Any:
    """The inspector as a Starlette (ASGI) app over a memory a program already has, to run or mount.

    Without ``allow_edit`` the app reads through a read-only twin of ``memory``
    (same store, scope, embeddings and config; its loads write nothing) and
    retrieves with ``touch=False``; with it, the forms forget a fact or page
    and correct a fact through ``memory`` itself.

    Args:
        memory: the memory (an ``InMemoryStore``, SQLite or PostgreSQL one, a LangGraph server's store ...).
        allow_edit: allow the forget and correct forms (POST, with the token).
        token: the token every request must carry (default: a fresh random one,
            in ``app.state.token``).
        port: the port the ``Host`` header must name (``None``: any port of a loopback name,
            for an app mounted in another server).
        page_size: rows per page of every list.

    Returns:
        The Starlette app. Open ``/?token=<app.state.token>`` once; the token is then kept in a cookie.

    Raises:
        ImportError: without the ``inspector`` extra (the message says what to install).

    Example:
        >>> from starlette.testclient import TestClient
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("I live in Oslo.", "Nice!", user_id="ana")
        >>> app = create_inspector_app(memory, token="s3cret")
        >>> client = TestClient(app, base_url="http://127.0.0.1:8000")
        >>> client.get("/user?u=ana").status_code  # no token yet
        403
        >>> page = client.get("/user?u=ana&token=s3cret")  # the token is kept in a cookie from now on
        >>> page.status_code, "I live in Oslo." in page.text, client.get("/").status_code
        (200, True, 200)
    """
    require_inspector()
    from contextlib import asynccontextmanager

    from langchain_memoryos.inspector.app import build_app
    from langchain_memoryos.inspector.data import read_only_twin
    from langchain_memoryos.inspector.security import new_token

    owned = None
    if not allow_edit and not memory.repository.read_only:
        owned = memory = read_only_twin(memory)
    app = build_app(memory, token=token or new_token(), allow_edit=allow_edit, port=port, page_size=page_size)
    if owned is not None:
        twin = owned

        @asynccontextmanager
        async def lifespan(_: Any) -> Any:
            try:
                yield
            finally:
                twin.close()

        app.router.lifespan_context = lifespan
    return app
