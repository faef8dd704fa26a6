"""The read pipeline: the declared read stages (:data:`~langchain_memoryos.pipeline.stages.READ_STAGES`) run one by one.

The stages themselves are in :mod:`langchain_memoryos.retrieval.recall`; the
read graph (:mod:`langchain_memoryos.graph.read`) runs the same stages, one
per node.
"""

from __future__ import annotations

from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.pipeline.stages import READ_TABLE, run_stages
from langchain_memoryos.retrieval.recall import ReadRun
from langchain_memoryos.schema import MemoryContext
from langchain_memoryos.store.repository import MemoryRepository
from langchain_memoryos.store.settings import EngineSettings, StageContext

__all__ = ["read"]


def read(repo: MemoryRepository, settings: EngineSettings, r: ReadRun) -> Step[MemoryContext]:
    """Step: run a prepared retrieval through every read stage it routes to; its context.

    * STM: every page of the thread; with ``context_words``, the newest that
      fit in what the persona and facts leave, an over-long one shown cut
      (``… [cut: N more words]``) and older ones giving way;
    * LPM: the persona in full, and the top ``top_facts`` user facts and agent
      traits whose cosine is at least ``retrieval_similarity`` (``tau_r``);
    * MTM: pages ranked by ``page_ranking`` (see :mod:`~langchain_memoryos.retrieval.recall`),
      at most ``top_pages``, and — with ``context_words`` — only while the whole
      rendered context stays within that many words.

    ``MemoryOS.retrieve`` runs this under the user's lease (one driver run for
    all the stages); the read graph runs the same stages as nodes.

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> from langchain_memoryos.kernel.effects import run_sync
        >>> m = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
        >>> _ = m.add_turn("I play the cello.", "Lovely.", user_id="u", thread_id="t")
        >>> _ = m.add_turn("I moved to Oslo.", "Nice!", user_id="u", thread_id="t")  # the cello page goes to MTM
        >>> r = ReadRun("u", "t", "Which instrument do I play?")
        >>> ctx = run_sync(read(m.repository, m.settings, r), m._services)
        >>> [p.user_input for p in ctx.stm], [s.page.user_input for s in ctx.pages]
        (['I moved to Oslo.'], ['I play the cello.'])
        >>> ctx = run_sync(read(m.repository, m.settings, ReadRun("u", "t2", "cello?")), m._services)
        >>> [s.page.user_input for s in ctx.pages], ctx.stm  # another thread: t's STM page ranked too
        (['I play the cello.', 'I moved to Oslo.'], [])
    """
    yield from run_stages(READ_TABLE, StageContext(repo, settings), r)
    assert r.ctx is not None
    return r.ctx
