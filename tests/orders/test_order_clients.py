"""ORDER_CLIENTS: the client applications, read at import to register their submissions (X10)."""

import pytest

from orders.settings import Settings, SettingsError, order_clients


def test_the_setting_lists_client_ids_in_order():
    assert order_clients({"ORDER_CLIENTS": " acme, globex ,big-shop,"}) == (
        "acme", "globex", "big-shop")
    assert order_clients({"ORDER_CLIENTS": ""}) == order_clients({}) == ()
    settings = Settings(DEVHOST_DATA_DIR="x", ORDER_CLIENTS="acme,globex")
    assert settings.order_clients == ("acme", "globex")


@pytest.mark.parametrize(("value", "rule"), [
    ("Acme", "must be 1 to 20 lower-case letters, digits or '-'.*'Acme'"),
    ("acme,a" + "b" * 20, "must be 1 to 20"),
    ("acme,-x", "starting and ending with a letter or digit.*'-x'"),
    ("acme,shop_1", "got 'shop_1'"),
    ("acme,globex,acme", "'acme' is listed twice"),
])
def test_a_bad_client_list_is_refused_naming_the_setting_and_rule(value, rule):
    with pytest.raises(SettingsError, match=f"ORDER_CLIENTS: client id .*{rule}"):
        order_clients({"ORDER_CLIENTS": value})
    with pytest.raises(ValueError, match=f"ORDER_CLIENTS: client id .*{rule}"):
        Settings(DEVHOST_DATA_DIR="x", ORDER_CLIENTS=value)
