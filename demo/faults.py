"""The demo's faults: what a real day with two remote services looks like, and a worse one.

The default faults (:func:`default_faults`, issue 4):

- 10% transient errors (503, or 429 with Retry-After) on both services;
- 1% of orders declined permanently by the payment service;
- a 5-second shipping outage at the start of the run;
- a few orders whose first payment request is black-holed (accepted, charged, never
  answered), so the agent times out and its retry gets the stored answer.

The chaos faults (:func:`chaos_faults`, ``python -m demo --chaos``) keep the transient
errors, decline 2% of orders, and black-hole *every* payment request of a few orders with
the effect performed: each is charged once and never hears so, so it can only give up and
be compensated. No shipping outage: in a chaos run the simulator itself is SIGKILLed.

Faults are chosen by the ``orderId`` the services see, which is the service's order key
``<clientId>~<OrderID>`` (SPEC X10): two clients' orders with the same OrderID are two
orders to the services too, and a fault hits one of them only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def default_faults(keys: Sequence[str], *, seed: int = 7) -> dict[str, Any]:
    """Build the simulator's fault configuration for the orders ``keys``.

    Parameters
    ----------
    keys : sequence of str
        The order keys of the orders the demo submits (declines and black holes pick
        from them).
    seed : int
        Seed of the simulator's random transient errors, for reproducible runs.

    Returns
    -------
    dict
        A simulator ``FaultUpdate`` document.
    """
    ids = list(keys)
    declined = ids[50::100]
    black_holed = [i for i in ids[25::300] if i not in declined][:5]
    return _fault_document(seed, declined, black_holed, black_hole_first_n=1,
                           shipping_outage_s=5)


def chaos_faults(keys: Sequence[str], *, seed: int = 7) -> dict[str, Any]:
    """Build the simulator's fault configuration of a chaos run (module docstring).

    Takes the same parameters as :func:`default_faults`.

    Returns
    -------
    dict
        A simulator ``FaultUpdate`` document: 2% of the orders (at least one) declined,
        and 2 to 5 other orders (2 for fewer than 30 orders, one per 10 orders up to 5)
        whose every payment request is black-holed with its effect performed
        (``black_hole_first_n`` unset); none of them is declined.
    """
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
    """Both runs' faults: 10% transient errors everywhere, declines and black holes.

    Black holes perform their effect; ``black_hole_first_n`` None black-holes every
    request of those orders, and ``shipping_outage_s`` None means no shipping outage.
    """
    payment: dict[str, Any] = {
        "transient_rate": 0.10,
        "decline": {i: {"status": 402, "reason": "card declined"} for i in declined},
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
