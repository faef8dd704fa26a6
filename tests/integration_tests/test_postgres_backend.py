"""The unit tests that run on every backend, run again on the real PostgreSQL server.

Every unit test that takes the ``make_memory`` fixture (the engine, AMU, classic memory, hostile
input, invariants …) runs in tests/unit_tests on InMemoryStore and SQLite. This module collects
the same test functions from every unit-test module, and tests/integration_tests/conftest.py gives
``make_memory`` its PostgreSQL parameter: each check runs here once more, as ``test_…[postgres]``.
A new backend test in tests/unit_tests is picked up without a change here.

The interrupted ``delete_user`` of test_deletion runs with a PostgresStore that fails in the middle
of the deletion.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.postgres import PostgresStore

import tests.unit_tests
from langchain_memoryos import MemoryOS
from langchain_memoryos.store.postgres import open_postgres
from tests.conftest import bulky_export, postgres_url, wipe_postgres
from tests.unit_tests import test_deletion as unit_deletion
from tests.unit_tests.test_deletion import CONFIG, MARK, ROWS, FailsMidDeletion, Setup, fill


def backend_tests() -> dict[str, Callable[..., Any]]:
    """The unit tests (module-level ``test_*`` functions) that take ``make_memory``, by name."""
    found: dict[str, Callable[..., Any]] = {}
    for info in pkgutil.iter_modules(tests.unit_tests.__path__):
        if not info.name.startswith("test_"):
            continue
        module = importlib.import_module(f"tests.unit_tests.{info.name}")
        for name, test in vars(module).items():
            if not (name.startswith("test_") and inspect.isfunction(test) and test.__module__ == module.__name__):
                continue
            if "make_memory" in inspect.signature(test).parameters:
                assert name not in found, f"two backend tests are named {name}: rename one"
                found[name] = test
    return found


BACKEND_TESTS = backend_tests()
globals().update(BACKEND_TESTS)


def test_every_backend_test_is_collected_here() -> None:
    """The engine, AMU, classic-memory, hostile-input and invariant checks are among them."""
    modules = {test.__module__.rsplit(".", 1)[1] for test in BACKEND_TESTS.values()}
    assert {"test_amu", "test_classic_memory", "test_engine", "test_hostile_input", "test_invariants"} <= modules
    assert all(globals()[name] is test for name, test in BACKEND_TESTS.items())


#: test_deletion's interrupted deletion, on the failing PostgresStore of ``setup`` below
test_an_interrupted_deletion_is_finished_by_the_next_access = (
    unit_deletion.test_an_interrupted_deletion_is_finished_by_the_next_access
)


class FailingPostgresStore(FailsMidDeletion, PostgresStore):
    pass


@pytest.fixture(scope="module")
def bulky() -> dict[str, Any]:
    return bulky_export(ROWS, MARK, user_id="ana")


@pytest.fixture(params=["postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: Path, bulky: dict[str, Any]) -> Iterator[Setup]:
    """test_deletion's setup on PostgreSQL: a failing PostgresStore, and another memory on the same database."""
    target = postgres_url()
    wipe_postgres(target)
    backend = open_postgres(target)
    store = FailingPostgresStore(backend.pool)
    memory = MemoryOS(store, process_locks=backend.locks, config=CONFIG)
    other = MemoryOS.from_postgres(target, config=CONFIG)
    try:
        yield fill(Setup(memory, store, other, request.param, target), bulky)
    finally:
        other.close()
        backend.close()
