"""The dashboard reads each query parameter and body name once: a repeat is a 400, never a pick."""

from __future__ import annotations

import azure.functions as func
import pytest

from ops.dashboard.web import Problem, int_from, json_body, query, text_up_to

PARSERS = {"orderId": text_up_to(40), "client": text_up_to(20), "limit": int_from(1, 9)}


def request(url: str, *, params: dict[str, str] | None = None, body: bytes = b"",
            content_type: str = "application/json") -> func.HttpRequest:
    return func.HttpRequest(method="GET", url=url, params=params or {}, body=body,
                            headers={"content-type": content_type})


@pytest.mark.parametrize("url, name", [
    ("http://h/api?client=acme&client=globex&orderId=ORD-1", "client"),
    ("http://h/api?orderId=ORD-1&orderId=ORD-2", "orderId"),
    ("http://h/api?limit=1&limit=", "limit"),
    ("http://h/api?orderId=ORD-1&order%49d=ORD-2", "orderId"),  # the same name, escaped
])
def test_a_query_parameter_given_twice_is_refused_by_name(url: str, name: str) -> None:
    # What the host's params mapping holds is one of the two values; the URL has both.
    with pytest.raises(Problem) as refused:
        query(request(url, params={name: "ORD-2"}), PARSERS)
    assert refused.value.status == 400
    assert f"{name!r} is given more than once" in refused.value.reason


def test_parameters_are_read_from_the_url_as_sent() -> None:
    got = query(request("http://h/api?orderId=ORD%2B1&client=acme+co&limit=3"), PARSERS)
    assert got == {"orderId": "ORD+1", "client": "acme co", "limit": 3}


def test_a_request_without_a_query_in_its_url_uses_its_params() -> None:
    assert query(request("http://h/api", params={"limit": "4"}), PARSERS) == {"limit": 4}


@pytest.mark.parametrize("body, says", [
    (b'{"client": "acme", "orderId": "ORD-1", "orderId": "ORD-2"}', "duplicate name 'orderId'"),
    (b'{"reason": "\xff"}', "not UTF-8"),
    (b'{"a": NaN}', "NaN"),
    (b"[" * 40 + b"]" * 40, "nested deeper"),
])
def test_a_body_is_read_as_strict_json(body: bytes, says: str) -> None:
    with pytest.raises(Problem) as refused:
        json_body(request("http://h/api", body=body))
    assert refused.value.status == 400 and says in refused.value.reason


def test_a_strict_json_object_is_returned_as_sent() -> None:
    body = b'{"client": "acme", "orderId": "ORD-1", "reason": "caf\\u00e9"}'
    assert json_body(request("http://h/api", body=body)) == {
        "client": "acme", "orderId": "ORD-1", "reason": "caf\u00e9"}


@pytest.mark.parametrize("url", ["http://h/api?orderId=ORD-%FF", "http://h/api?order%C3Id=ORD-1"])
def test_a_query_that_is_not_percent_encoded_utf8_is_refused_not_replaced(url: str) -> None:
    # Decoded leniently, %FF became U+FFFD: a lookup of some other text than the one sent.
    with pytest.raises(Problem) as refused:
        query(request(url, params={"orderId": "ORD-\ufffd"}), PARSERS)
    assert refused.value.status == 400
    assert "not percent-encoded UTF-8" in refused.value.reason
