"""``memoryos serve``: the memory inspector in the browser, on 127.0.0.1 only (extra ``inspector``)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated

import typer

from langchain_memoryos.cli.common import DEFAULT_DB, DbOpt, PostgresOpt, _errors, _fail

__all__ = ["serve"]

#: The only address the inspector listens on.
HOST = "127.0.0.1"


def serve(
    db: DbOpt = None,
    postgres: PostgresOpt = None,
    port: Annotated[int, typer.Option("--port", "-p", help="The port on 127.0.0.1.", min=1, max=65535)] = 8765,
    allow_edit: Annotated[
        bool, typer.Option("--allow-edit", help="Allow forgetting a fact or page and correcting a fact.")
    ] = False,
) -> None:
    """Inspect the memory in the browser: users, STM, segments with heat, facts with history, Ask.

    A local development tool, not an internet-facing service: it listens on
    127.0.0.1 only, answers only to a loopback Host header, and every request
    needs the token in the URL it prints. Read-only (the SQLite file opened
    read-only) unless --allow-edit.
    """
    from langchain_memoryos.inspector import INSTALL_HINT, create_inspector_app, require_inspector

    try:
        require_inspector()
    except ImportError as exc:
        raise _fail(f"{exc}", 2) from None
    import uvicorn

    from langchain_memoryos.inspector.opening import open_postgres_read_only, open_sqlite_read_only
    from langchain_memoryos.inspector.security import new_token
    from langchain_memoryos.memory import MemoryOS

    if db is not None and postgres:
        raise _fail("pass either --db or --postgres, not both")
    with _errors():
        path = Path(db or DEFAULT_DB)
        if postgres:
            memory = MemoryOS.from_postgres(postgres) if allow_edit else open_postgres_read_only(postgres)
            where = "PostgreSQL"
        elif not path.exists():
            raise _fail(f"{path}: no such database (pass --db PATH, the file an agent or 'memoryos ingest' wrote)")
        else:
            memory = MemoryOS.from_sqlite(path) if allow_edit else open_sqlite_read_only(path)
            where = str(path)
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:  # bound before the URL is printed: a port in use is an error here, not after the URL
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((HOST, port))
            except OSError as exc:
                sock.close()
                raise _fail(f"{HOST}:{port}: {exc.strerror or exc}; pass another --port", 1) from None
            token = new_token()
            app = create_inspector_app(memory, allow_edit=allow_edit, token=token, port=port)
            mode = "edits allowed" if allow_edit else "read-only"
            typer.echo(f"memoryos inspector over {where} ({mode}); a local development tool ({INSTALL_HINT})")
            typer.echo(f"open http://{HOST}:{port}/?token={token}", color=False)
            typer.echo("Ctrl+C stops it.")
            config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", access_log=False, lifespan="on")
            with sock:
                uvicorn.Server(config).run(sockets=[sock])
        finally:
            memory.close()
