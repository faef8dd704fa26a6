"""Configuration: every knob of the memory, with the papers' defaults.

The defaults follow the MemoryOS paper (§4 "Implementation Details") and the AMU
paper (§3, Appendix A.2). Where the official MemoryOS code differs from the paper
(STM 10, 2000 segments, LFU eviction, wall-clock recency) the paper wins and the
value stays configurable.

One thing differs by default, measured on LoCoMo (``memoryos bench locomo``):
mid-term pages are ranked over the whole MTM by dense + BM25 rank fusion and
fill a context word budget (``page_ranking="hybrid"``, ``context_words=1000``),
because the paper's two-stage ranking (top segments, then pages by cosine)
finds far less evidence with a small offline embedder. :meth:`MemoryOSConfig.paper`
gives the paper's settings exactly.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_memoryos.errors import ConfigError, ConfigTypeError

__all__ = [
    "DEFAULT_AGENT_PROFILE",
    "MODEL_THRESHOLDS",
    "PAGE_RANKINGS",
    "PAGE_UNITS",
    "STM_VIEWS",
    "MemoryOSConfig",
    "ModelThresholds",
]

#: How mid-term pages are ranked at retrieval (see ``MemoryOSConfig.page_ranking``).
PAGE_RANKINGS = ("hybrid", "segments")
#: The ways the thread's own STM is shown (``MemoryOSConfig.stm_view``).
STM_VIEWS = ("compact", "full", "messages")
#: What fills the word budget (``MemoryOSConfig.page_units``): turns, or whole pages.
PAGE_UNITS = ("turns", "pages")

DEFAULT_AGENT_PROFILE = (
    "A helpful, attentive personal assistant that remembers the user across conversations "
    "and adapts to their preferences."
)


@dataclass(frozen=True)
class ModelThresholds:
    """Similarity thresholds that depend on the embedding model.

    Cosine similarities are not comparable across embedding models, so the
    thresholds that compare two vectors live here, keyed by model name in
    :data:`MODEL_THRESHOLDS`.

    Attributes:
        write_similarity: AMU ``tau_s``: minimum cosine for an existing record to be
            a duplicate/update candidate of a new one.
        retrieval_similarity: AMU ``tau_r``: minimum cosine between the query and a
            fact for the fact to be injected.
        duplicate_similarity: cosine above which the heuristic judge calls two
            records duplicates (unless a same-slot cue says update).
        chain_similarity: cosine above which the heuristic controller links a page
            to the previous page of its dialogue chain.

    Example:
        >>> MemoryOSConfig().thresholds("all-MiniLM-L6-v2").retrieval_similarity  # MiniLM's own values
        0.35
        >>> MemoryOSConfig().thresholds("some-other-model").retrieval_similarity  # the stricter defaults
        0.55
    """

    write_similarity: float = 0.6
    retrieval_similarity: float = 0.3
    duplicate_similarity: float = 0.9
    chain_similarity: float = 0.35


#: Per-embedding-model defaults. ``"default"`` applies to unknown models.
MODEL_THRESHOLDS: dict[str, ModelThresholds] = {
    # AMU: tau_s = 0.6. MiniLM scores a question against a statement lower than
    # Qwen3-Embedding does; facts are matched with the question rewritten in the
    # third person as well ("Where do I live?" vs "The user lives in Denver now."
    # is 0.27 as asked, 0.63 rewritten), and tau_r (0.55 in the paper) is 0.35.
    "all-MiniLM-L6-v2": ModelThresholds(
        write_similarity=0.6,
        retrieval_similarity=0.35,
        duplicate_similarity=0.9,
        chain_similarity=0.35,
    ),
    "default": ModelThresholds(
        write_similarity=0.6,
        retrieval_similarity=0.55,
        duplicate_similarity=0.92,
        chain_similarity=0.5,
    ),
}


@dataclass(frozen=True)
class MemoryOSConfig:
    """Every setting of the memory, validated on construction.

    Attributes:
        stm_capacity: dialogue pages kept per thread in short-term memory (paper: 7).
        mtm_max_segments: segments kept per user in mid-term memory before the
            coldest is evicted (paper: 200).
        segment_threshold: ``theta``; a page joins the best segment when
            ``F_score = cos + Jaccard > theta`` (paper: 0.6).
        heat_alpha: weight of ``N_visit`` in the heat (paper: 1).
        heat_beta: weight of ``L_interaction`` in the heat (paper: 1).
        heat_gamma: weight of the recency term in the heat (paper: 1).
        recency_tau_seconds: ``mu`` in ``exp(-dt / mu)`` (paper: 1e7 s).
        promotion_heat: ``tau``; a segment whose heat reaches it is promoted to
            long-term persona memory (paper: 5).
        top_segments: ``m``; segments selected at retrieval when
            ``page_ranking="segments"`` (paper: 5).
        top_pages: ``k``; the most mid-term pages a retrieval returns (paper: 10;
            default 40, with ``context_words`` as the binding limit).
        page_ranking: ``"hybrid"`` (default) ranks every mid-term page by
            reciprocal-rank fusion of its cosine and its BM25 score against the
            query; ``"segments"`` is the paper's two stages: the top
            ``top_segments`` segments by ``F_score``, then pages inside them by cosine.
        rrf_k: rank offset of the fusion (small values trust the top ranks more;
            10, chosen by leave-one-conversation-out cross-validation on LoCoMo dev).
        chain_weights: weights of a page's best 2-page and 3-page *dialogue-chain
            window* (consecutive pages of one thread at most ``chain_gap_seconds``
            apart), each window ranked by the same fusion over its joined words and
            summed vectors (:mod:`langchain_memoryos.index.chain`). ``(0, 0)``
            is the flat hybrid ranking. Default ``(0.5, 1.5)``: what leave-one-conversation-out
            cross-validation chose on every fold of the LoCoMo dev set.
        date_weight: added to the score of a page dated on a day (or month) the
            query names ("on 9 November, 2022", "in May 2023"); 0 turns it off.
        chain_gap_seconds: the longest pause between two pages of one thread that
            still chains them (default 30 minutes: a new session starts a new chain).
        stm_view: how the thread's own STM is shown: ``"compact"`` (default) shows
            its newest page on one short line and lets the older ones compete with
            the mid-term pages in the ranking, so the live thread gets as much
            evidence as a fresh one; ``"full"`` shows every STM page first, as the paper;
            ``"messages"`` returns the whole STM in ``MemoryContext.stm`` for the caller
            to send as chat messages (the adapters that turn STM into history do),
            spending none of the word budget on it and ranking none of its pages.
        page_units: what fills the word budget: ``"turns"`` (default) — each side of a
            ranked page on its own, best first, a page shown whole when both its turns
            are taken (:mod:`langchain_memoryos.retrieval.turns`); ``"pages"`` — whole
            pages only (the paper preset). Without a budget whole pages are shown.
        speaker_weight: with turn packing, added to the score of a turn spoken by the
            one speaker the query names ("What does Ana paint?" → Ana's turns first);
            0 turns it off. Default 0.2: chosen by leave-one-conversation-out
            cross-validation on every fold of the LoCoMo dev set.
        lexical_weight: weight of the BM25 ranking in the fusion (0 turns it off).
        dense_weight: weight of the cosine ranking in the fusion.
        context_words: word budget of the whole context (``MemoryContext.to_prompt()``):
            the thread's STM, persona, facts and agent traits come first, then
            mid-term pages in rank order while they fit. ``None``: no budget
            (``top_pages`` pages).
        top_facts: user facts and agent traits each returned at retrieval (paper: 10).
        facts_words: with ``context_words``, the most words the user facts take (at most half
            the budget); a fact is shown only when it says what the shown pages do not (a resolved
            date or name, a fact whose page did not fit: :mod:`langchain_memoryos.retrieval.facts`).
            0 shows no fact under a budget.
        user_kb_capacity: the most user facts kept (default 2,000; the paper's knowledge base,
            ``paper()``: 100); beyond it the least useful fact goes, logged as an ``evicted`` write
            event with its reason (:data:`~langchain_memoryos.amu.LEAST_USEFUL`).
        agent_traits_capacity: agent-traits size; beyond it the least useful trait goes (paper: 100).
        gate_threshold: AMU ``tau_g``; a typed record is admitted when its gate
            score reaches it. The binary factors make the gate a validity filter,
            so this is effectively a minimum confidence.
        write_similarity: AMU ``tau_s``; ``None`` takes the embedding model's default.
        retrieval_similarity: AMU ``tau_r``; ``None`` takes the model's default.
        duplicate_similarity: heuristic duplicate band; ``None`` takes the model's default.
        chain_similarity: heuristic chain-link threshold; ``None`` takes the model's default.
        segment_keywords: keywords kept per segment (the most frequent of its pages).
        page_keywords: keywords extracted per page.
        agent_profile: the assistant's fixed role and character (the paper's agent
            profile), shown in every context; can be set per user with
            ``MemoryOS.set_agent_profile``. Default none: no words are spent on an
            agent nobody described (``MemoryOSConfig.paper()`` uses
            :data:`DEFAULT_AGENT_PROFILE`).
        max_embedding_chars: text longer than this is truncated (with a warning)
            before embedding; it is always stored whole.
        stm_idle_seconds: STM is per thread; when a user's *other* thread has had
            no turn for this long on the conversation clock, its pages move to
            MTM as if they had overflowed, so an abandoned thread's pages still
            reach mid- and long-term memory. ``None`` keeps them in STM for ever
            (the paper has a single conversation, so it has no such rule).
            Idleness is measured on the conversation clock, but never past
            this machine's wall clock (while ``max_clock_skew_seconds`` is
            set): a turn dated ahead of the wall clock (a fast client clock, a
            local time passed as UTC) cannot make another thread look idle.
        judgement_timeout_seconds: deadline of one model judgement, retries
            included (``MemoryOS(model=...)``'s LLMController). When it passes, the
            heuristic controller decides instead (logged, and counted as a
            fallback in ``stats().llm_usage``), so a hung model never hangs a turn.
            ``None``: no deadline.
        max_clock_skew_seconds: how far ahead of this machine's clock a
            timestamp given to ``add_turn``, ``add_fact`` or ``import_user`` may
            lie; a later one is refused with a ``ValueError`` (the conversation
            clock never goes back, so one turn dated in year 9999 would
            otherwise make every thread idle and stop recency for good).
            ``None`` turns the check off (and measures idleness on the
            conversation clock alone, e.g. to replay conversations dated in
            the future).
        max_cache_bytes: the most memory (estimated, in bytes) the users a
            ``MemoryOS`` keeps loaded may take (default 256 MiB). Past it, the users
            least recently used are dropped from the cache, and loaded again from
            the store when next used (the store holds everything: nothing is lost).
            Every ``MemoryOS`` over one ``InMemoryStore`` object shares one cache,
            bounded by the first one's value.
        max_message_chars: the longest text, in characters, of each side of a turn
            (default 100,000: about 25,000 tokens). ``add_turn`` refuses a longer
            one with a ``ValueError``; the agent middleware and the remember node
            store it cut to this length with a visible marker, so an agent run
            never fails on a huge message.

    Example:
        >>> cfg = MemoryOSConfig(stm_capacity=5)
        >>> cfg.stm_capacity, cfg.mtm_max_segments
        (5, 200)
    """

    stm_capacity: int = 7
    mtm_max_segments: int = 200
    segment_threshold: float = 0.6
    heat_alpha: float = 1.0
    heat_beta: float = 1.0
    heat_gamma: float = 1.0
    recency_tau_seconds: float = 1e7
    promotion_heat: float = 5.0
    top_segments: int = 5
    top_pages: int = 40
    page_ranking: str = "hybrid"
    rrf_k: float = 10.0
    chain_weights: tuple[float, float] = (0.5, 1.5)
    date_weight: float = 0.2
    chain_gap_seconds: float = 1800.0
    stm_view: str = "compact"
    page_units: str = "turns"
    speaker_weight: float = 0.2
    lexical_weight: float = 1.0
    dense_weight: float = 1.0
    context_words: int | None = 1000
    top_facts: int = 10
    facts_words: int = 50
    user_kb_capacity: int = 2000
    agent_traits_capacity: int = 100
    gate_threshold: float = 0.5
    write_similarity: float | None = None
    retrieval_similarity: float | None = None
    duplicate_similarity: float | None = None
    chain_similarity: float | None = None
    segment_keywords: int = 12
    page_keywords: int = 8
    agent_profile: str = ""
    max_embedding_chars: int = 8000
    stm_idle_seconds: float | None = 86400.0
    judgement_timeout_seconds: float | None = 30.0
    max_clock_skew_seconds: float | None = 86400.0
    max_cache_bytes: int = 256 * 1024 * 1024
    max_message_chars: int = 100_000

    def __post_init__(self) -> None:
        """Every field checked against :data:`_CHECKS`, in its order: the first broken rule raises.

        Raises:
            ConfigTypeError: a field of the wrong type (also a ``TypeError``).
            ConfigError: a field out of its range (also a ``ValueError``).
        """
        for names, check in _CHECKS:
            for name in names:
                error = check(self, name)
                if error is not None:
                    raise error

    @classmethod
    def paper(cls, **changes: Any) -> MemoryOSConfig:
        """The MemoryOS paper's settings exactly: two-stage segment → page ranking, 10 pages, no word budget.

        Args:
            **changes: fields to change on top of the preset.

        Returns:
            The paper-faithful config.

        Example:
            >>> cfg = MemoryOSConfig.paper()
            >>> cfg.page_ranking, cfg.top_pages, cfg.context_words, cfg.user_kb_capacity
            ('segments', 10, None, 100)
        """
        changes.setdefault("agent_profile", DEFAULT_AGENT_PROFILE)  # the paper's fixed agent persona
        changes.setdefault("user_kb_capacity", 100)  # the paper's 100-fact knowledge base
        return cls(
            page_ranking="segments", top_pages=10, context_words=None, stm_view="full", page_units="pages", **changes
        )

    @classmethod
    def preset(cls, name: str, **changes: Any) -> MemoryOSConfig:
        """A named preset: ``"default"`` (measured best offline) or ``"paper"``.

        Example:
            >>> MemoryOSConfig.preset("default").page_ranking
            'hybrid'
        """
        if name == "default":
            return cls(**changes)
        if name == "paper":
            return cls.paper(**changes)
        raise ConfigError(f"unknown MemoryOSConfig preset {name!r}; use 'default' or 'paper'.")

    def thresholds(self, model_name: str | None) -> ModelThresholds:
        """Resolve the similarity thresholds for an embedding model.

        Explicit values on the config win over the per-model defaults in
        :data:`MODEL_THRESHOLDS`.

        Args:
            model_name: the embedding model's name (``None`` for unknown).

        Returns:
            The thresholds to use.

        Example:
            >>> MemoryOSConfig(write_similarity=0.7).thresholds("all-MiniLM-L6-v2").write_similarity
            0.7
        """
        base = MODEL_THRESHOLDS.get(model_name or "", MODEL_THRESHOLDS["default"])
        overrides = {
            name: getattr(self, name)
            for name in ("write_similarity", "retrieval_similarity", "duplicate_similarity", "chain_similarity")
            if getattr(self, name) is not None
        }
        return dataclasses.replace(base, **overrides) if overrides else base

    def replace(self, **changes: Any) -> MemoryOSConfig:
        """Return a copy with some fields changed (validated again).

        Args:
            **changes: field names and their new values.

        Returns:
            The new config.

        Example:
            >>> MemoryOSConfig().replace(stm_capacity=3).stm_capacity
            3
            >>> MemoryOSConfig().replace(stm_capacity=0)
            Traceback (most recent call last):
            ...
            langchain_memoryos.errors.ConfigError: MemoryOSConfig.stm_capacity must be >= 1, got 0.
        """
        return dataclasses.replace(self, **changes)


# -- the validation table ------------------------------------------------------------------------------------------
#: A rule: the error for field ``name`` of the config, or ``None`` when it holds.
_Check = Callable[[MemoryOSConfig, str], ConfigError | None]


def _rule(
    holds: Callable[[Any], bool],
    text: str,
    *,
    error: type[ConfigError] = ConfigError,
    convert: Callable[[Any], Any] | None = None,
) -> _Check:
    """A rule that ``holds`` for the field's value (``convert``-ed first), else ``error`` with ``text`` said of it.

    ``text`` follows ``MemoryOSConfig.<name> `` and may name ``{value}`` (the
    value, converted) and ``{value!r}``.

    Example:
        >>> check = _rule(lambda v: v > 5, "must be > 5, got {value}.")
        >>> check(MemoryOSConfig(stm_capacity=7), "stm_capacity") is None
        True
        >>> check(MemoryOSConfig(stm_capacity=3), "stm_capacity")
        ConfigError('MemoryOSConfig.stm_capacity must be > 5, got 3.')
    """

    def check(config: MemoryOSConfig, name: str) -> ConfigError | None:
        value = getattr(config, name)
        if convert is not None:
            value = convert(value)
        return None if holds(value) else error(f"MemoryOSConfig.{name} {text.format(value=value)}")

    return check


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _whole(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int)


def _two_weights(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(w, (int, float)) and math.isfinite(w) and w >= 0 for w in value)
    )


def _whole_at_least(low: int) -> tuple[_Check, _Check]:
    """An int (else a ``ConfigTypeError``), then one ``>= low``."""
    return (
        _rule(_whole, "must be an int, got {value!r}.", error=ConfigTypeError),
        _rule(lambda v: v >= low, f"must be >= {low}, got {{value}}."),
    )


def _both(first: _Check, second: _Check) -> _Check:
    """``first``, then ``second`` when ``first`` holds."""
    return lambda config, name: first(config, name) or second(config, name)


def _one_of(choices: tuple[str, ...]) -> _Check:
    return _rule(lambda v: v in choices, f"must be one of {choices}, got {{value!r}}.")


def _weights_nonzero(config: MemoryOSConfig, name: str) -> ConfigError | None:
    if config.lexical_weight == 0 and config.dense_weight == 0:
        return ConfigError("MemoryOSConfig: lexical_weight and dense_weight cannot both be 0.")
    return None


_FINITE_NON_NEGATIVE = _rule(
    lambda v: math.isfinite(v) and v >= 0, "must be a finite number >= 0, got {value}.", convert=float
)

#: What every field must be, in the order checked (a config with several broken fields names the first).
_CHECKS: tuple[tuple[tuple[str, ...], _Check], ...] = (
    (
        (
            "stm_capacity",
            "mtm_max_segments",
            "top_segments",
            "top_pages",
            "user_kb_capacity",
            "agent_traits_capacity",
            "segment_keywords",
            "page_keywords",
            "max_embedding_chars",
            "max_cache_bytes",
            "max_message_chars",
        ),
        _both(*_whole_at_least(1)),
    ),
    (("top_facts", "facts_words"), _both(*_whole_at_least(0))),
    (("heat_alpha", "heat_beta", "heat_gamma", "promotion_heat"), _FINITE_NON_NEGATIVE),
    (("recency_tau_seconds",), _rule(lambda v: math.isfinite(v) and v > 0, "must be > 0, got {value}.")),
    (
        ("segment_threshold",),
        _rule(lambda v: 0.0 <= v <= 2.0, "is compared with cos + Jaccard and must lie in [0, 2], got {value}."),
    ),
    (("gate_threshold",), _rule(lambda v: 0.0 <= v <= 1.0, "must lie in [0, 1], got {value}.")),
    (
        ("write_similarity", "retrieval_similarity", "duplicate_similarity", "chain_similarity"),
        _rule(lambda v: v is None or -1.0 <= v <= 1.0, "is a cosine and must lie in [-1, 1], got {value}."),
    ),
    (
        ("stm_idle_seconds",),
        _rule(lambda v: v is None or (math.isfinite(v) and v >= 0), "must be >= 0 or None, got {value}."),
    ),
    (
        ("judgement_timeout_seconds",),
        _rule(
            lambda v: v is None or (_number(v) and math.isfinite(v) and v > 0),
            "must be a number of seconds > 0 or None (no deadline), got {value!r}.",
        ),
    ),
    (
        ("max_clock_skew_seconds",),
        _both(
            _rule(lambda v: v is None or (_number(v) and v >= 0), "must be >= 0 or None, got {value!r}."),
            _rule(lambda v: v is None or math.isfinite(v), "must be finite; pass None to turn the check off."),
        ),
    ),
    (("page_ranking",), _one_of(PAGE_RANKINGS)),
    (("rrf_k", "lexical_weight", "dense_weight"), _FINITE_NON_NEGATIVE),
    (
        ("chain_weights",),
        _rule(
            _two_weights,
            "must be a tuple of two numbers >= 0 (2- and 3-page windows), got {value!r}.",
        ),
    ),
    (("page_units",), _one_of(PAGE_UNITS)),
    (
        ("date_weight", "chain_gap_seconds", "speaker_weight"),
        _rule(lambda v: _number(v) and math.isfinite(v) and v >= 0, "must be a finite number >= 0, got {value!r}."),
    ),
    (("stm_view",), _one_of(STM_VIEWS)),
    (("lexical_weight",), _weights_nonzero),
    (
        ("context_words",),
        _rule(lambda v: v is None or (_whole(v) and v >= 1), "must be an int >= 1 or None, got {value!r}."),
    ),
    (("agent_profile",), _rule(lambda v: isinstance(v, str), "must be a string.", error=ConfigTypeError)),
)
