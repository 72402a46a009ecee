"""Data classification of contract fields (SPEC S9, X10), declared once in the types.

A field that holds customer or payment data says so in its type,
``Annotated[T, Classified(Classification.RESTRICTED)]``. The compensation log derives an
entry's classification and retention from it (:mod:`orders.models.compensation`); views
that must withhold classified data derive what to withhold from it
(:func:`classified_fields`, used by ``ops.redaction``). Nothing else keeps a list.

- ``Public``: nothing here.
- ``Internal``: operational data: step names, outcomes, reservation ids, OrderID.
- ``Confidential``: customer data: who ordered what (customer id, order and reserved
  lines), shipment ids (they lead to an address).
- ``Restricted``: payment data: payment and refund ids, amounts, prices, currencies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel


class Classification(StrEnum):
    """Data classification of a field or entry, from least to most sensitive (SPEC X10)."""

    PUBLIC = "Public"
    INTERNAL = "Internal"
    CONFIDENTIAL = "Confidential"
    """Customer data."""
    RESTRICTED = "Restricted"
    """Payment data."""

    @property
    def rank(self) -> int:
        """0 (Public) to 3 (Restricted): compare sensitivity with it."""
        return list(Classification).index(self)


@dataclass(frozen=True)
class Classified:
    """Type metadata giving a field its classification: ``Annotated[T, Classified(c)]``."""

    level: Classification


def classified_fields(models: Iterable[type[BaseModel]],
                      at_least: Classification = Classification.CONFIDENTIAL
                      ) -> dict[str, Classification]:
    """Return the wire names of the ``models``' fields classified ``at_least`` this sensitive.

    Parameters
    ----------
    models : iterable of pydantic model classes
        The contracts whose ``Classified`` metadata to read.
    at_least : Classification
        The least sensitive level returned.

    Returns
    -------
    dict of str to Classification
        E.g. ``{"paymentId": Restricted, "shipmentId": Confidential, ...}``; a name
        used at two levels gets the more sensitive.
    """
    found: dict[str, Classification] = {}
    for model in models:
        for name, info in model.model_fields.items():
            for meta in info.metadata:
                if isinstance(meta, Classified) and meta.level.rank >= at_least.rank:
                    key = info.alias or name
                    if key not in found or meta.level.rank > found[key].rank:
                        found[key] = meta.level
    return found
