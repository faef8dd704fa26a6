"""A writer process for the integration tests: ``python writer.py BACKEND TARGET USER THREAD START COUNT``.

``python writer.py retrieve TARGET USER N`` instead runs N retrievals on PostgreSQL (each visit heats
the segments it reads) and prints ``visits <total segments visited>``.

``python writer.py hang BACKEND TARGET USER`` writes two turns for USER with a chat model whose second
call (the second page's analysis) never returns: it prints ``judging`` once that call has started, then
hangs until it is killed.
``python writer.py delete BACKEND TARGET USER`` opens the memory, prints ``ready`` (flushed), deletes the
user and prints ``deleted <count>``.

BACKEND is ``postgres`` (TARGET a URL) or ``sqlite`` (TARGET a file). It adds
COUNT turns numbered from START, each with ``turn_id`` ``"<USER>:<i>"``, and
prints ``ack <i>`` (flushed) after each ``add_turn`` has returned — the turns
the caller may count on.
"""

from __future__ import annotations

import datetime as dt
import os
import sys

from langchain_memoryos import MemoryOS, MemoryOSConfig

T0 = dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)
TOPICS = ["hiking in the Alps", "baking sourdough", "learning Norwegian", "fixing my bike", "jazz piano practice"]


def retrieve(target: str, user: str, n: int) -> int:
    visits = 0
    with MemoryOS.from_postgres(target) as memory:
        for i in range(n):
            visits += len(memory.retrieve(f"What did I do about {TOPICS[i % len(TOPICS)]}?", user_id=user).segments)
    print(f"visits {visits}", flush=True)
    return 0


def hang(backend: str, target: str, user: str) -> int:
    import threading

    from tests.scripted_model import ScriptedToolModel, page_answer

    def forever(messages: object) -> dict[str, object]:
        print("judging", flush=True)
        threading.Event().wait()
        raise AssertionError("unreachable")

    # the first page's analysis (made as it is added) is answered; the second's never returns
    model = ScriptedToolModel(script={"PageAnalysisOutput": [page_answer("The user plays the cello."), forever]})
    config = MemoryOSConfig(stm_capacity=1)
    open_memory = MemoryOS.from_postgres if backend == "postgres" else MemoryOS.from_sqlite
    with open_memory(target, model=model, config=config) as memory:
        memory.add_turn("I play the cello.", "Lovely.", user_id=user, timestamp=T0)  # its one model call answered
        print("ack 0", flush=True)
        memory.add_turn("I moved to Bergen.", "Nice!", user_id=user, timestamp=T0 + dt.timedelta(minutes=1))
    return 0


def delete(backend: str, target: str, user: str) -> int:
    with MemoryOS.from_postgres(target) if backend == "postgres" else MemoryOS.from_sqlite(target) as memory:
        print("ready", flush=True)
        print(f"deleted {memory.delete_user(user_id=user)}", flush=True)
    return 0


def main() -> int:
    if sys.argv[1] == "retrieve":
        return retrieve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    if sys.argv[1] == "hang":
        return hang(sys.argv[2], sys.argv[3], sys.argv[4])
    if sys.argv[1] == "delete":
        return delete(sys.argv[2], sys.argv[3], sys.argv[4])
    backend, target, user, thread, start, count = sys.argv[1:7]
    config = MemoryOSConfig(mtm_max_segments=10_000)  # no heat eviction: every page must stay
    memory = (
        MemoryOS.from_postgres(target, config=config)
        if backend == "postgres"
        else MemoryOS.from_sqlite(target, config=config)
    )
    # MEMORYOS_TEST_SNAPSHOT_EVERY=n: a new index snapshot every n flushes (the tests of torn snapshots)
    memory.repository.snapshot_every = int(os.environ.get("MEMORYOS_TEST_SNAPSHOT_EVERY", "500"))
    with memory:
        for i in range(int(start), int(start) + int(count)):
            memory.add_turn(
                f"Note {i} from {user}: today I spent time {TOPICS[i % len(TOPICS)]}.",
                f"Thanks for note {i}.",
                user_id=user,
                thread_id=thread,
                timestamp=T0 + dt.timedelta(minutes=i),
                turn_id=f"{user}:{i}",
            )
            print(f"ack {i}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
