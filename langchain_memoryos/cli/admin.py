"""A user's data: ``memoryos export``, ``memoryos import`` and ``memoryos delete``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from langchain_memoryos.cli.common import (
    DbOpt,
    PostgresOpt,
    UserOpt,
    _errors,
    _fail,
    _input_file,
    _json_file,
    _open_memory,
    _where,
)
from langchain_memoryos.errors import InvalidInputError

__all__ = ["delete", "export", "import_"]


def export(
    user: UserOpt,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to this file (default: stdout).")] = None,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Print (or write) everything stored for a user as JSON ('memoryos import' reads it back)."""
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        data = memory.export_user(user_id=user)
        text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
        count = len(data.get("items", []))
        if not count:
            typer.echo(f"warning: nothing is stored for user {user!r}", err=True)
        if out is None:
            typer.echo(text)
        else:
            out.write_text(text + "\n", encoding="utf-8")
            typer.echo(f"exported {count} items of user {user!r} to {out}")


def import_(
    file: Annotated[Path, typer.Argument(help="A file written by 'memoryos export'.", show_default=False)],
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="Import as this user (default: the exported user).")
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="For a user that already has a memory: 'refuse' (nothing is written), 'replace' (the user is "
            "deleted, then the export imported) or 'merge' (the export's items are added; those the user has are "
            "kept).",
        ),
    ] = "refuse",
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Write a 'memoryos export' file back into the memory (as the same or another user).

    The whole file is checked before anything is written (every item against
    its record schema, the counts against the memory's capacities); an error
    names the file, the item and the field.
    """
    raw = _input_file(file, "pass a file written by 'memoryos export'")
    with _errors():
        data = _json_file(file, raw)
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            raise _fail(f"{file}: not a memoryos export (a JSON object with 'items' expected)")
        target = user or data.get("user_id")
        if not isinstance(target, str) or not target:
            raise _fail(f"{file}: no user id in the file; pass --user")
        from langchain_memoryos.memory import MemoryOS
        from langchain_memoryos.operations.imports import IMPORT_MODES, check_export

        if mode not in IMPORT_MODES:
            raise _fail(f"--mode {mode!r}: choose one of {', '.join(IMPORT_MODES)}")

        try:  # the file checked whole, before the database is opened (a memory of the same config)
            check_export(data, MemoryOS().config, None)
        except ValueError as exc:
            raise InvalidInputError(f"{file}: {exc}") from None
        with _open_memory(db, postgres, must_exist=False) as memory:
            try:
                count = memory.import_user(data, user_id=target, mode=mode)  # type: ignore[arg-type]
            except ValueError as exc:  # the API's mode="replace" is the command's --mode replace
                message = str(exc).replace('mode="replace"', "--mode replace").replace('mode="merge"', "--mode merge")
                raise InvalidInputError(f"{file}: {message}") from None
            typer.echo(f"imported {count} items for user {target!r} into {_where(db, postgres)} (mode {mode})")


def delete(
    user: UserOpt,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
    vacuum: Annotated[
        bool,
        typer.Option(
            "--vacuum",
            help="Then reclaim the deleted rows: PostgreSQL 'VACUUM store' (their space is reused, without "
            "blocking), SQLite 'VACUUM' (the file shrinks).",
        ),
    ] = False,
    vacuum_full: Annotated[
        bool,
        typer.Option(
            "--vacuum-full",
            help="PostgreSQL: then 'VACUUM (FULL) store': the table is rewritten, so the deleted text leaves its "
            "files now; the table is locked while it runs.",
        ),
    ] = False,
) -> None:
    """Delete everything stored for a user (asks first, unless --yes).

    On SQLite the deleted rows are overwritten and the write-ahead log is
    emptied. PostgreSQL keeps the deleted text in dead rows until VACUUM
    (--vacuum, --vacuum-full) and in its WAL and backups until they are
    recycled.
    """
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        if not yes and not typer.confirm(f"Delete all memory of user {user!r} in {_where(db, postgres)}?"):
            typer.echo("aborted: nothing was deleted", err=True)
            raise typer.Exit(1)
        count = memory.delete_user(user_id=user)
        typer.echo(f"deleted {count} items of user {user!r}")
        if vacuum or vacuum_full:
            statement = memory.vacuum(full=vacuum_full)
            typer.echo(f"ran {statement}")
        elif postgres:
            typer.echo(
                "note: PostgreSQL keeps the deleted text in dead rows until VACUUM: pass --vacuum (or --vacuum-full "
                "to rewrite the table now), or run 'VACUUM store;' (or 'VACUUM (FULL) store;') yourself; its WAL "
                "and backups keep it until they are recycled.",
                err=True,
            )
