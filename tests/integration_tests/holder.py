"""A process that keeps its memory's helpers, for the integration tests: ``python holder.py BACKEND TARGET USER``.

BACKEND is ``postgres`` (TARGET a URL) or ``sqlite`` (TARGET a file). It adds
one turn for USER (on PostgreSQL its lock's pooled connection is made then),
then a large ``add_turns`` for USER (the bulk write's page analyser starts),
and prints ``bulk <n>`` (flushed); then it takes USER's write lock (on
PostgreSQL an advisory lock on that pooled connection), prints ``locked``
(flushed) and waits, holding it, until it is killed.
"""

from __future__ import annotations

import datetime as dt
import sys
import threading

from langchain_memoryos import MemoryOS

T0 = dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)
TOPICS = ["hiking in the Alps", "baking sourdough", "learning Norwegian", "fixing my bike", "jazz piano practice"]


def main(backend: str, target: str, user: str) -> int:
    memory = MemoryOS.from_postgres(target) if backend == "postgres" else MemoryOS.from_sqlite(target)
    memory.add_turn("I just started a new job.", "Congratulations!", user_id=user, timestamp=T0)
    turns = [
        {
            "user_input": f"Day {i}: I spent the evening {TOPICS[i % len(TOPICS)]}.",
            "agent_response": "Sounds good.",
            "timestamp": T0 + dt.timedelta(hours=i + 1),
        }
        for i in range(80)
    ]
    reports = memory.add_turns(turns, user_id=user)
    print(f"bulk {sum(r.added for r in reports)}", flush=True)
    with memory.repository.locked(user):
        print("locked", flush=True)
        threading.Event().wait()
    return 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
