"""The demo's faults: a real day with two remote services, and a worse one (docs/demo.md).

Faults pick orders by the key the services see, ``<clientId>~<OrderID>`` (X10), so a fault
hits one of two clients' orders with the same OrderID.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def default_faults(keys: Sequence[str], *, seed: int = 7) -> dict[str, Any]:
    """Build the simulator's ``FaultUpdate`` for ``keys``; ``seed`` fixes the transient errors."""
    ids = list(keys)
    declined = ids[50::100]
    black_holed = [i for i in ids[25::300] if i not in declined][:5]
    return _fault_document(seed, declined, black_holed, black_hole_first_n=1,
                           shipping_outage_s=5)


def chaos_faults(keys: Sequence[str], *, seed: int = 7) -> dict[str, Any]:
    """Build a chaos run's ``FaultUpdate``: 2% declined, 2 to 5 others always black-holed."""
    ids = list(keys)
    declined = ids[7::50]
    wanted = max(2, min(5, len(ids) // 10))
    step = max(1, len(ids) // wanted)
    black_holed = [i for i in ids[3::step] if i not in declined][:wanted]
    return _fault_document(seed, declined, black_holed)


def black_holed_ids(faults: dict[str, Any]) -> set[str]:
    """Order keys whose payment requests the fault configuration black-holes."""
    return set(faults["payment"].get("black_hole_order_ids", []))


def _fault_document(seed: int, declined: Sequence[str], black_holed: Sequence[str], *,
                    black_hole_first_n: int | None = None,
                    shipping_outage_s: int | None = None) -> dict[str, Any]:
    """Both runs' faults; ``black_hole_first_n`` None black-holes every request of those orders."""
    payment: dict[str, Any] = {
        "transient_rate": 0.10,
        "decline": {i: {"status": 402, "reason": "card_declined"} for i in declined},
        "black_hole_order_ids": list(black_holed),
        "black_hole_performs_effect": True,
    }
    if black_hole_first_n is not None:
        payment["black_hole_first_n"] = black_hole_first_n
    shipping: dict[str, Any] = {"transient_rate": 0.10}
    if shipping_outage_s is not None:
        shipping["outage_for_s"] = shipping_outage_s
    return {"seed": seed, "all": {"transient_rate": 0.10}, "payment": payment,
            "shipping": shipping}
