"""Real stock through the whole system: reserved by Processed orders, released otherwise.

Under the local host with the simulated services: an order whose second line asks for more
than its SKU has fails permanently, compensation gives its first line's units back, the
compensation log records what was released, and the client's status says why; an order
with enough stock is Processed and keeps exactly its lines' units.
"""

from orders.models import Step
from tests.e2e.harness import ProcessState, key, make_order


def test_out_of_stock_on_line_2_releases_line_1_and_tells_the_client_why(make_system):
    system = make_system()
    served, short = make_order(1), make_order(2)
    inventory = system.services.stores.inventory
    inventory.load({**{line.sku: 10 for line in served.lines},
                    short.lines[0].sku: 5, short.lines[1].sku: 1})
    system.submit(served)
    system.submit(short)
    system.run(60)
    assert system.state(served.order_id).process_state == ProcessState.PROCESSED
    assert system.state(short.order_id).process_state == ProcessState.COMPENSATED
    assert [inventory.get(line.sku).available for line in served.lines] == [
        10 - line.quantity for line in served.lines]
    assert [inventory.get(line.sku).available for line in short.lines] == [5, 1]
    assert all(item.balanced for item in inventory.items())
    (told,) = [r for r in system.replies() if r["orderId"] == short.order_id
               and r["status"] == "Compensated"]
    assert (f"out of stock: SKU {short.lines[1].sku} (line 2) requested 2, more than the "
            "units available" in told["reason"])
    assert "available 1" not in told["reason"]  # no free stock probing (issue 41)
    log = system.services.stores.compensation.entries(key(short))
    (release,) = [e for e in log if e.step is Step.RELEASE_INVENTORY]
    assert [(line.sku, line.quantity) for line in release.details.released] == [
        (short.lines[0].sku, 1)]
