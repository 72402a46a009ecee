"""The stock audit on hand-made inventories and states: one test per rule, balanced and not."""

from datetime import UTC, datetime
from decimal import Decimal

from demo.audit import audit
from demo.stock_audit import held_by_order, out_of_stock_orders, stock_problems
from orders.models import OrderLine, ProcessState, StateRecord
from orders.models.inventory import Hold, StockItem

NOW = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


def record(order_key, state, reason=None):
    return StateRecord(order_key=order_key, process_state=state, locked_by=f"{order_key}:1",
                       attempt=1, reply_to="replies-acme", created_at=NOW, updated_at=NOW,
                       failure_reason=reason)


def lines(*pairs):
    return tuple(OrderLine(sku=sku, quantity=n, unit_price=Decimal(1)) for sku, n in pairs)


def item(sku, loaded, available, holds, restocked=0):
    return StockItem(sku=sku, loaded=loaded, available=available, restocked=restocked,
                     holds=holds)


def test_processed_lines_taken_and_compensated_lines_released_balance():
    records = {"A": record("A", ProcessState.PROCESSED),
               "B": record("B", ProcessState.COMPENSATED)}
    stock = [item("P1-S1", 10, 4, {"A#0": Hold(quantity=6),
                                   "B#0": Hold(quantity=3, released=True)}),
             item("P2-S2", 5, 6, {"A#1": Hold(quantity=1)}, restocked=2)]
    assert stock_problems(stock, records, {"A": lines(("P1-S1", 6), ("P2-S2", 1)),
                                           "B": lines(("P1-S1", 3))}) == []


def test_stock_taken_for_no_processed_order_is_unbalanced():
    # Units gone from the stock that no Processed order's line accounts for (a leak).
    records = {"A": record("A", ProcessState.PROCESSED)}
    stock = [item("P1-S1", 10, 3, {"A#0": Hold(quantity=6)})]
    (problem,) = stock_problems(stock, records, {"A": lines(("P1-S1", 6))})
    assert problem.startswith("stock unbalanced P1-S1: loaded 10 + restocked 0 - available 3"
                              " = 7 taken; the Processed orders' lines want 6")


def test_a_compensated_order_still_holding_is_unbalanced_in_both_audits():
    records = {"B": record("B", ProcessState.COMPENSATED)}
    stock = [item("P1-S1", 10, 7, {"B#0": Hold(quantity=3)})]
    assert len(stock_problems(stock, records, {"B": lines(("P1-S1", 3))})) == 1
    report = audit(records, {}, {}, [], {}, held_by_order(stock))
    assert report.verdict("B").reason.startswith(
        "inventory held: Compensated but its lines hold 3 of P1-S1")


def test_what_a_compensation_failed_order_holds_is_the_operators():
    records = {"C": record("C", ProcessState.COMPENSATION_FAILED)}
    stock = [item("P1-S1", 10, 8, {"C#0": Hold(quantity=2)})]
    assert stock_problems(stock, records, {"C": lines(("P1-S1", 2))}) == []


def test_out_of_stock_orders_are_counted_from_their_failure_reason():
    why = ("attempt X:1: reserve_inventory failed permanently: out of stock: SKU P1-S1 "
           "(line 1) requested 4, more than the units available")
    records = {"A": record("A", ProcessState.COMPENSATED, why),
               "B": record("B", ProcessState.COMPENSATED, "charge failed permanently: no")}
    assert out_of_stock_orders(records) == 1


def test_the_summary_line_shows_the_stock_and_an_unbalanced_sku_fails_the_run():
    from collections import Counter

    from demo.audit import AuditReport
    from demo.summary import Records, summarize

    states = {"A": record("A", ProcessState.PROCESSED)}
    balanced = Records(states, {}, AuditReport((), (), out_of_stock=2))
    unbalanced = Records(states, {}, AuditReport((), ("stock unbalanced P1-S1: ...",)))
    good = summarize(balanced, ["A"], set(), 1.0)
    bad = summarize(unbalanced, ["A"], set(), 1.0)
    assert " stock_unbalanced=0 out_of_stock=2 " in good.line() and good.ok
    assert " stock_unbalanced=1 out_of_stock=0 " in bad.line() and not bad.ok
    assert bad.unbalanced_lines() == ["stock unbalanced P1-S1: ..."]
    assert good.states == Counter({ProcessState.PROCESSED: 1})
