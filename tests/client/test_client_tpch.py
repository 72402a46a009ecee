import csv
import json
import math
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from client import tpch
from client.tpch import TpchFormatError, generate, load_orders
from orders.models import TOTAL_TOLERANCE_PER_LINE

FIRST = 500


def _raw_first_orders(directory, count):
    """Independent join of the raw CSV files: {orderkey: (order row, [lineitem rows])}."""
    with open(directory / "orders.csv", newline="") as handle:
        orders = [row for _, row in zip(range(count), csv.DictReader(handle), strict=False)]
    keys = {int(row["o_orderkey"]) for row in orders}
    lines = defaultdict(list)
    with open(directory / "lineitem.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if int(row["l_orderkey"]) in keys:
                lines[int(row["l_orderkey"])].append(row)
    return {int(row["o_orderkey"]): (row, lines[int(row["o_orderkey"])]) for row in orders}


def _unrounded_total(line_rows):
    return sum(Decimal(r["l_extendedprice"]) * (1 + Decimal(r["l_tax"]))
               * (1 - Decimal(r["l_discount"])) for r in line_rows)


# -- generation ---------------------------------------------------------------------------

def test_generate_writes_both_tables_at_the_scale_factor(tpch_dir):
    with open(tpch_dir / "orders.csv", newline="") as handle:
        assert sum(1 for _ in csv.DictReader(handle)) == 15_000
    marker = json.loads((tpch_dir / tpch.MARKER_FILE).read_text())
    assert marker["scaleFactor"] == 0.01
    assert marker["generator"] == f"tpchgen-cli {tpch.TPCHGEN_VERSION}"
    assert not [p for p in tpch_dir.iterdir() if p.name.startswith(".tpchgen-")]


def test_generate_skips_when_the_files_exist(tpch_dir):
    before = (tpch_dir / "orders.csv").stat().st_mtime_ns
    # A missing executable proves that nothing is run.
    assert generate(0.01, tpch_dir, executable="/nonexistent/tpchgen-cli") == tpch_dir
    assert (tpch_dir / "orders.csv").stat().st_mtime_ns == before


def test_generate_refuses_a_folder_of_another_scale_factor(tpch_dir):
    with pytest.raises(ValueError, match=r"out_dir: .* scale factor 0.01, not 0.02"):
        generate(0.02, tpch_dir)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, True, "0.01"])
def test_generate_rejects_a_scale_factor_that_is_not_positive(tmp_path, bad):
    with pytest.raises(ValueError, match="scale_factor: must be a positive number"):
        generate(bad, tmp_path)


def test_generate_reports_a_failing_generator(tmp_path):
    with pytest.raises(RuntimeError, match="tpchgen-cli exited with"):
        generate(0.01, tmp_path / "out", executable="false")
    assert not (tmp_path / "out" / "orders.csv").exists()


# -- join and validation on real TPC-H data ----------------------------------------------

def test_tpchgen_writes_both_tables_sorted_by_order_key(tpch_dir):
    for name, column in (("orders.csv", "o_orderkey"), ("lineitem.csv", "l_orderkey")):
        with open(tpch_dir / name, newline="") as handle:
            keys = [int(row[column]) for row in csv.DictReader(handle)]
        assert keys == sorted(keys), name


def test_tpch_totals_are_truncated_cents_per_line(tpch_dir):
    # What tpchgen (like dbgen) computes: per line, truncate to cents after the discount
    # and again after the tax. This is why the unrounded total can exceed O_TOTALPRICE
    # by up to about 0.021 per line.
    def cents(text):
        return int(Decimal(text) * 100)

    for order_row, line_rows in _raw_first_orders(tpch_dir, FIRST).values():
        total = sum(cents(r["l_extendedprice"]) * (100 - cents(r["l_discount"])) // 100
                    * (100 + cents(r["l_tax"])) // 100 for r in line_rows)
        assert total == cents(order_row["o_totalprice"]), order_row["o_orderkey"]


def test_first_orders_are_joined_with_their_lineitems(tpch_dir):
    raw = _raw_first_orders(tpch_dir, FIRST)
    invalid = []
    orders = list(load_orders(tpch_dir, FIRST, on_invalid=invalid.append))
    assert len(orders) + len(invalid) == FIRST
    assert [o.order_id for o in orders] == sorted(
        (o.order_id for o in orders), key=lambda i: int(i.removeprefix("TPCH-")))
    for order in orders:
        order_row, line_rows = raw[int(order.order_id.removeprefix("TPCH-"))]
        assert order.customer_id == f"CUST-{order_row['o_custkey']}"
        assert order.currency == "USD"
        assert order.total_price == Decimal(order_row["o_totalprice"])
        day = datetime.strptime(order_row["o_orderdate"], "%Y-%m-%d").replace(tzinfo=UTC)
        assert order.created_at == day
        assert len(order.lines) == len(line_rows)
        for line, row in zip(order.lines, line_rows, strict=True):
            assert line.sku == f"P{row['l_partkey']}-S{row['l_suppkey']}"
            assert line.quantity == int(row["l_quantity"])
            assert line.extended_price == Decimal(row["l_extendedprice"])
            assert line.unit_price == line.unit_price.quantize(Decimal("0.01"))
            assert (line.discount, line.tax) == (Decimal(row["l_discount"]),
                                                 Decimal(row["l_tax"]))
        assert order.computed_total == _unrounded_total(line_rows)


def test_loader_verdict_matches_an_independent_recomputation(tpch_dir):
    raw = _raw_first_orders(tpch_dir, FIRST)
    invalid = []
    valid = {o.order_id for o in load_orders(tpch_dir, FIRST, on_invalid=invalid.append)}
    expected_invalid = {
        f"TPCH-{key}" for key, (order_row, line_rows) in raw.items()
        if abs(Decimal(order_row["o_totalprice"]) - _unrounded_total(line_rows))
        > TOTAL_TOLERANCE_PER_LINE * len(line_rows)
    }
    assert {i.order_id for i in invalid} == expected_invalid
    assert valid == {f"TPCH-{key}" for key in raw} - expected_invalid
    for item in invalid:
        assert item.where == f"TPC-H o_orderkey={item.order_id.removeprefix('TPCH-')}"
        assert [p.field for p in item.problems] == ["totalPrice"]
        assert "does not match the lines" in item.problems[0].rule


def test_first_500_tpch_orders_are_all_valid(tpch_dir):
    invalid = []
    orders = list(load_orders(tpch_dir, FIRST, on_invalid=invalid.append))
    assert invalid == []
    assert len(orders) == FIRST


# -- streaming and format errors on small hand-made files --------------------------------

ORDER_HEADER = "o_orderkey,o_custkey,o_orderstatus,o_totalprice,o_orderdate,o_comment"
LINE_HEADER = ("l_orderkey,l_partkey,l_suppkey,l_linenumber,l_quantity,l_extendedprice,"
               "l_discount,l_tax")


def _write(directory, orders, lines, order_header=ORDER_HEADER):
    (directory / "orders.csv").write_text("\n".join([order_header, *orders]) + "\n")
    (directory / "lineitem.csv").write_text("\n".join([LINE_HEADER, *lines]) + "\n")
    return directory


# 2 x 10.00, 10 % discount, 5 % tax -> 18.90
def _order(key, total="18.90", day="1996-01-02"):
    return f'{key},7,O,{total},{day},"a, comment"'


def _line(key, number=1, quantity="2", extended="20.00"):
    return f"{key},11,22,{number},{quantity},{extended},0.10,0.05"


def test_hand_made_orders_map_field_by_field(tmp_path):
    _write(tmp_path, [_order(1, total="37.80"), _order(2)],
           [_line(1), _line(1, 2), _line(2)])
    first, second = load_orders(tmp_path)
    assert first.order_id == "TPCH-1" and second.order_id == "TPCH-2"
    assert [line.sku for line in first.lines] == ["P11-S22", "P11-S22"]
    assert first.lines[0].unit_price == Decimal("10.00")
    assert first.created_at == datetime(1996, 1, 2, tzinfo=UTC)


def test_limit_stops_reading_before_later_rows(tmp_path):
    # The orphan line item of order 9 lies beyond the limit: streaming never reaches it.
    _write(tmp_path, [_order(1), _order(2), _order(3)], [_line(1), _line(2), _line(9)])
    assert [o.order_id for o in load_orders(tmp_path, 2)] == ["TPCH-1", "TPCH-2"]
    with pytest.raises(TpchFormatError, match="lineitem.csv line 4: l_orderkey 9"):
        list(load_orders(tmp_path))


def test_unsorted_lineitem_is_a_format_error(tmp_path):
    _write(tmp_path, [_order(1), _order(2), _order(3)], [_line(2), _line(1), _line(3)])
    with pytest.raises(TpchFormatError, match="not sorted by order key"):
        list(load_orders(tmp_path))


def test_descending_order_keys_are_a_format_error(tmp_path):
    _write(tmp_path, [_order(2), _order(1)], [_line(2)])
    with pytest.raises(TpchFormatError, match="o_orderkey 1 does not ascend"):
        list(load_orders(tmp_path))


def test_missing_column_is_a_format_error(tmp_path):
    _write(tmp_path, ["1,7,O,18.90,x"], [_line(1)],
           order_header="o_orderkey,o_custkey,o_orderstatus,o_totalprice,o_comment")
    with pytest.raises(TpchFormatError, match=r"orders.csv: missing column\(s\) \['o_orderdate'\]"):
        list(load_orders(tmp_path))


def test_invalid_orders_are_reported_with_field_and_rule(tmp_path):
    _write(tmp_path,
           [_order(1), _order(2), _order(3), _order(4, total="99.00"), _order(5, day="x"),
            _order(6)],
           [_line(2, quantity="2.5"), _line(3, quantity="3", extended="10.00"), _line(4),
            _line(5), _line(6)])
    invalid = []
    orders = list(load_orders(tmp_path, on_invalid=invalid.append))
    assert [o.order_id for o in orders] == ["TPCH-6"]
    problems = {i.order_id: [(p.field, p.rule) for p in i.problems] for i in invalid}
    assert problems["TPCH-1"][0][0] == "lines"  # an order without line items
    assert "at least 1 item" in problems["TPCH-1"][0][1]
    assert problems["TPCH-2"][0][0] == "lines[0].quantity"
    assert problems["TPCH-3"] == [(
        "lines[0].unitPrice",
        "l_extendedprice / l_quantity = 10.00 / 3 is not exact to 4 decimal places; the Order "
        "contract derives the extended price as quantity * unitPrice, so this line cannot be "
        "carried exactly")]
    assert problems["TPCH-4"][0][0] == "totalPrice"
    assert problems["TPCH-5"] == [("o_orderdate", "must be a date YYYY-MM-DD, got 'x'")]


def test_negative_limit_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="limit: must be a non-negative integer"):
        next(load_orders(tmp_path, -1))


# -- stock from PARTSUPP ------------------------------------------------------------------

def test_stock_is_partsupp_availqty_scaled_for_the_skus_of_the_orders(tpch_dir):
    with open(tpch_dir / "partsupp.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8_000
    first = rows[0]
    sku = f"P{first['ps_partkey']}-S{first['ps_suppkey']}"
    orders = list(load_orders(tpch_dir, 1000))
    skus = {line.sku for order in orders for line in order.lines}
    stock = tpch.load_stock(tpch_dir, skus)
    assert set(stock) == skus  # every line's (partkey, suppkey) is a PARTSUPP row
    assert tpch.load_stock(tpch_dir, [sku], scale=0.5) == {
        sku: int(first["ps_availqty"]) // 2}
    # Most orders can be served from it, and a few SKUs run out (the demo's premise).
    short = [o for o in orders if any(line.quantity > stock[line.sku] for line in o.lines)]
    assert 0 < len(short) < 100


def test_stock_scale_is_checked(tmp_path):
    with pytest.raises(ValueError, match="scale: must be a number from 0 to 1"):
        tpch.load_stock(tmp_path, scale=2)


def test_every_tpch_order_prices_exactly_at_the_parts_retail_price(tpch_dir):
    """The demo's orders and its catalogue agree: l_extendedprice = quantity x p_retailprice."""
    from orders.models.inventory import StockItem
    from orders.pricing import price_problem

    orders = list(tpch.load_orders(tpch_dir, limit=2000))
    skus = {line.sku for order in orders for line in order.lines}
    prices = tpch.load_prices(tpch_dir, skus)
    assert set(prices) == skus
    items = {sku: StockItem(sku=sku, available=1, loaded=1, unit_price=price)
             for sku, price in prices.items()}
    assert [o.order_id for o in orders if price_problem(o, items.get) is not None] == []
