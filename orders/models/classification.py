"""Data classification of contract fields (S9, X10), declared once in the types.

``Annotated[T, Classified(c)]`` is the only list: the compensation log and ``ops.redaction``
derive from it. Internal: operational data; Confidential: customer data (who ordered
what, shipment ids); Restricted: payment data (ids, amounts, prices, currencies).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel


class Classification(StrEnum):
    """Data classification of a field or entry, from least to most sensitive (X10)."""

    PUBLIC = "Public"
    INTERNAL = "Internal"
    CONFIDENTIAL = "Confidential"
    RESTRICTED = "Restricted"

    @property
    def rank(self) -> int:
        """0 (Public) to 3 (Restricted)."""
        return list(Classification).index(self)


@dataclass(frozen=True)
class Classified:
    """Type metadata giving a field its classification: ``Annotated[T, Classified(c)]``."""

    level: Classification


def classified_fields(models: Iterable[type[BaseModel]],
                      at_least: Classification = Classification.CONFIDENTIAL
                      ) -> dict[str, Classification]:
    """Return wire name -> level of the fields classified ``at_least``; the higher level wins."""
    found: dict[str, Classification] = {}
    for model in models:
        for name, info in model.model_fields.items():
            for meta in info.metadata:
                if isinstance(meta, Classified) and meta.level.rank >= at_least.rank:
                    key = info.alias or name
                    if key not in found or meta.level.rank > found[key].rank:
                        found[key] = meta.level
    return found
