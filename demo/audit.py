"""The ledger audit: whether the money (and the goods) balance for every terminal order (S9, X7).

Balanced means: Processed nets one charge of its totalPrice in its currency and one
shipment; Error and Compensated net no charge and no shipment, with any logged
reservation released and no units held; CompensationFailed has a CompensationFailed
operator alert naming it. Orders are keyed by order key throughout (X10); side effects of
an order without a state record are unbalanced. See docs/demo.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

from orders.models import CompensationEntry, OrderLine, ProcessState, StateRecord, Step
from orders.models.compensation import ReservationDetails
from orders.models.messages import OperatorAlert
from orders.names import OPERATOR_ALERTS_QUEUE
from simulator.ledger import Ledger, SideEffect

AUDITED_STATES = frozenset({ProcessState.PROCESSED, ProcessState.ERROR,
                            ProcessState.COMPENSATED, ProcessState.COMPENSATION_FAILED})

_UNDONE_STATES = frozenset({ProcessState.ERROR, ProcessState.COMPENSATED})


class Price(NamedTuple):
    """What an order costs: its totalPrice and currency (from the order database)."""

    amount: Decimal
    currency: str


@dataclass(frozen=True)
class NetEffects:
    """The ledger's side effects of one order: counts and summed amounts per kind."""

    charges: int = 0
    refunds: int = 0
    charged: Decimal = Decimal(0)
    refunded: Decimal = Decimal(0)
    currencies: frozenset[str] = frozenset()
    ships: int = 0
    cancels: int = 0

    @classmethod
    def of(cls, effects: Iterable[SideEffect]) -> NetEffects:
        """Net the side effects of one order (both services).

        Raises
        ------
        ValueError
            If a kind is not charge, refund, ship or cancel, or an amount is missing.
        """
        counts = {"charge": 0, "refund": 0, "ship": 0, "cancel": 0}
        money = {"charge": Decimal(0), "refund": Decimal(0)}
        currencies: set[str] = set()
        for effect in effects:
            if effect.kind not in counts:
                raise ValueError(f"kind: must be charge, refund, ship or cancel; got "
                                 f"{effect.kind!r} (order {effect.order_key})")
            counts[effect.kind] += 1
            if effect.kind in money:
                if effect.amount is None:
                    raise ValueError(f"amount: missing on a {effect.kind} of order "
                                     f"{effect.order_key}")
                money[effect.kind] += Decimal(effect.amount)
                if effect.currency:
                    currencies.add(effect.currency)
        return cls(counts["charge"], counts["refund"], money["charge"], money["refund"],
                   frozenset(currencies), counts["ship"], counts["cancel"])

    @property
    def net_charges(self) -> int:
        """Charges minus refunds."""
        return self.charges - self.refunds

    @property
    def net_amount(self) -> Decimal:
        """Amount charged minus amount refunded."""
        return self.charged - self.refunded

    @property
    def net_shipments(self) -> int:
        """Shipments minus cancellations."""
        return self.ships - self.cancels

    def describe(self) -> str:
        """Return what the ledger shows, e.g. ``charges 1 (172.50 USD), refunds 0 (0), ...``."""
        return (f"charges {self.charges} ({self._money(self.charged)}), refunds {self.refunds}"
                f" ({self._money(self.refunded)}), ships {self.ships}, cancels {self.cancels}")

    def net_money(self) -> str:
        """Return the net amount charged with its currency, e.g. ``172.50 USD``."""
        return self._money(self.net_amount)

    def _money(self, amount: Decimal) -> str:
        return f"{amount} {'/'.join(sorted(self.currencies))}" if self.currencies else str(amount)


@dataclass(frozen=True)
class Verdict:
    """The audit's finding for one order (``state`` None: no state record)."""

    order_key: str
    state: ProcessState | None
    balanced: bool
    reason: str | None = None

    def line(self) -> str:
        """Return ``unbalanced <order key> (<state>): <reason>`` (or ``balanced ...``)."""
        state = self.state.value if self.state is not None else "no state record"
        if self.balanced:
            return f"balanced {self.order_key} ({state})"
        return f"unbalanced {self.order_key} ({state}): {self.reason}"


@dataclass(frozen=True)
class AuditReport:
    """Verdicts for every audited order, in order key order, and the stock audit's findings."""

    verdicts: tuple[Verdict, ...]
    stock_unbalanced: tuple[str, ...] = ()
    out_of_stock: int = 0

    @property
    def unbalanced(self) -> list[Verdict]:
        """The unbalanced orders' verdicts."""
        return [v for v in self.verdicts if not v.balanced]

    def verdict(self, order_key: str) -> Verdict:
        """Return the verdict of ``order_key``; KeyError if it was not audited."""
        for v in self.verdicts:
            if v.order_key == order_key:
                return v
        raise KeyError(order_key)


def audit(records: Mapping[str, StateRecord], prices: Mapping[str, Price],
          entries: Mapping[str, Sequence[CompensationEntry]], alerts: Iterable[OperatorAlert],
          effects: Mapping[str, Sequence[SideEffect]],
          held: Mapping[str, Sequence[tuple[str, int]]] | None = None) -> AuditReport:
    """Classify every terminal order, and any with side effects but no record (S9, X7).

    All mappings are by order key; ``held`` gives the SKUs and units each order's lines
    hold (:func:`demo.stock_audit.held_by_order`).

    Raises
    ------
    ValueError
        If a side effect is malformed (see :meth:`NetEffects.of`).
    """
    alerted = {a.order_key for a in alerts if a.kind == "CompensationFailed" and a.order_key}
    verdicts = []
    for order_key in sorted(set(records) | set(effects)):
        net = NetEffects.of(effects.get(order_key, ()))
        record = records.get(order_key)
        if record is None:
            if net != NetEffects():
                verdicts.append(Verdict(order_key, None, False,
                                        f"side effects for an order without a state record"
                                        f" [ledger: {net.describe()}]"))
            continue
        state = record.process_state
        if state not in AUDITED_STATES:
            continue
        if state is ProcessState.PROCESSED:
            problems = _processed_problems(net, prices.get(order_key))
        elif state in _UNDONE_STATES:
            problems = _undone_problems(state, net, entries.get(order_key, ()))
            if held and held.get(order_key):
                problems.append(f"inventory held: {state.value} but its lines hold "
                                + ", ".join(f"{n} of {sku}" for sku, n in held[order_key]))
        else:
            problems = [] if order_key in alerted else [
                "CompensationFailed but no CompensationFailed operator alert names it"]
        reason = f"{'; '.join(problems)} [ledger: {net.describe()}]" if problems else None
        verdicts.append(Verdict(order_key, state, not problems, reason))
    return AuditReport(tuple(verdicts))


def _processed_problems(net: NetEffects, price: Price | None) -> list[str]:
    problems = []
    if price is None:
        problems.append("Processed but the order is missing from the order database")
    if net.net_charges != 1:
        problems.append(f"Processed wants net charges 1, ledger nets {net.net_charges}")
    elif price is not None:
        if net.currencies != {price.currency}:
            problems.append(f"Processed wants a charge in {price.currency}, ledger charged in"
                            f" {'/'.join(sorted(net.currencies)) or 'no currency'}")
        elif net.net_amount != price.amount:
            problems.append(f"Processed wants net charged {price.amount} {price.currency}"
                            f" (totalPrice), ledger nets {net.net_money()}")
    if net.net_shipments != 1:
        problems.append(f"Processed wants net shipments 1, ledger nets {net.net_shipments}")
    return problems


def _undone_problems(state: ProcessState, net: NetEffects,
                     entries: Sequence[CompensationEntry]) -> list[str]:
    problems = []
    if net.net_charges > 0 or net.net_amount > 0:
        problems.append(f"charge kept: {state.value} wants net charge 0, ledger nets "
                        f"{net.net_charges} charge(s) of {net.net_money()}")
    elif net.net_charges < 0 or net.net_amount < 0:
        problems.append(f"refunded more than charged: {state.value} wants net charge 0, "
                        f"ledger nets {net.net_charges} charge(s) of {net.net_money()}")
    if net.net_shipments != 0:
        problems.append(f"shipment kept: {state.value} wants net shipments 0, ledger nets "
                        f"{net.net_shipments}")
    reserved = [e.details for e in entries if isinstance(e.details, ReservationDetails)]
    if reserved and not any(e.step is Step.RELEASE_INVENTORY for e in entries):
        problems.append(f"inventory not released: {state.value} but the compensation log "
                        f"has reservation {reserved[0].reservation_id} and no release")
    return problems


def audit_data_dir(data_dir: str | Path, ledger_path: str | Path,
                   order_keys: Iterable[str]) -> AuditReport:
    """Audit ``order_keys`` of a local run from its data folder and ledger file (S9, X4, X7).

    Side effects of other orders in the ledger are audited too.

    Raises
    ------
    ValueError
        If a side effect is malformed.
    """
    from demo.stock_audit import held_by_order, out_of_stock_orders, stock_problems
    from orders.stores import local_stores
    from sqlitebus import open_engine

    data_dir = Path(data_dir)
    stores = local_stores(data_dir)
    records: dict[str, StateRecord] = {}
    prices: dict[str, Price] = {}
    entries: dict[str, list[CompensationEntry]] = {}
    lines: dict[str, tuple[OrderLine, ...]] = {}
    try:
        for order_key in order_keys:
            record = stores.states.get(order_key)
            if record is None:
                continue
            records[order_key] = record
            order = stores.orders.get(order_key)
            if order is not None:
                prices[order_key] = Price(order.total_price, order.currency)
                lines[order_key] = order.lines
            entries[order_key] = stores.compensation.entries(order_key)
        items = list(stores.inventory.items())
    finally:
        stores.close()
    with open_engine(data_dir) as engine:
        bodies = [m.body for dead in (False, True)
                  for m in engine.peek(OPERATOR_ALERTS_QUEUE, 100_000, dead_letter=dead)]
    alerts = [OperatorAlert.model_validate(json.loads(b)) for b in bodies]
    with Ledger(ledger_path) as ledger:
        effects = ledger.effects_by_order()
    report = audit(records, prices, entries, alerts, effects, held_by_order(items))
    return AuditReport(report.verdicts, tuple(stock_problems(items, records, lines)),
                       out_of_stock_orders(records))
