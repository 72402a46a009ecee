"""The demo's default faults (issue 4): what a real day with two remote services looks like.

- 10% transient errors (503, or 429 with Retry-After) on both services;
- 1% of orders declined permanently by the payment service;
- a 5-second shipping outage at the start of the run;
- a few orders whose first payment request is black-holed (accepted, charged, never
  answered), so the agent times out and its retry gets the stored answer.
"""

from __future__ import annotations

from typing import Any

from orders.models import Order


def default_faults(orders: list[Order], *, seed: int = 7) -> dict[str, Any]:
    """Build the simulator's fault configuration for ``orders``.

    Parameters
    ----------
    orders : list of Order
        The orders the demo submits (declines and black holes pick from them).
    seed : int
        Seed of the simulator's random transient errors, for reproducible runs.

    Returns
    -------
    dict
        A simulator ``FaultUpdate`` document.
    """
    ids = [o.order_id for o in orders]
    declined = ids[50::100]
    black_holed = [i for i in ids[25::300] if i not in declined][:5]
    return {
        "seed": seed,
        "all": {"transient_rate": 0.10},
        "payment": {
            "transient_rate": 0.10,
            "decline": {i: {"status": 402, "reason": "card declined"} for i in declined},
            "black_hole_order_ids": black_holed,
            "black_hole_first_n": 1,
            "black_hole_performs_effect": True,
        },
        "shipping": {"transient_rate": 0.10, "outage_for_s": 5},
    }


def declined_ids(faults: dict[str, Any]) -> set[str]:
    """OrderIDs the fault configuration declines permanently."""
    return set(faults["payment"]["decline"])
