"""``MemoryOS.import_user``: an export checked whole, then written as one user, by mode.

An export (``MemoryOS.export_user``) is a list of items ``{"namespace", "key",
"value"}``, the namespace relative to the user's. Before anything is written,
:func:`check_export` checks every item against the schema of its records
(:data:`ROW_SCHEMAS`: required keys, their types, the vectors' dimension) and the
whole export against the memory's capacities (STM per thread, segments, user
facts, agent traits); an error names the item (its index, kind and key) and the
field. Derived rows (version stamp, index snapshot, journal, tombstone, the
``"id"`` row of a hash-labelled user) are never imported: the import writes a new
version stamp, so every cache of the user in any process reloads it.

The modes (:data:`IMPORT_MODES`):

* ``"refuse"`` (the default): a user that already has a memory is refused.
* ``"replace"``: the stored user is deleted (as by ``delete_user``), then the export imported.
* ``"merge"``: the export's items are added to the stored user by key; an item whose
  key the user already has keeps its stored value (a page id counts in STM and MTM
  alike; the persona is kept when one is stored), except facts and write events, whose
  ids are numbered per user: one with the same key but another text is renumbered, so
  both are kept. The meta row takes the later clock and the larger counter, so new ids
  never meet imported ones.

In every mode the user is then loaded from what is stored and repaired as
``repair()`` does (segment membership and centroids, STM over capacity moved to MTM
…), so ``check()`` finds nothing. A process killed between the write and the repair
leaves problems that ``check()`` reports and ``repair()`` fixes.
"""

from __future__ import annotations

import base64
import binascii
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

import numpy as np
from langgraph.store.base import Item, PutOp, SearchOp
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.kernel.effects import Step, StoreBatch
from langchain_memoryos.operations.validation import check_import_value, check_thread
from langchain_memoryos.schema import FactKind, ensure_utc
from langchain_memoryos.schema.layout import encode_label, escape_id, is_hash_label
from langchain_memoryos.schema.pages import stored_thread
from langchain_memoryos.schema.records import Aspect, Intent, RelationLabel, Sentiment, WriteAction
from langchain_memoryos.store.repository import MemoryRepository, flush

__all__ = [
    "DERIVED_PARTS",
    "EXPORT_FORMAT",
    "IMPORT_MODES",
    "ROW_SCHEMAS",
    "ImportMode",
    "ImportRow",
    "check_export",
    "import_rows",
]

logger = logging.getLogger(__name__)

#: The ``format`` of an ``export_user`` dump.
EXPORT_FORMAT = "langchain-memoryos/1"

ImportMode = Literal["refuse", "replace", "merge"]
#: The modes of ``import_user`` (see the module's docstring).
IMPORT_MODES: tuple[str, ...] = get_args(ImportMode)
#: The namespaces of a user that are derived or bookkeeping: never exported, never imported.
DERIVED_PARTS = frozenset({"version", "snapshot", "journal", "deleting", "id"})
#: The namespaces of a user's records (an STM thread and a fact kind below theirs)
_RECORD_PARTS = ("stm", "pages", "segments", "facts", "persona", "meta", "log")
#: The namespaces whose records a capacity bounds
_COUNTED = ("segments", "facts/user", "facts/agent")
#: The longest key an item may have (UTF-8 bytes): with its namespace it stays within PostgreSQL's index limit.
MAX_KEY_BYTES = 256


# -- the record schema ------------------------------------------------------------------------------------
def _time(value: str) -> str:
    ensure_utc(value)  # ValueError: not ISO-8601, or out of range
    return value


Time = Annotated[str, AfterValidator(_time)]
Count = Annotated[int, Field(ge=0)]


class _Row(BaseModel):
    """A stored value's schema: the types are strict (``"abc"`` is no ``int``), unknown keys are kept."""

    model_config = ConfigDict(strict=True, extra="allow")


class _Vectored(_Row):
    vector: str

    @field_validator("vector")
    @classmethod
    def _dimension(cls, value: str, info: ValidationInfo) -> str:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInputError("not a base64 vector (as export_user writes it)") from None
        dimension = (info.context or {}).get("dimension")
        if len(raw) % 4:
            raise InvalidInputError(f"a vector of {len(raw)} bytes, not of float32 numbers (as export_user writes it)")
        if dimension is not None and len(raw) != 4 * dimension:
            raise InvalidInputError(
                f"a vector of {len(raw) // 4} numbers, but this memory's embeddings have {dimension} "
                "(import into a memory with the embeddings the export was made with)"
            )
        if not np.all(np.isfinite(np.frombuffer(raw, dtype="<f4"))):
            raise InvalidInputError("a vector with non-finite numbers")
        return value


class _RecordSchema(_Row):
    """A typed record (a fact, a page's candidate, a write event's record)."""

    id: str = ""
    kind: FactKind = "user"
    aspect: Aspect = "other"
    intent: Intent = "inform"
    personal: bool = True
    entities: list[str] = []
    summary: str = ""
    sentiment: Sentiment = "neutral"
    confidence: float = 1.0
    created_at: Time | None = None
    updated_at: Time | None = None
    source_page_ids: list[str] = []
    slot: str = ""
    subject: str = ""
    metadata: dict[str, Any] = {}


class _FactSchema(_RecordSchema, _Vectored):
    """A stored fact (``facts/user``, ``facts/agent``): an id, a summary and a vector are required."""

    id: str
    summary: str


class _PageSchema(_Vectored):
    """A stored MTM page (``pages``): an id and a vector are required."""

    id: str
    user_input: str = ""
    agent_response: str = ""
    timestamp: Time | None = None
    thread_id: str = "default"
    thread_id_label: str | None = None
    meta: str = ""
    keywords: list[str] = []
    metadata: dict[str, Any] = {}
    segment_id: str | None = None
    linked: bool = False
    candidates: list[_RecordSchema] = []


class _StmPageSchema(_PageSchema):
    """A stored STM page (``stm/<thread>``): a page and its order in the thread."""

    seq: Count = 0


class _SegmentSchema(_Vectored):
    """A stored segment (``segments``): an id and a vector are required."""

    id: str
    summary: str = ""
    keywords: list[str] = []
    page_ids: list[str] = []
    n_visit: Count = 0
    l_interaction: Count = 0
    last_access: Time | None = None
    heat: float = 0.0
    created_at: Time | None = None
    pending_page_ids: list[str] = []
    promotions: Count = 0


class _PersonaSchema(_Row):
    """The stored persona (``persona``, key ``"persona"``)."""

    user_profile: dict[str, str] = {}
    user_traits: dict[str, list[str]] = {}
    agent_profile: str = ""
    updated_at: Time | None = None


class _MetaSchema(_Row):
    """The user's clock and counters (``meta``, key ``"state"``)."""

    seq: Count = 0
    clock: Time | None = None
    chain_tails: dict[str, str] = {}
    chain_tail_labels: dict[str, str] = {}
    llm_calls: Count = 0
    llm_tokens: Count = 0
    llm_usage: dict[str, dict[str, int]] = {}


class _RelationSchema(_Row):
    """A relation-judge label inside a write event."""

    candidate_id: str
    label: RelationLabel
    similarity: float = 0.0
    reason: str = ""


class _EventSchema(_Row):
    """A write event (``log``): an action is required."""

    id: str = ""
    action: WriteAction
    record: _RecordSchema = _RecordSchema()
    relations: list[_RelationSchema] = []
    replaced_ids: list[str] = []
    reason: str = ""
    timestamp: Time | None = None
    source: str = "add_fact"
    gate_score: float = 0.0
    fallback: bool = False


#: What each namespace of a user holds: its kind (as errors name it), schema, and the one key it allows (if one).
ROW_SCHEMAS: dict[str, tuple[str, type[_Row], str | None]] = {
    "stm": ("STM page", _StmPageSchema, None),
    "pages": ("page", _PageSchema, None),
    "segments": ("segment", _SegmentSchema, None),
    "facts/user": ("user fact", _FactSchema, None),
    "facts/agent": ("agent trait", _FactSchema, None),
    "persona": ("persona", _PersonaSchema, "persona"),
    "meta": ("meta", _MetaSchema, "state"),
    "log": ("write event", _EventSchema, None),
}


@dataclass
class ImportRow:
    """One checked item of an export.

    Attributes:
        part: its namespace kind, a key of :data:`ROW_SCHEMAS` (``"stm"`` for every thread).
        namespace: its namespace relative to the user's, as ids (``["stm", "t1"]``).
        key: its key.
        value: its value (JSON, as ``add_turn`` makes metadata).

    Example:
        >>> row = ImportRow("stm", ["stm", "t1"], "p_1", {"id": "p_1"})
        >>> row.page_id, ImportRow("log", ["log"], "000000000001", {}).page_id
        ('p_1', None)
    """

    part: str
    namespace: list[str]
    key: str
    value: dict[str, Any]

    @property
    def page_id(self) -> str | None:
        """The page id, for an STM or MTM page (``None`` otherwise; see the class example)."""
        return self.key if self.part in ("stm", "pages") else None


def _field(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "value"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _part(index: int, row: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The item's namespace kind and its namespace, checked (``ValueError`` names the item)."""
    namespace = row.get("namespace")
    if not isinstance(namespace, list) or not namespace or not all(isinstance(x, str) and x for x in namespace):
        raise InvalidInputError(
            f"import_user: item {index}: 'namespace' must be a list of non-empty strings relative to the user, "
            f"e.g. ['pages'] or ['stm', 'default'], got {_shown(namespace)}."
        )
    head = namespace[0]
    if head in DERIVED_PARTS:
        return head, namespace
    if head == "stm" and len(namespace) == 2:
        try:
            check_thread(namespace[1])
        except ValueError as exc:
            raise InvalidInputError(f"import_user: item {index} (STM page): its thread: {exc}") from None
        return "stm", namespace
    part = "/".join(namespace)
    if part not in ROW_SCHEMAS or part == "stm":
        known = ", ".join(["stm/<thread>", *(k for k in ROW_SCHEMAS if k != "stm")])
        raise InvalidInputError(
            f"import_user: item {index}: unknown namespace {namespace!r} (a memoryos export has {known})."
        )
    return part, namespace


def check_row(index: int, row: Any, config: MemoryOSConfig, dimension: int | None) -> ImportRow | None:
    """One export item checked against the schema of its namespace (``None``: a derived row, never imported).

    Args:
        index: its index in the export's ``items`` (errors name it).
        row: the item.
        config: the memory's config (the clock-skew check of the items' times).
        dimension: the memory's embedding dimension (``None``: any).

    Returns:
        The checked row.

    Raises:
        ValueError: what is wrong, naming the item (index, kind, key) and the field.

    Example:
        >>> row = {"namespace": ["segments"], "key": "s1", "value": {"id": "s1", "n_visit": "abc", "vector": ""}}
        >>> check_row(3, row, MemoryOSConfig(), None)
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: import_user: item 3 (segment 's1') field 'n_visit': Input should \
be a valid integer (got 'abc').
    """
    if not isinstance(row, Mapping):
        raise InvalidInputError(
            f"import_user: item {index} is a {type(row).__name__}, not an object (namespace, key, value)."
        )
    part, namespace = _part(index, row)
    if part in DERIVED_PARTS:
        return None
    kind, schema, only_key = ROW_SCHEMAS[part]
    key = row.get("key")
    if not isinstance(key, str) or not key:
        raise InvalidInputError(
            f"import_user: item {index} ({kind}): 'key' must be a non-empty string, got {_shown(key)}."
        )
    where = f"import_user: item {index} ({kind} {key!r})"
    if only_key is not None and key != only_key:
        raise InvalidInputError(f"{where}: the {kind} is stored under the key {only_key!r}.")
    if "\x00" in key or len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise InvalidInputError(f"{where}: a key must have no NUL and at most {MAX_KEY_BYTES} UTF-8 bytes.")
    if not isinstance(row.get("value"), Mapping):
        raise InvalidInputError(f"{where}: no 'value' object (not a memoryos export item).")
    # JSON only, times within the clock skew
    value = check_import_value(index, {**row, "value": _escaped(part, row["value"])}, config)
    try:
        schema.model_validate(value, context={"dimension": dimension})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = _field(tuple(error["loc"]))
        got = "" if error["type"] == "missing" else f" (got {_shown(error.get('input'))})"
        message = error["msg"]
        if error["type"] == "missing":
            message = "missing (a required key)"
        elif error["type"] == "value_error" and "error" in error.get("ctx", {}):
            message = str(error["ctx"]["error"])
        raise InvalidInputError(f"{where} field {field!r}: {message}{got}.") from None
    if part in ("stm", "pages", "segments", "facts/user", "facts/agent") and value["id"] != key:
        raise InvalidInputError(
            f"{where} field 'id': {value['id']!r} is not the item's key (records are stored by id)."
        )
    if part == "facts/user" or part == "facts/agent":
        if value.get("kind", "user") != namespace[1]:
            raise InvalidInputError(
                f"{where} field 'kind': {value.get('kind')!r}, but it is stored as a {namespace[1]} fact."
            )
    if part == "stm" and stored_thread(value) != namespace[1]:
        raise InvalidInputError(
            f"{where} field 'thread_id': {stored_thread(value)!r}, but it is stored under thread {namespace[1]!r}."
        )
    return ImportRow(part, namespace, key, value)


def _escaped(part: str, value: Mapping[str, Any]) -> Mapping[str, Any]:
    """A value of an older export with NUL in a thread id, in today's form (the id escaped, never lost)."""
    thread = value.get("thread_id")
    if part in ("stm", "pages") and isinstance(thread, str) and "\x00" in thread and "thread_id_label" not in value:
        return {**value, "thread_id": thread.replace("\x00", "\ufffd"), "thread_id_label": escape_id(thread)}
    tails = value.get("chain_tails")
    if part == "meta" and isinstance(tails, Mapping) and any(isinstance(k, str) and "\x00" in k for k in tails):
        labels = dict(value.get("chain_tail_labels") or {})
        labels.update({escape_id(k): v for k, v in tails.items() if isinstance(k, str) and "\x00" in k})
        kept = {k: v for k, v in tails.items() if not (isinstance(k, str) and "\x00" in k)}
        return {**value, "chain_tails": kept, "chain_tail_labels": labels}
    return value


def _capacities(config: MemoryOSConfig) -> dict[str, tuple[str, int]]:
    return {
        "segments": ("mtm_max_segments", config.mtm_max_segments),
        "facts/user": ("user_kb_capacity", config.user_kb_capacity),
        "facts/agent": ("agent_traits_capacity", config.agent_traits_capacity),
    }


def check_counts(rows: list[ImportRow], config: MemoryOSConfig, *, stm: bool = True) -> None:
    """Refuse rows over the memory's capacities, or naming one record twice.

    Args:
        rows: the checked rows (for a merge: the user's rows after it).
        config: the memory's config.
        stm: check STM per thread too (a merge moves a thread's oldest pages to MTM instead).

    Raises:
        ValueError: naming the capacity (its config field) and the counts.

    Example:
        >>> rows = [ImportRow("facts/agent", ["facts", "agent"], f"f{i}", {}) for i in range(3)]
        >>> check_counts(rows, MemoryOSConfig(agent_traits_capacity=2))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: import_user: 3 agent traits, more than agent_traits_capacity=2 ...
    """
    seen: dict[tuple[str, str], int] = {}
    pages: dict[str, int] = {}
    for i, row in enumerate(rows):
        where = (row.part if row.part != "stm" else f"stm/{row.namespace[1]}", row.key)
        if where in seen:
            raise InvalidInputError(
                f"import_user: {'/'.join(where)} is in the export twice (items {seen[where]} and {i})."
            )
        seen[where] = i
        if row.page_id is not None:
            if row.page_id in pages:
                first = pages[row.page_id]
                raise InvalidInputError(
                    f"import_user: page {row.page_id} is in the export twice (items {first} and {i})."
                )
            pages[row.page_id] = i
    counts: dict[str, int] = {}
    threads: dict[str, int] = {}
    for row in rows:
        counts[row.part] = counts.get(row.part, 0) + 1
        if row.part == "stm":
            threads[row.namespace[1]] = threads.get(row.namespace[1], 0) + 1
    for part, (name, capacity) in _capacities(config).items():
        if counts.get(part, 0) > capacity:
            kind = ROW_SCHEMAS[part][0]
            raise InvalidInputError(
                f"import_user: {counts[part]} {kind}s, more than {name}={capacity} of this memory; import into a "
                f"memory whose MemoryOSConfig({name}=...) holds them."
            )
    for thread, count in threads.items() if stm else ():
        if count > config.stm_capacity:
            raise InvalidInputError(
                f"import_user: STM thread {thread!r} holds {count} pages, more than stm_capacity={config.stm_capacity} "
                "of this memory; import into a memory whose MemoryOSConfig(stm_capacity=...) holds them."
            )


def check_export(data: Any, config: MemoryOSConfig, dimension: int | None) -> list[ImportRow]:
    """An export checked whole: every item against its schema, then the counts against the capacities.

    Args:
        data: what ``export_user`` returned (or its JSON read back).
        config: the memory's config.
        dimension: the memory's embedding dimension.

    Returns:
        The rows to import (derived rows left out).

    Raises:
        ValueError: not an export, or the first problem found (the item's index, kind and key, and the field).

    Example:
        >>> row = {"namespace": "pages", "key": "p1", "value": {}}
        >>> check_export({"format": EXPORT_FORMAT, "items": [row]}, MemoryOSConfig(), 384)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: import_user: item 0: 'namespace' must be a list of non-empty \
strings relative to the user, ...
    """
    if not isinstance(data, Mapping) or data.get("format") != EXPORT_FORMAT:
        raise InvalidInputError(f"not a langchain-memoryos export (format {EXPORT_FORMAT!r} expected).")
    items = data.get("items", [])
    if not isinstance(items, list):
        raise InvalidInputError(f"not a langchain-memoryos export: 'items' must be a list, got {type(items).__name__}.")
    rows = [r for i, item in enumerate(items) if (r := check_row(i, item, config, dimension)) is not None]
    check_counts(rows, config)
    return rows


# -- writing -----------------------------------------------------------------------------------------------
def _merged(
    repository: MemoryRepository, user: str, rows: list[ImportRow], stored: list[Item], config: MemoryOSConfig
) -> list[ImportRow]:
    """The rows a merge writes: those the user does not have (facts and events renumbered on a clash), and the meta."""
    depth = len(repository.namespace(user))
    have: dict[tuple[str, str], Any] = {}
    pages: set[str] = set()
    meta: dict[str, Any] | None = None
    kept: list[ImportRow] = []
    for it in stored:
        tail = it.namespace[depth:]
        if not tail or tail[0] in DERIVED_PARTS:
            continue
        part = "stm" if tail[0] == "stm" else "/".join(tail)
        have[(part, it.key)] = it.value
        if part in ("stm", "pages"):
            pages.add(it.key)
        if part == "meta" and isinstance(it.value, dict):
            meta = dict(it.value)
        if part in _COUNTED:
            kept.append(ImportRow(part, list(tail), it.key, {}))
    imported_meta = next((row for row in rows if row.part == "meta"), None)
    seq = max(int((meta or {}).get("seq", 0)), int(imported_meta.value.get("seq", 0)) if imported_meta else 0)
    counter = seq
    out: list[ImportRow] = []
    for row in rows:
        current = have.get((row.part, row.key))
        if row.part == "meta":
            continue
        if row.page_id is not None:
            if row.page_id not in pages:  # a page id is one page, in STM or MTM: the stored one is kept
                out.append(row)
        elif row.part in ("facts/user", "facts/agent", "log") and current is not None and not _same(row, current):
            # ids numbered per user: the same key in two histories is two records, so both are kept
            counter += 1
            key = f"f_{counter:012d}" if row.part != "log" else f"{counter:012d}"
            out.append(ImportRow(row.part, row.namespace, key, {**row.value, "id": key}))
        elif current is None:  # pages, segments (ids made from their content), the persona: the stored one is kept
            out.append(row)
    check_counts(kept + [r for r in out if r.part in _COUNTED], config, stm=False)
    if imported_meta is not None or counter > seq:
        merged = _merge_meta(meta or {}, imported_meta.value if imported_meta else {})
        merged["seq"] = counter
        if merged != meta:
            out.append(ImportRow("meta", ["meta"], "state", merged))
    return out


def _same(row: ImportRow, stored: Any) -> bool:
    """Whether an imported fact or write event is the stored one of its key (a fact: the same text)."""
    if not isinstance(stored, dict):
        return False
    if row.part == "log":
        return bool(row.value == stored)
    return bool(row.value.get("summary") == stored.get("summary"))


def _merge_meta(stored: dict[str, Any], imported: dict[str, Any]) -> dict[str, Any]:
    """A merge's meta row: the stored one, with the later clock, the larger counter, the imported threads' tails."""
    value = {**imported, **stored}
    value["seq"] = max(int(stored.get("seq", 0)), int(imported.get("seq", 0)))
    clocks = [c for c in (stored.get("clock"), imported.get("clock")) if c]
    if clocks:
        value["clock"] = max(clocks, key=ensure_utc)
    for name in ("chain_tails", "chain_tail_labels"):
        tails = {**dict(imported.get(name) or {}), **dict(stored.get(name) or {})}
        if tails:
            value[name] = tails
    return value


def import_rows(
    repository: MemoryRepository, config: MemoryOSConfig, user: str, rows: list[ImportRow], mode: ImportMode
) -> Step[int]:
    """Step: write checked rows as the user's memory, by ``mode``; returns how many of them were written.

    The user's lock is held by the caller. Nothing is written when the mode
    refuses (a stored user and ``"refuse"``, a merge over a capacity).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("Hi", "Hello", user_id="u")
        >>> data = memory.export_user(user_id="u")
        >>> memory.import_user(data, user_id="u")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: import_user: user 'u' already has a memory; nothing was \
imported. Pass mode="replace" ...
        >>> memory.import_user(data, user_id="u", mode="merge"), memory.check(user_id="u")
        (0, [])
    """
    from langchain_memoryos.pipeline.invariants import check_state
    from langchain_memoryos.pipeline.repair import repair_state

    yield from repository.finish_deletion(user)  # never import next to a half-deleted user's rows
    root = repository.namespace(user)
    depth = len(root)
    if mode == "merge":
        stored = yield from repository.all_items(user)
        rows = _merged(repository, user, rows, stored, config)
    else:
        found = yield StoreBatch(tuple(SearchOp((*root, part), limit=1) for part in _RECORD_PARTS))
        exists = any(found)
        if exists and mode == "refuse":
            raise InvalidInputError(
                f"import_user: user {user!r} already has a memory; nothing was imported. Pass "
                'mode="replace" to delete it and import the export instead, or mode="merge" to add the '
                "export's items to it (those it has are kept), or import as another user_id."
            )
        if exists:
            yield from repository.delete_all(user)
        stored = []
    if not rows:
        return 0  # nothing to write (a merge that brings nothing new, an empty export)
    ops: list[PutOp] = [
        PutOp(repository.namespace(user, *(encode_label(x) for x in row.namespace)), row.key, row.value, index=False)
        for row in rows
    ]
    # derived state goes: the index snapshot and the journal (rebuilt from the records), and the version stamp is
    # new (never the export's), so every cache of this user, in any process, is stale and reloads
    ops += [PutOp(it.namespace, it.key, None) for it in stored if it.namespace[depth : depth + 1] == ("journal",)]
    ops.append(PutOp(repository.namespace(user, "snapshot"), "state", None))
    if is_hash_label(encode_label(user)):  # a long user id: list_users reads it back from the user's id row
        ops.append(PutOp(repository.namespace(user, "id"), "id", {"id": escape_id(user)}, index=False))
    ops.append(PutOp(repository.namespace(user, "version"), "v", {"v": uuid.uuid4().hex}, index=False))
    yield StoreBatch(tuple(ops))
    repository.invalidate(user)
    # what was written is loaded as check() loads it, and repaired as repair() does: a consistent user
    state = yield from repository.load(user, from_records=True)
    fixes = repair_state(state, config)
    if fixes:
        logger.warning("import_user %r: %d repairs after the import: %s", user, len(fixes), "; ".join(fixes[:10]))
    yield from flush(state)
    left = check_state(state, config)
    if left:  # pragma: no cover - the checks before the write leave nothing repair cannot fix
        logger.warning("import_user %r: problems left after the import: %s", user, "; ".join(left))
    return len(rows)
