"""The dashboard shows an order's reservation and a SKU's stock, in a real browser.

One order whose second line runs out of stock: it is compensated, its first line's units
come back. The page shows the reservation line by line, and the SKU's stock with the
order's released holds gone from it, reached through the SKU's link and through the
header's form.
"""

from tests.e2e.harness import ProcessState, key, make_order
from tests.e2e.test_dashboard_browser import cells, go
from tests.support.browser import open_page


def test_the_reservation_and_the_stock_of_its_skus_are_shown(make_system):
    system = make_system()
    order = make_order(1)  # lines SKU-1-0 x1, SKU-1-1 x2
    first, second = order.lines
    system.services.stores.inventory.load({first.sku: 5, second.sku: 1})
    system.submit(order)
    system.run(60)
    assert system.state(order.order_id).process_state == ProcessState.COMPENSATED
    with open_page() as (page, dialogs):
        page.goto(f"{system.host.base_url}/api/ops/dashboard")
        page.wait_for_selector("body[data-state=ready]")
        page.uncheck("#auto-refresh")
        # The lines are Confidential: the reservation shows them with details=true (X10).
        go(page, f"order?client=acme&orderId={order.order_id}&details=true")
        assert [cells(r) for r in page.locator("#reservation tbody tr").all()] == [
            ["1", first.sku, "1", "1", "true", "5"], ["2", second.sku, "2", "0", "true", "1"]]
        before = int(page.evaluate("document.body.dataset.generation"))
        page.click(f'#reservation a:text-is("{first.sku}")')
        page.wait_for_function("n => Number(document.body.dataset.generation) > n && "
                               "document.body.dataset.state === 'ready'", arg=before)
        assert page.locator("#stock-title").inner_text() == f"Stock of {first.sku}"
        assert cells(page.locator('#stock-figures tr[data-field="available"]'))[1] == "5"
        # Released holds leave the item (docs/inventory.md): the stock lists none.
        assert key(order) not in page.locator("#stock-holds").inner_text()
        go(page, "")
        before = int(page.evaluate("document.body.dataset.generation"))
        page.fill("#stock-sku", second.sku)
        page.click("#stock-form button")
        page.wait_for_function("n => Number(document.body.dataset.generation) > n && "
                               "document.body.dataset.state === 'ready'", arg=before)
        assert cells(page.locator('#stock-figures tr[data-field="held"]'))[1] == "0"
        assert dialogs == []
