import json

import pytest

from client.jsonl import load_jsonl
from orders.models.money import decimals_of


def _order_json(make_order, order_id):
    return make_order(order_id).model_dump(mode="json")


def _write(tmp_path, *lines):
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _load(path, **kwargs):
    invalid = []
    orders = list(load_jsonl(path, on_invalid=invalid.append, **kwargs))
    return orders, {i.where: (i.order_id, [(p.field, p.rule) for p in i.problems])
                    for i in invalid}


def test_order_and_submit_order_lines_are_both_read(tmp_path, make_order):
    submit = {"schemaVersion": 1, "clientId": "acme", "replyTo": "replies-acme",
              "order": _order_json(make_order, "B-1")}
    path = _write(tmp_path, json.dumps(_order_json(make_order, "A-1")), "", json.dumps(submit))
    orders, invalid = _load(path, client_id="acme", reply_to="replies-acme")
    assert invalid == {}
    assert orders == [make_order("A-1"), make_order("B-1")]


def test_each_bad_line_is_reported_with_line_number_field_and_rule(tmp_path, make_order):
    wrong_type = _order_json(make_order, "C-1")
    wrong_type["lines"][0]["quantity"] = "2"
    wrong_total = _order_json(make_order, "D-1")
    wrong_total["totalPrice"] = "20.00"
    path = _write(
        tmp_path,
        "{not json",
        "[1, 2]",
        json.dumps({"id": "x"}),
        json.dumps(wrong_type),
        json.dumps({"clientId": "acme", "replyTo": "replies-acme", "order": wrong_total}),
        json.dumps(_order_json(make_order, "E-1")),
    )
    orders, invalid = _load(path)
    assert [o.order_id for o in orders] == ["E-1"]
    assert invalid["orders.jsonl:1"][1][0][0] == "(line)"
    assert invalid["orders.jsonl:1"][1][0][1].startswith("must be JSON: Expecting property name")
    assert invalid["orders.jsonl:2"] == (None, [("(line)", "must be a JSON object, got list")])
    assert invalid["orders.jsonl:3"] == (None, [("(line)", (
        "must be a SubmitOrder object (with 'order') or an Order object (with 'orderId')"))])
    assert invalid["orders.jsonl:4"] == ("C-1", [("lines[0].quantity",
                                                  "Input should be a valid integer")])
    order_id, problems = invalid["orders.jsonl:5"]
    assert order_id == "D-1"
    assert problems[0][0] == "order.totalPrice"
    assert problems[0][1].startswith("does not match the lines")


def test_submit_order_for_another_client_is_invalid(tmp_path, make_order):
    line = {"clientId": "other", "replyTo": "replies-other",
            "order": _order_json(make_order, "F-1")}
    orders, invalid = _load(_write(tmp_path, json.dumps(line)),
                            client_id="acme", reply_to="replies-acme")
    assert orders == []
    assert invalid["orders.jsonl:1"] == ("F-1", [
        ("clientId", "must be 'acme' (the submitting client), got 'other'"),
        ("replyTo", "must be 'replies-acme' (the submitting client), got 'replies-other'"),
    ])


def test_repeated_order_id_is_invalid(tmp_path, make_order):
    line = json.dumps(_order_json(make_order, "G-1"))
    orders, invalid = _load(_write(tmp_path, line, line))
    assert [o.order_id for o in orders] == ["G-1"]
    assert invalid == {"orders.jsonl:2": (
        "G-1", [("orderId", "repeats the OrderID of line 1; OrderIDs must be unique")])}


def test_limit_counts_lines_read_valid_or_not(tmp_path, make_order):
    path = _write(tmp_path, "oops", json.dumps(_order_json(make_order, "H-1")),
                  json.dumps(_order_json(make_order, "H-2")))
    orders, invalid = _load(path, limit=2)
    assert [o.order_id for o in orders] == ["H-1"]
    assert list(invalid) == ["orders.jsonl:1"]


def test_negative_limit_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="limit: must be a non-negative integer"):
        next(load_jsonl(_write(tmp_path, "{}"), -1))


def test_a_total_finer_than_its_currency_is_reported_before_sending(tmp_path, make_order):
    yen = _order_json(make_order, "Y-1")
    yen["currency"] = "JPY"
    dinar = dict(_order_json(make_order, "B-2"), currency="BHD")
    path = _write(tmp_path, json.dumps(yen), json.dumps(dinar))
    orders, invalid = _load(path)
    # The service refuses what its currency cannot charge (ISO 4217 minor unit), so the
    # client drops it instead of sending it to be dead-lettered.
    total = make_order("Y-1").total_price
    assert invalid == {"orders.jsonl:1": ("Y-1", [(
        "totalPrice", "at most 0 decimal places, the ISO 4217 minor unit of the order's "
                      f"currency; got {decimals_of(total)}")])}
    assert [o.order_id for o in orders] == ["B-2"]


def test_a_json_error_at_the_end_of_a_long_line_names_its_real_column(tmp_path, make_order):
    complete = json.dumps(_order_json(make_order, "F-1"))
    cut = complete[:-1]  # the closing brace is missing: the error is at the end of the line
    path = _write(tmp_path, cut)
    _, invalid = _load(path)
    ((field, rule),) = invalid["orders.jsonl:1"][1]
    assert len(cut) > 200
    assert (field, rule) == ("(line)",
                             f"must be JSON: Expecting ',' delimiter at column {len(cut) + 1}")
