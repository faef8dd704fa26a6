"""LPM, the long-term tier: a segment whose heat reaches tau is promoted: persona update, and agent traits to AMU.

A page's facts reach the knowledge base when the page is added (``chain_link``);
a promotion does not send them again.
"""

from __future__ import annotations

import copy
import logging

from langchain_memoryos.amu import RecordWrite, embed_summaries, prejudge_relations
from langchain_memoryos.kernel.controller import PromotionResult
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.kernel.judgements import PromoteSegment
from langchain_memoryos.schema import ensure_utc
from langchain_memoryos.scoring import hot_segments, segment_heat
from langchain_memoryos.store.settings import StageContext
from langchain_memoryos.tiers.turn import TurnWrite, after_record

__all__ = ["stage_persona_promote"]

logger = logging.getLogger("langchain_memoryos")


def stage_persona_promote(ctx: StageContext, t: TurnWrite) -> Step[None]:
    """``persona_promote``: the first hot segment updates the persona and queues the agent traits it finds for AMU.

    The controller's further records of kind ``agent`` (how the assistant
    should behave) are embedded in one batch and their independent relation
    judgements made ahead (concurrently in the async path); user facts were
    written as their pages were added. Then ``L_interaction`` resets to 0.
    """
    settings = ctx.settings
    config = settings.config
    state = t.user
    seg = hot_segments(state.segments.values(), state.clock, settings.config)[0]
    clock = state.clock
    pages = [state.pages[p] for p in seg.pending_page_ids if p in state.pages]
    result: PromotionResult = yield PromoteSegment(seg, pages, state.persona)
    now = clock or ensure_utc(None)
    state.persona.user_profile = dict(result.user_profile)
    state.persona.user_traits = {k: list(v) for k, v in result.user_traits.items()}
    state.persona.updated_at = now
    state.save_persona()
    if result.segment_summary:
        seg.summary = result.segment_summary
    if result.segment_keywords:
        seg.keywords = list(result.segment_keywords)[: config.segment_keywords]
    records = [copy.deepcopy(r) for r in result.records if r.kind == "agent"]
    vectors = yield from embed_summaries(state, settings.amu, records)
    prejudged = yield from prejudge_relations(state, records, vectors, settings.amu)
    t.records = [
        RecordWrite(r, now=now, source="promotion", vector=vectors.get(r.summary), prejudged=prejudged.get(i))
        for i, r in enumerate(records)
    ]
    seg.pending_page_ids = []
    seg.l_interaction = 0
    seg.promotions += 1
    seg.heat = segment_heat(seg, clock, config)
    state.put_segment(seg)
    t.report.segments_promoted.append(seg.id)
    t.next = after_record(t, settings)
