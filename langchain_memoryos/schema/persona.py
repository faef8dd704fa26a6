"""The long-term persona: profile keys, trait dimensions, their normalisation and :class:`Persona`."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_memoryos.schema.timestamps import _iso, ensure_utc

__all__ = ["PROFILE_KEYS", "TRAIT_DIMENSIONS", "Persona", "persona_key", "persona_value"]

#: The user profile's static attributes: the MemoryOS paper's (§3.4: name, gender, birth year) and the
#: profile slots the heuristic controller reads off facts. A model's profile key outside this list is refused.
PROFILE_KEYS: tuple[str, ...] = (
    "name",
    "gender",
    "age",
    "birth_year",
    "location",
    "hometown",
    "nationality",
    "languages",
    "occupation",
    "employer",
    "education",
    "relationship_status",
    "pet",
    "diet",
)

#: The user traits' dimensions in the MemoryOS paper's three groups (§3.4; the names are those of the
#: paper's official code), each group led by the list-valued dimensions this package fills (``interests``
#: …). A model's trait dimension outside these lists is refused.
TRAIT_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "basic needs and personality": (
        "needs",
        "personality",
        "values",
        "habits",
        "extraversion",
        "openness",
        "agreeableness",
        "conscientiousness",
        "neuroticism",
        "physiological_needs",
        "need_for_security",
        "need_for_belonging",
        "need_for_self_esteem",
        "cognitive_needs",
        "aesthetic_appreciation",
        "self_actualization",
        "need_for_order",
        "need_for_autonomy",
        "need_for_power",
        "need_for_achievement",
    ),
    "AI alignment": (
        "answer_style",
        "tone",
        "format",
        "helpfulness",
        "honesty",
        "safety",
        "instruction_compliance",
        "truthfulness",
        "coherence",
        "complexity",
        "conciseness",
    ),
    "content interest tags": (
        "interests",
        "activities",
        "favorites",
        "dislikes",
        "science_interest",
        "education_interest",
        "psychology_interest",
        "family_concern",
        "fashion_interest",
        "art_interest",
        "health_concern",
        "financial_management_interest",
        "sports_interest",
        "food_interest",
        "travel_interest",
        "music_interest",
        "literature_interest",
        "film_interest",
        "social_media_activity",
        "tech_interest",
        "environmental_concern",
        "history_interest",
        "political_concern",
        "religious_interest",
        "gaming_interest",
        "animal_concern",
        "emotional_expression",
        "sense_of_humor",
        "information_density",
        "language_style",
        "practicality",
    ),
}

_LONGEST_WORD = 40  # letters in a row: longer than any real word of a Latin-script language


def persona_key(text: object, vocabulary: Iterable[str]) -> str | None:
    """A persona key normalised (lowercase, snake_case), or ``None`` when it is not in ``vocabulary``.

    Args:
        text: the key as given (e.g. a model's ``"Birth Year"``).
        vocabulary: the allowed keys (:data:`PROFILE_KEYS`, or a group of :data:`TRAIT_DIMENSIONS`).

    Returns:
        The key, or ``None`` for anything else (garbage, unknown or over-long keys).

    Example:
        >>> persona_key(" Birth-Year ", PROFILE_KEYS), persona_key("zzgarbagezzgarbage", PROFILE_KEYS)
        ('birth_year', None)
    """
    key = "_".join(re.findall(r"[a-z0-9]+", str(text).lower()))
    return key if key and key in set(vocabulary) else None


def persona_value(text: object, limit: int) -> str | None:
    """A persona value with its spacing normalised, or ``None`` when it is not text one would keep.

    Refused: values longer than ``limit`` characters, values without a letter or
    digit, and values with a run of Latin letters longer than any real word
    (model junk such as ``"ZZGARBAGEZZGARBAGE…"``). Scripts written without
    spaces (Chinese, Japanese …) are kept.

    Args:
        text: the value as given.
        limit: the most characters a value may have.

    Returns:
        The value, or ``None``.

    Example:
        >>> persona_value("  Lisbon,  Portugal ", 80), persona_value("ZZGARBAGE" * 5, 80), persona_value("x" * 81, 80)
        ('Lisbon, Portugal', None, None)
    """
    value = " ".join(str(text).split())
    if not value or len(value) > limit or not re.search(r"\w", value):
        return None
    if any(len(word) > _LONGEST_WORD for word in re.findall(r"[A-Za-z\u00c0-\u024f]+", value)):
        return None
    return value


@dataclass
class Persona:
    """Long-term persona: user profile and traits, and the agent profile.

    User facts (the user KB) and agent traits are :class:`MemoryRecord` lists
    kept beside the persona (see ``MemoryOS.list_facts``).

    Attributes:
        user_profile: static attributes (name, age, location, occupation …).
        user_traits: evolving traits by dimension (e.g. ``"interests"``).
        agent_profile: the assistant's fixed role and character.
        updated_at: when the persona last changed.

    Example:
        >>> p = Persona(user_profile={"name": "Ana"}, user_traits={"interests": ["chess"]})
        >>> Persona.from_dict(p.to_dict()) == p, p.is_empty(), Persona(user_traits={"interests": []}).is_empty()
        (True, False, True)
    """

    user_profile: dict[str, str] = field(default_factory=dict)
    user_traits: dict[str, list[str]] = field(default_factory=dict)
    agent_profile: str = ""
    updated_at: _dt.datetime | None = None

    def is_empty(self) -> bool:
        """Whether the persona holds nothing about the user.

        Example:
            >>> Persona().is_empty()
            True
        """
        return not self.user_profile and not any(self.user_traits.values())

    def to_dict(self) -> dict[str, Any]:
        """Serialise to JSON-compatible values.

        Example:
            >>> Persona().to_dict()["user_traits"]
            {}
        """
        return {
            "user_profile": dict(self.user_profile),
            "user_traits": {k: list(v) for k, v in self.user_traits.items()},
            "agent_profile": self.agent_profile,
            "updated_at": _iso(self.updated_at) if self.updated_at else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Persona:
        """Read a persona written by :meth:`to_dict`.

        Example:
            >>> Persona.from_dict({}).agent_profile
            ''
        """
        updated = data.get("updated_at")
        return cls(
            user_profile={str(k): str(v) for k, v in dict(data.get("user_profile", {})).items()},
            user_traits={str(k): [str(x) for x in v] for k, v in dict(data.get("user_traits", {})).items()},
            agent_profile=str(data.get("agent_profile", "")),
            updated_at=ensure_utc(updated) if updated else None,
        )
