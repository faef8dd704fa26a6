"""The ``memoryos`` command.

Commands:

* ``memoryos demo``: the offline demo (a built-in multi-session conversation,
  every memory tier, the AMU decisions, fused updates and recall probes).
* ``memoryos chat --user U``: a REPL. With a chat model (``--model`` or
  ``$MEMORYOS_MODEL``) it answers with the memory; without one it shows what
  the memory would inject and still stores what the user says.
* ``memoryos ingest FILE --user U``: a JSONL file of turns or a LoCoMo file.
* ``memoryos recall QUESTION --user U``: what retrieval returns (``--json``).
* ``memoryos inspect --user U``: STM, segments with heat, persona, facts and
  the AMU write log as tables.
* ``memoryos serve``: the memory inspector in the browser (extra ``inspector``),
  on 127.0.0.1 only, read-only unless ``--allow-edit``.
* ``memoryos export`` / ``import`` / ``delete``: a user's data as JSON, back,
  or gone.
* ``memoryos bench locomo PATH``: the LoCoMo benchmark (the memory and the
  flat baselines on the same pages), a JSON report, a markdown table and a
  recall-vs-words plot.

Storage is ``--db PATH`` (SQLite, default ``memoryos.db`` in the working
directory) or ``--postgres URL``. Models are ``init_chat_model`` names
(``openai:gpt-4o-mini``); with ``OPENAI_BASE_URL`` set, the name is a model
of that OpenAI-compatible server. Errors are one ``error: ...`` line, not a
traceback: exit code 2 for bad arguments or input, 1 for runtime failures.

Example:
    >>> from typer.testing import CliRunner
    >>> CliRunner().invoke(app, ["bench", "locomo", "missing.json"]).exit_code
    2
    >>> CliRunner().invoke(app, ["recall", "hi", "--user", "u", "--db", "missing.db"]).exit_code
    2
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from langchain_memoryos.cli.app import app, main
from langchain_memoryos.cli.chat import CHAT_INSTRUCTIONS
from langchain_memoryos.cli.common import DEFAULT_DB
from langchain_memoryos.cli.ingest import TurnLine, read_turns

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["CHAT_INSTRUCTIONS", "DEFAULT_DB", "TurnLine", "app", "main", "read_turns"]

#: Builds a chat model from a ``--model`` name (``None``: ``resolve_chat_model``); tests swap in a fake.
_MODEL_FACTORY: Callable[[str], BaseChatModel] | None = None
