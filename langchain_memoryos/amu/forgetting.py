"""Forget: a fact goes with the sentences it was made from, everywhere they live.

``MemoryOS.forget`` names what to forget — a fact, a page, or a query — and
this module works out what that takes (:func:`plan_forget`, pure: it reads the
user's state and changes nothing) and then does it (:func:`apply_forget`):

* **Facts.** The fact named, the facts made from a forgotten page, and — for a
  query — every fact that holds all of the query's content words.
* **Sentences.** In each page a forgotten fact came from, the sentences that
  made it: a sentence holding at least half of the fact's content words (its
  subject's name and "user" set aside), on either side of the page (an answer
  that repeats the user's words goes too). For a query: every sentence holding
  all of its content words. A page named by id goes whole.
* **Pages.** A page keeps its other sentences, re-embedded and re-indexed
  (vectors, BM25, chain windows); a page with nothing left is deleted, and its
  segment loses it (centroid recomputed; a segment left empty is deleted).
* **What was derived from them.** The *forgotten words* are the content words
  of what was removed that no remaining page still says. Every segment keyword
  and summary sentence, chain meta, page candidate, profile entry and trait
  holding one of them is dropped, and every write-log event about a forgotten
  fact or holding one of them has its text scrubbed (``[deleted]``: the
  event stays, as do its id, action and time) — its relations' reasons too.
* **Tombstones.** A deleted page leaves a salted hash of its key and of its two
  texts in the user's meta (the salt is the user's own, random), so that the
  same turn added again (``add_turn``) or a resent history (``add_messages``)
  does not bring it back; a redacted page keeps the salted hash of its
  original texts for the same reason.

The user's next flush writes a fresh snapshot (the index cache, which holds the
pages' words) and drops the journal; on SQLite the write-ahead log is then
checkpointed and deleted rows are overwritten (``secure_delete``), so the text
is in no byte of the files. PostgreSQL keeps dead row versions until ``VACUUM``
(``MemoryOS.vacuum``).

Example:
    >>> content_words("Forget that I'm allergic to peanuts!")
    ['forget', 'allerg', 'peanut']
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field

from langchain_memoryos.controllers.facts import side_requests
from langchain_memoryos.index.lexical import tokenize
from langchain_memoryos.kernel.effects import Embed, Step
from langchain_memoryos.schema import DialoguePage, FactKind, MemoryRecord, Segment, WriteEvent
from langchain_memoryos.schema.pages import split_speaker
from langchain_memoryos.store.repository import MemoryRepository, UserState
from langchain_memoryos.store.settings import embedding_text

__all__ = [
    "REDACTED",
    "ForgetPlan",
    "apply_forget",
    "content_words",
    "forget_request",
    "forgotten_page",
    "plan_forget",
    "query_words",
    "redact_request",
    "request_object",
    "turn_digest",
]

#: What a scrubbed text reads.
REDACTED = "[deleted]"
#: The share of a fact's content words a sentence must hold to be one the fact was made from.
SOURCE_SHARE = 0.5
#: Words that name the person, not what is said about them.
_GENERIC = frozenset({"user", "assist"})
#: Words of a request that are not what it is about ("please forget my allergy").
_POLITE = frozenset({"pleas", "kind", "thank", "thx", "forget", "rememb", "delet", "eras", "anymor"})
#: A query word matches a word of the text when their stems are equal, or one starts the other and the
#: shorter has at least this many letters ("allergy" and "allergic": allergi, allerg).
PREFIX_LETTERS = 5
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
#: What leads a request's object without being what it is about ("that", "what I told you about").
_LEAD_IN = re.compile(
    r"^(?:(?:the\s+fact\s+)?that|about|(?:what|anything|everything)(?:\s+(?:i|you)\s+"
    r"(?:said|told\s+you|mentioned|know|shared|remember))?(?:\s+(?:about|of))?|"
    r"(?:i|you)\s+(?:said|told\s+you|mentioned)(?:\s+(?:about|that))?)\s+",
    re.IGNORECASE,
)
_TRAIL = re.compile(r"[\s,]*(?:(?:please|thanks|thank\s+you|anymore|any\s+more)[\s,]*)*[.!?]*\s*$", re.IGNORECASE)


def content_words(text: str) -> list[str]:
    """The text's content words, stemmed (as BM25 indexes them), in order and without repeats.

    Example:
        >>> content_words("The user is allergic to peanuts; peanuts!")
        ['user', 'allerg', 'peanut']
    """
    return list(dict.fromkeys(tokenize(text)))


def query_words(query: str) -> set[str]:
    """What a forget query is about: its content words without "please", "forget", "user" and the like.

    Example:
        >>> sorted(query_words("Please forget the user's allergy"))
        ['allergi']
    """
    return set(content_words(query)) - _POLITE - _GENERIC


def _word_in(word: str, words: set[str]) -> bool:
    if word in words:
        return True
    return any(
        min(len(word), len(other)) >= PREFIX_LETTERS and (other.startswith(word) or word.startswith(other))
        for other in words
    )


def _all_in(wanted: set[str], text: str) -> bool:
    words = set(tokenize(text))
    return bool(wanted) and all(_word_in(w, words) for w in wanted)


def forget_request(text: str) -> str | None:
    """What a message asks to forget ("Forget that I'm allergic to peanuts." → "I'm allergic to peanuts"), or ``None``.

    The request is read as the controller reads it
    (:func:`~langchain_memoryos.controllers.facts.side_requests`, one
    reading for both: the page's analysis marks it and makes no fact of it,
    ``MemoryOS.add_turn`` carries it out with ``forget(query=...)`` and
    stores the turn with the forgotten words cut); the object loses its
    lead-in ("that", "what I said about") and a closing "please", and must
    have content words.

    Example:
        >>> forget_request("Please forget that I'm allergic to peanuts.")
        "I'm allergic to peanuts"
        >>> forget_request("Forget the user's allergy please."), forget_request("Don't remember my address!")
        ("the user's allergy", 'my address')
        >>> forget_request("Can you forget what I told you about my divorce?")
        'my divorce'
        >>> forget_request("I forgot my keys."), forget_request("Forget it, never mind.") is None
        (None, True)
    """
    for about in side_requests(split_speaker(text)[1]):
        what = request_object(about)
        if query_words(what):
            return what
    return None


def request_object(about: str) -> str:
    """A forget request's object as a query: without its lead-in and closing words.

    Example:
        >>> request_object("what I said about my ex, please."), request_object("that I'm in debt.")
        ('my ex', "I'm in debt")
    """
    what = " ".join(about.split())
    prev = None
    while prev != what:
        prev = what
        what = _LEAD_IN.sub("", what, count=1)
    return _TRAIL.sub("", what).strip()


def _sentences(text: str) -> list[str]:
    return [m.group(0) for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def _salt(state: UserState) -> str:
    salt = state.meta.get("forget_salt")
    if not isinstance(salt, str) or not salt:
        salt = state.meta["forget_salt"] = secrets.token_hex(16)
    return salt


def turn_digest(state: UserState, user_input: str, agent_response: str) -> tuple[str, str]:
    """Salted hashes of a turn's two texts (the salt is the user's): how a forgotten turn is known again.

    Example:
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> turn_digest(s, "hi", "hello") == turn_digest(s, "hi", "hello"), len(turn_digest(s, "hi", "")[0])
        (True, 32)
    """
    salt = _salt(state)

    def digest(text: str) -> str:
        return hashlib.sha256(f"{salt}\x1f{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]

    return digest(user_input), digest(agent_response)


def _key_digest(state: UserState, page_id: str) -> str:
    return hashlib.sha256(f"{_salt(state)}\x1fkey\x1f{page_id}".encode()).hexdigest()[:32]


def forgotten_page(state: UserState, page_id: str) -> bool:
    """Whether the page with this key was forgotten (so the same turn added again is not stored).

    Example:
        >>> forgotten_page(UserState(user_id="u", label="u", dimension=2), "p_1")
        False
    """
    marks = state.meta.get("forgotten")
    return isinstance(marks, dict) and bool(marks) and _key_digest(state, page_id) in marks


def thread_tombstones(state: UserState, thread_id: str) -> list[tuple[int, tuple[str, str]]]:
    """The forgotten pages of a thread: their sequence numbers and salted text digests, oldest first.

    Example:
        >>> thread_tombstones(UserState(user_id="u", label="u", dimension=2), "t")
        []
    """
    marks = state.meta.get("forgotten")
    if not isinstance(marks, dict):
        return []
    out = [
        (int(v[1]), (str(v[2]), str(v[3])))
        for v in marks.values()
        if isinstance(v, list) and len(v) == 4 and v[0] == thread_id
    ]
    return sorted(out)


@dataclass
class ForgetPlan:
    """What a forget removes: facts, pages deleted whole, sentences cut from pages, and the forgotten words.

    Attributes:
        facts: the ids of the facts (user facts and agent traits) deleted.
        pages: the ids of the pages deleted whole.
        redacted: page id → the sentences cut from it (the page keeps the rest).
        words: the forgotten words (stemmed): what no remaining page says.
        texts: the texts removed (the facts' summaries and the sentences), as reported to the caller.
    """

    facts: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    redacted: dict[str, list[str]] = field(default_factory=dict)
    words: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        """Nothing to forget.

        Example:
            >>> ForgetPlan().empty()
            True
        """
        return not (self.facts or self.pages or self.redacted)


def _page(state: UserState, page_id: str) -> DialoguePage | None:
    page = state.pages.get(page_id)
    if page is not None:
        return page
    return next((p for pages in state.stm.values() for p in pages if p.id == page_id), None)


def _every_page(state: UserState) -> list[DialoguePage]:
    return [*state.pages.values(), *(p for pages in state.stm.values() for p in pages)]


def _facts(state: UserState) -> list[MemoryRecord]:
    return [*state.facts["user"].values(), *state.facts["agent"].values()]


def _fact_words(record: MemoryRecord) -> set[str]:
    names = set(tokenize(record.subject)) if record.subject else set()
    return set(content_words(record.summary)) - names - _GENERIC


def _cut(sentences: Iterable[str], matches: Iterable[set[str]]) -> list[str]:
    """The sentences that hold one of ``matches`` wholly (a set of words) or half of one (a fact's words)."""
    wanted = [m for m in matches if m]
    out: list[str] = []
    for sentence in sentences:
        words = set(tokenize(sentence))
        if any(len(words & m) >= max(1, SOURCE_SHARE * len(m)) for m in wanted):
            out.append(sentence)
    return out


def plan_forget(
    state: UserState, *, fact_id: str | None = None, page_id: str | None = None, query: str | None = None
) -> ForgetPlan:
    """What forgetting a fact, a page or a query removes (pure: the state is not changed).

    Args:
        state: the user's state.
        fact_id: a stored fact or trait id.
        page_id: a stored page id.
        query: forget what holds every content word of it.

    Returns:
        The plan (:meth:`ForgetPlan.empty` when nothing matches).

    Example:
        >>> import numpy as np
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> page = DialoguePage(id="p", user_input="I'm allergic to zorblax. I like tea.", agent_response="Noted.")
        >>> s.put_page(page, np.ones(2, dtype=np.float32))
        >>> plan = plan_forget(s, query="zorblax")
        >>> plan.redacted, sorted(plan.words)
        ({'p': ["I'm allergic to zorblax."]}, ['allerg', 'zorblax'])
    """
    plan = ForgetPlan()
    facts: dict[str, MemoryRecord] = {}
    sources: dict[str, list[set[str]]] = {}
    if fact_id is not None:
        record = state.facts["user"].get(fact_id) or state.facts["agent"].get(fact_id)
        if record is not None:
            facts[record.id] = record
    if page_id is not None and _page(state, page_id) is not None:
        plan.pages.append(page_id)
        facts.update((r.id, r) for r in _facts(state) if page_id in r.source_page_ids)
    wanted = query_words(query) if query else set()
    if wanted:
        facts.update((r.id, r) for r in _facts(state) if _all_in(wanted, r.summary))
    for record in facts.values():
        for source in record.source_page_ids:
            sources.setdefault(source, []).append(_fact_words(record))
    for page in _every_page(state):
        if page.id in plan.pages:
            continue
        matches = [*sources.get(page.id, []), *([wanted] if wanted else [])]
        if not matches:
            continue
        if wanted:  # a query cuts the sentences that hold all of its words
            cut = [
                s for s in _sentences(page.user_input) + _sentences(page.agent_response) if wanted <= set(tokenize(s))
            ]
            cut += _cut(_sentences(page.user_input) + _sentences(page.agent_response), sources.get(page.id, []))
        else:
            cut = _cut(_sentences(page.user_input) + _sentences(page.agent_response), matches)
        cut = list(dict.fromkeys(cut))
        if cut:
            plan.redacted[page.id] = cut
    plan.facts = list(facts)
    removed = [r.summary for r in facts.values()] + [s for cut in plan.redacted.values() for s in cut]
    for pid in plan.pages:
        whole = _page(state, pid)
        if whole is not None:
            removed += [whole.user_input, whole.agent_response]
    plan.texts = [t.strip() for t in removed if t.strip()]
    said: set[str] = set()
    for page in _every_page(state):
        if page.id in plan.pages:
            continue
        user, agent = page.user_input, page.agent_response
        for sentence in plan.redacted.get(page.id, []):
            user, agent = user.replace(sentence, " "), agent.replace(sentence, " ")
        said.update(tokenize(f"{user}\n{agent}"))
    plan.words = {w for t in removed for w in tokenize(t)} - said - _GENERIC
    return plan


def _holds(text: str, words: set[str]) -> bool:
    return bool(words) and bool(words.intersection(tokenize(text)))


def _keep_sentences(text: str, words: set[str]) -> str:
    return " ".join(s.strip() for s in _sentences(text) if not _holds(s, words)).strip()


def _redact(text: str, cut: list[str]) -> str:
    for sentence in cut:
        text = text.replace(sentence, " ")
    return " ".join(text.split())


def _tombstone(state: UserState, page: DialoguePage) -> None:
    marks = state.meta.get("forgotten")
    if not isinstance(marks, dict):
        marks = state.meta["forgotten"] = {}
    digest = page.metadata.get("_digest")
    user, agent = (
        digest
        if isinstance(digest, list) and len(digest) == 2
        else turn_digest(state, page.user_input, page.agent_response)
    )
    seq = page.metadata.get("_seq")
    marks[_key_digest(state, page.id)] = [page.thread_id, int(seq) if isinstance(seq, int) else 0, user, agent]


def _scrub_page_derivations(page: DialoguePage, words: set[str]) -> None:
    if _holds(page.meta, words):
        page.meta = _keep_sentences(page.meta, words)
    if page.topic is not None and _holds(page.topic, words):  # "" (not None): the page stays analysed
        page.topic = _keep_sentences(page.topic, words)
    page.keywords = [k for k in page.keywords if not _holds(k, words)]
    page.candidates = [c for c in page.candidates if not _holds(c.summary, words)]


def _delete_page(state: UserState, page: DialoguePage, touched: set[str]) -> None:
    _tombstone(state, page)
    stm = state.stm.get(page.thread_id, [])
    if any(p.id == page.id for p in stm):
        state.stm[page.thread_id] = [p for p in stm if p.id != page.id]
        state.stm_vectors.pop(page.id, None)
        state.stm_index.remove([page.id])
        state.indices.pages_removed([page.id])
        state._put(state.stm_ns(page.thread_id), page.id, None)
        return
    if page.segment_id and page.segment_id in state.segments:
        segment = state.segments[page.segment_id]
        segment.page_ids = [p for p in segment.page_ids if p != page.id]
        segment.pending_page_ids = [p for p in segment.pending_page_ids if p != page.id]
        touched.add(segment.id)
    state.delete_pages([page.id])


def _centroid(state: UserState, segment: Segment) -> object:
    import numpy as np

    vectors = [state.page_index.get(p) for p in segment.page_ids if p in state.pages]
    if not vectors:
        return None
    mean = np.mean(np.stack(vectors), axis=0).astype(np.float32)
    norm = float(np.linalg.norm(mean))
    return mean / np.float32(norm) if norm > 0 else mean


def apply_forget(
    repo: MemoryRepository, state: UserState, plan: ForgetPlan, *, now: _dt.datetime, max_chars: int
) -> Step[list[WriteEvent]]:
    """Step: carry out a plan on the user's state (its writes are buffered; the caller flushes them).

    Args:
        repo: the repository (to read the write log).
        state: the user's state, under its lock.
        plan: from :func:`plan_forget`.
        now: the time of the forget.
        max_chars: the embedding text's limit (``MemoryOSConfig.max_embedding_chars``).

    Returns:
        The ``deleted`` events of the facts, one ``forgotten`` summary event at the end.
    """
    words = plan.words
    touched: set[str] = set()
    for pid in plan.pages:
        page = _page(state, pid)
        if page is not None:
            _delete_page(state, page, touched)
    yield from _redact_pages(state, plan.redacted, words, touched, max_chars)
    _scrub_derived(state, words, touched)
    events = _delete_facts(state, plan.facts, now)
    yield from scrub_log(repo, state, set(plan.facts), words)
    state.save_meta()
    state.snapshot_due = (
        True  # the next flush writes a fresh snapshot (it holds the pages' words) and drops the journal
    )
    return events


def _redact_pages(
    state: UserState, redacted: dict[str, list[str]], words: set[str], touched: set[str], max_chars: int
) -> Step[None]:
    """Step: the sentences cut out of their pages, each page re-embedded (deleted when nothing said is left)."""
    for pid, cut in redacted.items():
        page = _page(state, pid)
        if page is None:
            continue
        digest = page.metadata.get("_digest")
        if not (isinstance(digest, list) and len(digest) == 2):
            page.metadata["_digest"] = list(turn_digest(state, page.user_input, page.agent_response))
        user, agent = _redact(page.user_input, cut), _redact(page.agent_response, cut)
        if not tokenize(f"{user}\n{agent}"):  # nothing said is left
            _delete_page(state, page, touched)
            continue
        page.user_input, page.agent_response = user, agent
        page.metadata["_redacted"] = int(page.metadata.get("_redacted", 0)) + len(cut)
        _scrub_page_derivations(page, words)
        vector = (yield Embed((embedding_text(page.embedding_text, max_chars),)))[0]
        if page.id in state.pages:
            state.delete_pages([page.id])
            state.put_page(page, vector)
            if page.segment_id:
                touched.add(page.segment_id)
        else:
            state.stm_vectors[page.id] = vector
            state.stm_index.remove([page.id])
            state.stm_index.add(page.id, vector)
            state.indices.pages_removed([page.id])
            state.stm_update(page)


def _scrub_derived(state: UserState, words: set[str], touched: set[str]) -> None:
    """What was derived from the forgotten words: the pages' chain meta, topics and candidates, segments, persona."""
    for page in _every_page(state):  # chain meta, topic and candidates of the pages that stay
        derived = [page.meta, page.topic or "", *(c.summary for c in page.candidates)]
        if any(_holds(text, words) for text in derived):
            _scrub_page_derivations(page, words)
            if page.id in state.pages:
                state.put_page(page, state.page_index.get(page.id))
            else:
                state.stm_update(page)
    for segment in list(state.segments.values()):
        changed = segment.id in touched
        if _holds(segment.summary, words) or any(_holds(k, words) for k in segment.keywords):
            segment.summary = _keep_sentences(segment.summary, words)
            segment.keywords = [k for k in segment.keywords if not _holds(k, words)]
            changed = True
        if not changed:
            continue
        if not segment.page_ids:
            state.delete_segment(segment.id)
            continue
        vector = _centroid(state, segment) if segment.id in touched else None
        state.put_segment(segment, vector)  # type: ignore[arg-type]
    persona = state.persona
    profile = {k: v for k, v in persona.user_profile.items() if not _holds(v, words)}
    traits = {k: [v for v in vs if not _holds(v, words)] for k, vs in persona.user_traits.items()}
    traits = {k: vs for k, vs in traits.items() if vs}
    if profile != persona.user_profile or traits != persona.user_traits:
        persona.user_profile, persona.user_traits = profile, traits
        state.save_persona()


def _delete_facts(state: UserState, fact_ids: list[str], now: _dt.datetime) -> list[WriteEvent]:
    """The forgotten facts deleted, each with its ``deleted`` event (its summary ``[deleted]``)."""
    events: list[WriteEvent] = []
    for fid in fact_ids:
        kind: FactKind = "user" if fid in state.facts["user"] else "agent"
        old = state.facts[kind].get(fid)
        if old is None:
            continue
        state.delete_fact(kind, fid)
        tombstone = MemoryRecord(
            id=fid,
            kind=kind,
            aspect=old.aspect,
            intent=old.intent,
            summary=REDACTED,
            created_at=old.created_at,
            updated_at=now,
        )
        event = WriteEvent(
            "deleted", tombstone, replaced_ids=[fid], reason="forgotten by the user", timestamp=now, source="forget"
        )
        state.log_event(event)
        events.append(event)
    return events


def scrub_log(repo: MemoryRepository, state: UserState, fact_ids: set[str], words: set[str]) -> Step[None]:
    """Step: scrub the text of every logged event about ``fact_ids`` or holding one of ``words`` (the event stays).

    An event's record summary, entities, slot and metadata, its reason and its
    relations' reasons become ``[deleted]``; its id, action, time and ids are kept.
    """
    log_ns = state.ns("log")
    lineage = set(fact_ids)
    items = yield from repo.search_all(log_ns)
    events = [(item.key, WriteEvent.from_dict(item.value)) for item in items]
    for _, logged in events:  # the facts a forgotten fact replaced are forgotten with it
        if logged.record.id in lineage:
            lineage.update(logged.replaced_ids)
    for key, logged in events:
        about = logged.record.id in lineage or bool(lineage.intersection(logged.replaced_ids))
        texts = [logged.record.summary, logged.reason, *(r.reason for r in logged.relations)]
        if not about and not any(_holds(t, words) for t in texts):
            continue
        if about or _holds(logged.record.summary, words):
            logged.record.summary, logged.record.entities, logged.record.slot = REDACTED, [], ""
            logged.record.metadata = {}
        if about or _holds(logged.reason, words):
            logged.reason = REDACTED
        for relation in logged.relations:
            if about or _holds(relation.reason, words):
                relation.reason = REDACTED
        state._put(log_ns, key, logged.to_dict())


def redact_request(text: str, query: str) -> str:
    """The text with every sentence about what ``query`` names cut; a request's object replaced by ``[forgotten]``.

    The turn that asks to forget is stored so: it keeps what it asked ("Forget
    that [forgotten].") but not the words it asked to forget, on either side.

    Example:
        >>> redact_request("Forget that I'm allergic to zorblax. Thanks!", "I'm allergic to zorblax")
        'Forget that [forgotten]. Thanks!'
        >>> redact_request("Done: I won't mention your zorblax allergy again. Anything else?", "allergic to zorblax")
        'Anything else?'
    """
    wanted = query_words(query)
    out: list[str] = []
    for sentence in _sentences(text):
        said = " ".join(sentence.replace("\u2019", "'").split())
        objects = [request_object(about) for about in side_requests(said)]
        what = next((o for o in objects if o and query_words(o) == wanted), "")
        if what:
            start = said.rfind(what)
            out.append(f"{said[:start]}[forgotten]{said[start + len(what) :]}" if start >= 0 else "[forgotten].")
        elif not any(_word_in(w, set(tokenize(sentence))) for w in wanted):
            out.append(sentence.strip())
    return " ".join(out)
