"""The ledger audit on hand-made ledgers and states: one test per rule, balanced and not."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from demo.audit import NetEffects, Price, audit, audit_data_dir
from orders.models import CompensationEntry, Order, ProcessState, StateRecord
from orders.models.messages import OperatorAlert
from simulator.ledger import Answer, Ledger, SideEffect

NOW = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
PRICE = Price(Decimal("172.50"), "USD")


def record(order_key: str, state: ProcessState) -> StateRecord:
    owner = None if state is ProcessState.PENDING else f"{order_key}:1"
    return StateRecord(order_key=order_key, process_state=state, locked_by=owner, attempt=1,
                       reply_to="replies-acme", created_at=NOW, updated_at=NOW)


def effect(order_key: str, kind: str, amount: str | None = None, ref: str | None = None,
           n: int = 1) -> SideEffect:
    service = "payment" if kind in ("charge", "refund") else "shipping"
    return SideEffect(service, kind, order_key, f"{order_key}:{kind}:{n}", amount,
                      "USD" if amount else None, f"{kind}_{order_key}_{n}", ref, NOW)


def charge(order_key: str, amount: str = "172.50", n: int = 1) -> SideEffect:
    return effect(order_key, "charge", amount, n=n)


def refund(order_key: str, amount: str = "172.50") -> SideEffect:
    return effect(order_key, "refund", amount, ref=f"charge_{order_key}_1")


def ship(order_key: str) -> SideEffect:
    return effect(order_key, "ship")


def cancel(order_key: str) -> SideEffect:
    return effect(order_key, "cancel", ref=f"ship_{order_key}_1")


def logged(order_key: str, *steps: str) -> list[CompensationEntry]:
    details = {
        "reserve_inventory": {"step": "reserve_inventory", "reservationId": f"RES-{order_key}",
                              "lines": [{"sku": "SKU-A", "quantity": 2}]},
        "charge": {"step": "charge", "paymentId": f"charge_{order_key}_1", "amount": "172.50",
                   "currency": "USD"},
        "release_inventory": {"step": "release_inventory", "reservationId": f"RES-{order_key}"},
        "refund": {"step": "refund", "outcome": "Undone", "refundId": f"refund_{order_key}_1",
                   "amount": "172.50", "currency": "USD"},
    }
    return [CompensationEntry.new(order_key, details[s], instance_id=f"{order_key}:1",
                                  workflow_version=1, now=NOW).model_copy(update={"seq": i})
            for i, s in enumerate(steps, start=1)]


def alert(order_key: str, kind: str = "CompensationFailed") -> OperatorAlert:
    return OperatorAlert(kind=kind, reason="refund refused", at=NOW, order_key=order_key,
                         instance_id=f"{order_key}:comp:1")


def run(states: dict[str, ProcessState], effects: list[SideEffect], entries=None,
        alerts=()):
    by_order: dict[str, list[SideEffect]] = {}
    for e in effects:
        by_order.setdefault(e.order_key, []).append(e)
    return audit({o: record(o, s) for o, s in states.items()},
                 {o: PRICE for o in states}, entries or {}, alerts, by_order)


# -- Processed: one net charge of totalPrice, one net shipment ---------------------------

def test_processed_with_one_charge_of_the_total_and_one_shipment_is_balanced():
    report = run({"A": ProcessState.PROCESSED}, [charge("A"), ship("A")])
    assert report.verdict("A").balanced and report.verdict("A").reason is None
    assert report.unbalanced == []


def test_processed_charged_twice_and_refunded_once_nets_one_charge_and_is_balanced():
    report = run({"A": ProcessState.PROCESSED},
                 [charge("A"), charge("A", n=2), refund("A"), ship("A")])
    assert report.verdict("A").balanced


def test_processed_charged_twice_is_unbalanced_with_the_ledger_in_the_reason():
    report = run({"A": ProcessState.PROCESSED}, [charge("A"), charge("A", n=2), ship("A")])
    (v,) = report.unbalanced
    assert (v.order_key, v.state, v.balanced) == ("A", ProcessState.PROCESSED, False)
    assert v.reason == ("Processed wants net charges 1, ledger nets 2 [ledger: charges 2 "
                        "(345.00 USD), refunds 0 (0 USD), ships 1, cancels 0]")


@pytest.mark.parametrize(("effects", "reason"), [
    pytest.param([charge("A", "17.25"), ship("A")],
                 "Processed wants net charged 172.50 USD (totalPrice), ledger nets 17.25 USD",
                 id="charged-a-wrong-amount"),
    pytest.param([charge("A")], "Processed wants net shipments 1, ledger nets 0",
                 id="without-a-shipment"),
    pytest.param([charge("A"), refund("A"), ship("A")],
                 "Processed wants net charges 1, ledger nets 0", id="with-a-refunded-charge"),
])
def test_processed_order_is_unbalanced_with_the_rule_it_breaks(effects, reason):
    report = run({"A": ProcessState.PROCESSED}, effects)
    assert report.verdict("A").reason.startswith(reason)


def test_processed_whose_shipment_was_cancelled_is_unbalanced():
    report = run({"A": ProcessState.PROCESSED}, [charge("A"), ship("A"), cancel("A")])
    assert not report.verdict("A").balanced
    assert "ledger nets 0" in report.verdict("A").reason


def test_processed_missing_from_the_order_database_is_unbalanced():
    report = audit({"A": record("A", ProcessState.PROCESSED)}, {}, {}, [],
                   {"A": [charge("A"), ship("A")]})
    assert report.verdict("A").reason.startswith(
        "Processed but the order is missing from the order database")


# -- Error and Compensated: nothing charged or shipped net, inventory released ----------

@pytest.mark.parametrize("state", [ProcessState.COMPENSATED, ProcessState.ERROR])
def test_undone_order_refunded_cancelled_and_released_is_balanced(state):
    report = run({"A": state}, [charge("A"), ship("A"), refund("A"), cancel("A")],
                 {"A": logged("A", "reserve_inventory", "charge", "refund",
                              "release_inventory")})
    assert report.verdict("A").balanced


def test_compensated_order_never_charged_with_inventory_released_is_balanced():
    report = run({"A": ProcessState.COMPENSATED}, [],
                 {"A": logged("A", "reserve_inventory", "release_inventory")})
    assert report.verdict("A").balanced


def test_error_order_with_nothing_logged_and_nothing_in_the_ledger_is_balanced():
    report = run({"A": ProcessState.ERROR}, [], {})
    assert report.verdict("A").balanced


def test_compensated_order_with_a_charge_and_no_refund_is_unbalanced_charge_kept():
    report = run({"A": ProcessState.COMPENSATED}, [charge("A")],
                 {"A": logged("A", "reserve_inventory", "release_inventory")})
    (v,) = report.unbalanced
    assert v.line() == (
        "unbalanced A (Compensated): charge kept: Compensated wants net charge 0, ledger "
        "nets 1 charge(s) of 172.50 USD [ledger: charges 1 (172.50 USD), refunds 0 (0 USD), "
        "ships 0, cancels 0]")


@pytest.mark.parametrize(("state", "effects", "steps", "reason"), [
    pytest.param(ProcessState.ERROR, [ship("A")], (),
                 "shipment kept: Error wants net shipments 0, ledger nets 1",
                 id="error-with-a-shipment-not-cancelled"),
    pytest.param(ProcessState.COMPENSATED, [refund("A")],
                 ("reserve_inventory", "release_inventory"),
                 "refunded more than charged: Compensated wants net charge 0, ledger nets -1 "
                 "charge(s) of -172.50 USD", id="compensated-refunded-without-a-charge"),
    pytest.param(ProcessState.COMPENSATED, [charge("A"), refund("A")],
                 ("reserve_inventory", "charge", "refund"),
                 "inventory not released: Compensated but the compensation log has reservation "
                 "RES-A and no release", id="compensated-whose-reservation-is-not-released"),
])
def test_undone_order_is_unbalanced_with_the_rule_it_breaks(state, effects, steps, reason):
    report = run({"A": state}, effects, {"A": logged("A", *steps)} if steps else None)
    assert report.verdict("A").reason.startswith(reason)


# -- CompensationFailed: balanced only if an operator alert names it ---------------------

def test_compensation_failed_named_in_a_compensation_failed_alert_is_balanced():
    report = run({"A": ProcessState.COMPENSATION_FAILED}, [charge("A")],
                 {"A": logged("A", "reserve_inventory", "charge")}, [alert("A")])
    assert report.verdict("A").balanced


def test_compensation_failed_without_its_alert_is_unbalanced():
    report = run({"A": ProcessState.COMPENSATION_FAILED, "B": ProcessState.COMPENSATION_FAILED},
                 [charge("A")], {}, [alert("B"), alert("A", kind="OrderError")])
    assert [v.order_key for v in report.unbalanced] == ["A"]
    assert report.verdict("A").reason == (
        "CompensationFailed but no CompensationFailed operator alert names it [ledger: "
        "charges 1 (172.50 USD), refunds 0 (0 USD), ships 0, cancels 0]")
    assert report.verdict("B").balanced


# -- what is not audited, and side effects nobody owns ------------------------------------

@pytest.mark.parametrize("state", [ProcessState.PENDING, ProcessState.PROCESSING,
                                   ProcessState.COMPENSATING])
def test_non_terminal_orders_are_not_audited(state):
    report = audit({"A": record("A", state)}, {"A": PRICE}, {}, [], {"A": [charge("A")]})
    assert report.verdicts == ()
    with pytest.raises(KeyError):
        report.verdict("A")


def test_side_effects_of_an_order_without_a_state_record_are_unbalanced():
    report = audit({}, {}, {}, [], {"Z": [charge("Z")]})
    (v,) = report.unbalanced
    assert v.line().startswith(
        "unbalanced Z (no state record): side effects for an order without a state record")


def test_net_effects_refuse_an_unknown_kind():
    with pytest.raises(ValueError, match="kind: must be charge, refund, ship or cancel"):
        NetEffects.of([effect("A", "teleport")])


# -- from the files of a run --------------------------------------------------------------

def test_audit_data_dir_reads_states_log_alerts_and_ledger(tmp_path):
    from orders.messaging import create_sender
    from orders.notify import send_alert
    from orders.stores import create_stores
    from tests.e2e.harness import make_order

    kept, failed = make_order(1), make_order(2)
    stores = create_stores("sqlite", orders_path=tmp_path / "orders.sqlite",
                           state_path=tmp_path / "state.sqlite")
    for order, state in ((kept, ProcessState.COMPENSATED),
                         (failed, ProcessState.COMPENSATION_FAILED)):
        stores.orders.create_if_absent(Order.of_client(order, order.order_id))  # legacy key
        new = stores.states.create_if_absent(StateRecord.new(order.order_id, "replies-acme",
                                                             NOW))
        stores.states.replace(new.record.model_copy(update={
            "process_state": state, "locked_by": f"{order.order_id}:comp:1"}))
    for entry in logged(kept.order_id, "reserve_inventory", "release_inventory"):
        stores.compensation.record(entry.model_copy(update={"seq": None}))
    stores.close()
    sender = create_sender("local", data_dir=tmp_path)
    send_alert(sender, alert(failed.order_id), message_id="CompensationFailed:x")
    sender.close()
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        for order in (kept, failed):
            effect = SideEffect("payment", "charge", order.order_id, f"{order.order_id}:charge",
                                str(order.total_price), "USD", f"pay_{order.order_id}", None,
                                NOW)
            ledger.run_idempotent(service="payment", key=effect.idempotency_key,
                                  fingerprint="f", now=NOW,
                                  operation=lambda conn, e=effect: Answer(201, {}, e))

    report = audit_data_dir(tmp_path, tmp_path / "ledger.sqlite",
                            [kept.order_id, failed.order_id])

    assert [(v.order_key, v.state, v.balanced) for v in report.verdicts] == [
        (kept.order_id, ProcessState.COMPENSATED, False),
        (failed.order_id, ProcessState.COMPENSATION_FAILED, True)]
    assert report.verdict(kept.order_id).reason.startswith(
        f"charge kept: Compensated wants net charge 0, ledger nets 1 charge(s) of "
        f"{kept.total_price} USD")


# -- orders are keyed per client: the same OrderID from two clients is two orders --------

def test_the_same_order_id_of_two_clients_is_audited_as_two_orders():
    a, b = "shop-a~TPCH-7", "shop-b~TPCH-7"
    records = {k: StateRecord(order_key=k, client_id=k.split("~")[0], client_order_id="TPCH-7",
                              process_state=ProcessState.PROCESSED, locked_by=f"{k}:1",
                              attempt=1, reply_to=f"replies-{k.split('~')[0]}",
                              created_at=NOW, updated_at=NOW) for k in (a, b)}
    effects = {a: [charge(a), ship(a)], b: [ship(b)]}  # shop-b's order was never charged
    report = audit(records, {a: PRICE, b: PRICE}, {}, [], effects)
    assert report.verdict(a).balanced
    assert [v.order_key for v in report.unbalanced] == [b]
    assert report.verdict(b).reason.startswith("Processed wants net charges 1, ledger nets 0")
